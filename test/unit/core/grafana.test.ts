import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/sources/${name}`, import.meta.url), 'utf8'));

describe('Grafana unified alerting payloads through the Alertmanager parser', () => {
  it('maps a firing alert, tagged as grafana, with no Alertmanager URL taken from Grafana', () => {
    const batch = parseAlertmanagerPayload(fixture('grafana-firing.json'), { source: 'grafana' });
    expect(batch.incidents).toHaveLength(1);
    const i = batch.incidents[0]!;
    expect(i).toMatchObject({
      source: 'grafana',
      status: 'firing',
      fingerprint: 'b3c1e2f4a5d6c7e8',
      alertname: 'KubePodCrashLooping',
      severity: 'critical',
      runbookUrl: 'https://runbooks.example.org/KubePodCrashLooping',
      workload: { namespace: 'payments' },
    });
    expect(i.endsAt).toBeUndefined();
    expect(i.alertmanagerUrl).toBeUndefined();
  });

  it('pairs the resolved alert with the firing one', () => {
    const firing = parseAlertmanagerPayload(fixture('grafana-firing.json'), { source: 'grafana' }).incidents[0]!;
    const resolved = parseAlertmanagerPayload(fixture('grafana-resolved.json'), { source: 'grafana' }).incidents[0]!;
    expect(resolved.status).toBe('resolved');
    expect(resolved.fingerprint).toBe(firing.fingerprint);
    expect(resolved.triggerKey).toBe(firing.triggerKey);
    expect(resolved.endsAt).toBe('2026-11-30T19:05:00.000Z');
  });
});
