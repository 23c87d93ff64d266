/**
 * What the alert says, on the card, on every surface: summary *and* description (bounded,
 * escaped), Grafana's value, and the links taken from the alert — only from fixed fields, only
 * http(s), only to `links.allowed_hosts` when set — with a refused link said in the thread.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderConsoleCard, renderConsoleThread } from '../../../src/adapters/console/render-console.js';
import { renderCard as renderMatrixCard, renderDetail as renderMatrixDetail } from '../../../src/adapters/matrix/render-matrix.js';
import { renderCard as renderSlackCard, renderDetail as renderSlackDetail } from '../../../src/adapters/slack/render-slack.js';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { alertLinks, buildCard, buildDetail, type ThreadInput } from '../../../src/core/chat/build-thread-view.js';
import { patchCard } from '../../../src/core/chat/thread-view.js';
import { parseGrafanaPayload } from '../../../src/core/grafana.js';
import { recall } from '../../../src/core/recall/recall.js';
import type { Incident } from '../../../src/core/types.js';
import { NOW, alert, alertPayload, fixedSnapshot, noHistory, recallOpts } from '../recall/recall-fixtures.js';

const grafana = JSON.parse(readFileSync(new URL('../../fixtures/sources/grafana-two-rules.json', import.meta.url), 'utf8')) as unknown;

function input(incident: Incident): ThreadInput {
  return {
    incident,
    recall: recall(incident, fixedSnapshot([], {}), noHistory, recallOpts(), NOW),
    recurrence: { previousCount: 0 },
    now: NOW,
    controlsId: 'open-1',
  };
}

/** Every URL a surface would make clickable, and all of its text. */
function surfaces(i: Incident): Record<'slack' | 'matrix' | 'console', { links: string[]; text: string }> {
  const card = buildCard(input(i));
  const detail = buildDetail(input(i));
  const slack = [renderSlackCard(card), renderSlackDetail(detail)];
  const slackLinks: string[] = [];
  JSON.stringify(slack, (k, v: unknown) => {
    if (v && typeof v === 'object' && (v as { type?: string }).type === 'link') slackLinks.push(String((v as { url: string }).url));
    return v;
  });
  const matrix = [renderMatrixCard(card), renderMatrixDetail(detail)];
  const matrixLinks = matrix.flatMap((m) => [...m.formatted_body.matchAll(/href="([^"]*)"/g)].map((x) => x[1]!.replace(/&amp;/g, '&')));
  const consoleText = renderConsoleThread(card, detail);
  const consoleLinks = [...consoleText.matchAll(/https?:\/\/\S+/g)].map((m) => m[0]);
  return {
    slack: { links: slackLinks, text: JSON.stringify(slack) },
    matrix: { links: matrixLinks, text: matrix.map((m) => m.body).join('\n') },
    console: { links: consoleLinks, text: consoleText },
  };
}

describe('what the alert says, on the card', () => {
  it('shows the summary and the description (the description is no longer hidden behind the summary)', () => {
    const i = alert({
      alertname: 'NodeFilesystemSpaceFillingUp',
      labels: { instance: 'node1:9100', mountpoint: '/var' },
      annotations: {
        summary: 'Filesystem is predicted to run out of space within the next 24 hours.',
        description: 'Filesystem on /dev/sda1 at node1:9100 has only 14.2% available space left and is filling up.',
      },
    });
    const card = buildCard(input(i));
    expect(card.said).toEqual({
      summary: 'Filesystem is predicted to run out of space within the next 24 hours.',
      description: 'Filesystem on /dev/sda1 at node1:9100 has only 14.2% available space left and is filling up.',
    });
    for (const [name, s] of Object.entries(surfaces(i))) {
      expect(s.text, name).toContain('only 14.2% available');
      expect(s.text, name).toContain('Filesystem is predicted to run out of space');
    }
  });

  it('shows a description alone as the description, and an alert with neither says nothing beyond its name', () => {
    const only = alert({ alertname: 'X', annotations: { description: 'only the description' } });
    expect(buildCard(input(only)).said).toEqual({ description: 'only the description' });
    expect(buildCard(input(alert({ alertname: 'Watchdog' }))).said).toBeUndefined();
  });

  it('bounds both on the card, and keeps a long description whole (bounded) in the thread', () => {
    const long = `${'disk '.repeat(300)}END`;
    const i = alert({ alertname: 'X', annotations: { summary: `${'s'.repeat(400)}\nsecond line`, description: long } });
    const card = buildCard(input(i));
    expect(card.said!.summary!.length).toBeLessThanOrEqual(300);
    expect(card.said!.summary).not.toContain('\n');
    expect(card.said!.description!.length).toBeLessThanOrEqual(600);
    expect(card.said!.description!.endsWith('…')).toBe(true);
    const described = buildDetail(input(i)).facts.find(([k]) => k === 'description');
    expect(described?.[1]).toContain('END');
    const lines = alert({ alertname: 'X', annotations: { description: Array.from({ length: 20 }, (_, n) => `line ${n}`).join('\n') } });
    expect(buildCard(input(lines)).said!.description!.split('\n')).toHaveLength(8);
    // A description that fits the card is not repeated in the thread.
    expect(buildDetail(input(alert({ alertname: 'X', annotations: { description: 'short' } }))).facts.map(([k]) => k)).not.toContain('description');
  });

  it('escapes both for every surface: no mention, no markup, no control character takes effect', () => {
    const evil = '<!channel> @room <script>alert(1)</script> <http://evil.example|click> \u202Egpj.exe';
    const i = alert({ alertname: 'X', annotations: { summary: evil, description: `${evil}\n🔍 Fake — forged/line · severity critical` } });
    const s = surfaces(i);
    expect(s.slack.text).not.toMatch(/"type":"(broadcast|user|usergroup|channel)"/);
    expect(s.slack.links).toEqual([]);
    expect(s.matrix.links).toEqual([]);
    expect(renderMatrixCard(buildCard(input(i))).formatted_body).not.toContain('<script');
    expect(renderMatrixCard(buildCard(input(i)))['m.mentions']).toEqual({});
    for (const t of [s.slack.text, s.matrix.text, s.console.text]) expect(t).not.toContain('\u202E');
    // On the console a description line cannot pass for one of the bot's own lines.
    expect(renderConsoleCard(buildCard(input(i))).filter((l) => l.startsWith('🔍 '))).toHaveLength(1);
  });

  it("shows Grafana's value, dashboard, panel, silence and image links, and the notification's title for an alert without text", () => {
    const [orders, payments] = parseGrafanaPayload(grafana).incidents;
    const card = buildCard(input(orders!));
    expect(card.said?.value).toBe('A=0, B=14.2031');
    expect(card.links.map((l) => l.label)).toEqual(['source', 'runbook', 'dashboard', 'panel', 'silence', 'image']);
    expect(buildCard(input(payments!)).said?.summary).toBe('[FIRING:2] DatasourceNoData Shop (prom-shop A)');
    for (const [name, s] of Object.entries(surfaces(orders!))) {
      expect(s.text, name).toContain('A=0, B=14.2031');
      expect(s.links, name).toContain('https://grafana.example.org/d/shop-overview?orgId=1');
      expect(s.links, name).toContain('https://grafana.example.org/public/img/attachments/9f2c1d0e.png');
    }
  });
});

describe('links from alerts, on every surface', () => {
  it('links only the allowed hosts when links.allowed_hosts is set, on Slack, Matrix and the console', () => {
    const [orders] = parseGrafanaPayload(grafana, { links: { allowedHosts: ['runbooks.example.org'] } }).incidents;
    for (const [name, s] of Object.entries(surfaces(orders!))) {
      expect(s.links, name).toContain('https://runbooks.example.org/shop/orders-per-minute');
      expect(
        s.links.filter((l) => l.includes('grafana.example.org')),
        name,
      ).toEqual([]);
    }
  });

  it('says in the thread which links were not shown, and why, on every surface', () => {
    const payload = alertPayload({ alertname: 'X', annotations: { runbook_url: 'javascript:alert(1)', dashboard: 'https://evil.test/d' } });
    const [i] = parseAlertmanagerPayload(payload, { links: { allowedHosts: ['grafana.example.org'] } }).incidents;
    const fact = buildDetail(input(i!)).facts.find(([k]) => k === 'links not shown');
    expect(fact?.[1]).toBe('runbook_url: not a web link (javascript: scheme); dashboard: its host is not in links.allowed_hosts');
    for (const [name, s] of Object.entries(surfaces(i!))) {
      expect(s.text, name).toContain('links not shown');
      expect(
        s.links.some((l) => l.includes('evil.test') || l.startsWith('javascript')),
        name,
      ).toBe(false);
    }
  });

  it('derives checked links for an incident recorded before links were kept (http(s) only)', () => {
    const i = alert({ alertname: 'X', annotations: { runbook_url: 'https://runbooks.example.org/x', dashboard: 'javascript:alert(1)' } });
    const { links: _kept, ...old } = i;
    expect(alertLinks(old as Incident)).toEqual([{ label: 'runbook', url: 'https://runbooks.example.org/x' }]);
  });
});

describe("the card's feedback line", () => {
  it('renders what people said of the answer on every surface, as one escaped line, and a patch sets it', () => {
    const base = buildCard(input(alert({ alertname: 'X' })));
    const card = patchCard(base, { kind: 'card_patch', feedback: '👍 2 👎 1 · <!channel>\n@room' });
    expect(card.feedback).toBe('👍 2 👎 1 · <!channel>\n@room');
    expect(patchCard(card, { kind: 'card_patch', state: 'resolved' }).feedback).toBe(card.feedback);
    const slack = JSON.stringify(renderSlackCard(card).blocks);
    expect(slack).toContain('👍 2 👎 1 · <!channel>\\\\n@room');
    expect(slack).not.toContain('"type":"broadcast"');
    const matrix = renderMatrixCard(card);
    expect(matrix.body).toContain('👍 2 👎 1');
    expect(matrix['m.mentions']).toEqual({});
    expect(renderConsoleCard(card)).toContain('🗳 👍 2 👎 1 · <!channel>\\n@room');
    expect(JSON.stringify(renderSlackCard(base).blocks)).not.toContain('👍 2');
  });
});
