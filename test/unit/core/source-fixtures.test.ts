/**
 * The source fixtures are written to their senders' published shapes, and each names the
 * document it follows (test/fixtures/sources/README.md). This holds the list and the README
 * together, and reads every fixture through its parser the way the webhook would.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseGrafanaPayload } from '../../../src/core/grafana.js';
import { parsePagerDutyPayload } from '../../../src/core/pagerduty.js';

const DIR = new URL('../../fixtures/sources/', import.meta.url);
const readme = readFileSync(new URL('README.md', DIR), 'utf8');
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
const json = (name: string): unknown => JSON.parse(readFileSync(new URL(name, DIR), 'utf8'));

describe('test/fixtures/sources', () => {
  it.each(files)('%s is listed in the README under the document it follows', (name) => {
    expect(readme).toContain(`| \`${name}\` |`);
  });

  it('names a document for each sender', () => {
    expect(readme).toContain('grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/');
    expect(readme).toContain('#test-a-contact-point');
    expect(readme).toContain('PagerDuty/developer-docs');
  });

  it.each(files.filter((f) => f.startsWith('grafana-')))('%s reads as Grafana sends it', (name) => {
    const batch = parseGrafanaPayload(json(name));
    if (name.startsWith('grafana-test-')) expect(batch.test).toBeDefined();
    else {
      expect(batch.incidents.length).toBeGreaterThan(0);
      expect(batch.skipped).toEqual([]);
      // Grafana's own externalURL is Grafana, never an Alertmanager to silence in.
      for (const i of batch.incidents) expect(i.alertmanagerUrl).toBeUndefined();
    }
  });

  it.each(files.filter((f) => f.startsWith('pagerduty-')))('%s reads as PagerDuty sends it', (name) => {
    const p = parsePagerDutyPayload(json(name));
    const kinds: Record<string, string> = {
      'pagerduty-incident-triggered.json': 'incident',
      'pagerduty-incident-resolved.json': 'incident',
      'pagerduty-incident-acknowledged.json': 'ack',
      'pagerduty-incident-annotated.json': 'note',
    };
    expect(p.kind).toBe(kinds[name] ?? 'ignored');
    expect(p.eventId).toMatch(/^[0-9A-Z]{26}$/);
    if (p.kind === 'incident') {
      expect(p.incident.links).toEqual([{ label: 'source', url: 'https://acme.pagerduty.com/incidents/PGR0VU2' }]);
      expect(p.incident.labels['pagerduty_service']).toBe('PF9KMXH');
    } else if (p.kind === 'ack' || p.kind === 'note') {
      expect(p.incidentId).toBe('PGR0VU2');
      expect(p.agent?.name).toBeTruthy();
    } else expect(p.reason).toContain(p.eventType);
  });
});
