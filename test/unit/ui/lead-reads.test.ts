/**
 * `/ui` as a lead reads it (issue 28 item 4), page by page from the renderers: the weekly
 * history is one bounded chart per count (resolves are part of answers: never stacked on
 * them); durations are words (`3 h 20 min`), the seconds only in a `<data>` value; KB PRs say
 * their kind; emoji labels carry words; a structural near miss is not a gap; staleness counts
 * from the later of the entry's own date and when the bot first served it, which the store
 * keeps; Matrix threads link through matrix.to.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matrixPermalink } from '../../../src/adapters/matrix/matrix-transport.js';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import type { Thread, ViewIncident } from '../../../src/core/ledger/ledger-reader.js';
import { isStale } from '../../../src/core/recall/confidence.js';
import { CHART_MAX_HEIGHT, stackedBars } from '../../../src/http/ui/ui-charts.js';
import { gaps, knowledgeRow, type KnowledgeRow, type ViewReader } from '../../../src/http/ui/ui-data.js';
import { duration } from '../../../src/http/ui/ui-html.js';
import { entryPage, gapsPage, incidentPage, knowledgePage, overviewPage, prKind } from '../../../src/http/ui/ui-pages.js';
import { MAX_IDS, SERVED_SINCE_KEY, ServedSince } from '../../../src/runtime/served-since.js';
import { recordingLogger } from '../bot/bot-harness.js';
import { fixedSnapshot, incidentEntry, playbook } from '../recall/recall-fixtures.js';

const DAY = 86_400_000;

const row = (over: Partial<KnowledgeRow> = {}): KnowledgeRow => ({
  id: 'incidents/x.md',
  title: 'x',
  type: 'Incident',
  status: 'active',
  answerKind: 'incident',
  recalls: 3,
  resolved: 2,
  up: 1,
  down: 0,
  factor: 1,
  rate: 0.8,
  withheld: false,
  trend: 'steady',
  flags: [],
  ...over,
});

/** Text as a person reads it: markup dropped. */
const shown = (html: string): string =>
  html
    .replace(/<(title|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');

describe('durations in words', () => {
  it('say the two largest units, rounded, never raw seconds', () => {
    expect(duration(12_000)).toBe('3 h 20 min');
    expect(duration(42)).toBe('42 s');
    expect(duration(59.6)).toBe('1 min');
    expect(duration(450)).toBe('7 min 30 s');
    expect(duration(420)).toBe('7 min');
    expect(duration(3600)).toBe('1 h');
    expect(duration(3599.7)).toBe('1 h');
    expect(duration(86_400 + 4 * 3600)).toBe('1 d 4 h');
    expect(duration(90 * 86_400)).toBe('90 d');
    expect(duration(-5)).toBe('0 s');
    expect(duration(undefined)).toBe('—');
    expect(duration(Number.NaN)).toBe('—');
    expect(duration(Number.POSITIVE_INFINITY)).toBe('—');
  });

  it('the overview shows 3 h 20 min and keeps 12000 only as the <data> value', () => {
    const html = overviewPage(
      {
        days: 7,
        from: '2026-01-01',
        to: '2026-01-07',
        perDay: [],
        totals: { day: 'total', instant: 0, runbook: 0, investigation: 0, degraded: 0, silenced: 0 },
        modelCalls: 0,
        tokensSpent: 0,
        investigations: 0,
        investigationTokens: 0,
        instantNoModel: 0,
        tokensAvoided: 0,
        acks: 1,
        ackMedianS: 95,
        ackP90S: 95,
        resolves: 1,
        resolveMedianS: 12_000,
        resolveP90S: 12_000,
        votesUp: 2,
        votesDown: 3,
        precision: 0.4,
      },
      3,
    );
    // A share reads as a share: `40 %`, the plain 0.4 only as the <data> value (not `0.4 40 %`).
    expect(html).toContain('<data data-figure="precision" value="0.4">40 %</data>');
    expect(shown(html)).not.toContain('0.4');
    expect(html).toContain('<data data-figure="resolve-median-s" value="12000">3 h 20 min</data>');
    expect(html).toContain('<data data-figure="ack-median-s" value="95">1 min 35 s</data>');
    expect(shown(html)).not.toContain('12000');
    expect(shown(html)).not.toMatch(/\b95 s\b/);
  });
});

describe('charts', () => {
  it('are drawn at a bounded pixel size, however few columns (a phone only scales them down)', () => {
    for (const n of [1, 2, 7, 26, 90]) {
      const svg = stackedBars({
        title: 't',
        columns: Array.from({ length: n }, (_, i) => `c${i}`),
        series: [{ cls: 'k-up', label: 'up' }],
        values: Array.from({ length: n }, () => [3]),
        height: 10_000,
      }).value;
      const height = Number(/ height="(\d+)"/.exec(svg)?.[1]);
      const width = Number(/ width="(\d+)"/.exec(svg)?.[1]);
      const box = /viewBox="0 0 (\d+) (\d+)"/.exec(svg)!;
      expect(height, `${n} columns`).toBeLessThanOrEqual(CHART_MAX_HEIGHT);
      expect([Number(box[1]), Number(box[2])]).toEqual([width, height]);
      // Wide enough that one column is not blown up to the page's width.
      expect(width).toBeGreaterThanOrEqual(200);
      expect(width).toBeLessThanOrEqual(28 + 90 * 8 + 4);
    }
  });

  it("the entry page's weekly history is one chart per count, each with one series", () => {
    const entry = incidentEntry('incidents/x.md', { resource: 'ns/x', title: 'x', cause: 'c', resolution: 'r' });
    const html = entryPage({
      entry,
      row: row(),
      weeks: [
        ['2026-01-05', 4, 3, 2, 1],
        ['2026-01-12', 2, 2, 0, 0],
      ],
      incidents: [],
    });
    const charts = html.match(/<svg class="chart"[^>]*>/g) ?? [];
    expect(charts).toHaveLength(4);
    for (const c of charts) expect(c, 'one series per chart').not.toContain(' | ');
    expect(html.match(/data-chart="[^"]+"/g)).toEqual([
      'data-chart="answers"',
      'data-chart="resolves"',
      'data-chart="👍 helpful votes"',
      'data-chart="👎 unhelpful votes"',
    ]);
    // Resolves (3 + 2) are their own chart: the answers chart's scale is its own maximum (4), not 4 + 3 + 2 + 1.
    const answers = html.slice(html.indexOf('data-chart="answers"'), html.indexOf('data-chart="resolves"'));
    expect(answers).toContain('<text class="tick" x="0" y="10">4</text>');
    expect(shown(html)).toContain('resolves per week (5 in all)');
  });

  it("the entry's source shows no visible escapes for the forge's word joiners; a bidi override stays visible", () => {
    const entry = incidentEntry('incidents/x.md', { resource: 'ns/x', title: 'x', cause: 'c', resolution: 'r' });
    const html = entryPage({
      entry: { ...entry, body: 'see https:\u2060//wiki.example.com, thanks @\u2060bob <b>x</b> gpj.\u202Eexe' },
      row: row(),
      weeks: [],
      incidents: [],
    });
    const pre = html.slice(html.indexOf('<pre>'), html.indexOf('</pre>'));
    expect(pre).toContain('see https://wiki.example.com, thanks @bob &lt;b&gt;x&lt;/b&gt;');
    expect(pre).not.toContain('\u2060');
    expect(pre).not.toContain('u{2060}');
    expect(pre).toContain('\\u{202E}');
  });
});

describe('labels carry words', () => {
  it('the knowledge table and entry cards name 👍 and 👎 in words too', () => {
    const k = knowledgePage([row()], 1, 1, 1, {}, ['Incident']);
    expect(k).toContain('<th class="num">👍 up</th><th class="num">👎 down</th>');
    const entry = incidentEntry('incidents/x.md', { resource: 'ns/x', title: 'x', cause: 'c', resolution: 'r' });
    const e = entryPage({ entry, row: row(), weeks: [], incidents: [] });
    expect(e).toContain('<div class="label">👍 up votes</div>');
    expect(e).toContain('<div class="label">👎 down votes</div>');
    // No label anywhere is an emoji alone.
    for (const html of [k, e]) {
      for (const m of html.matchAll(/<(th|div class="label")[^>]*>([^<]*)</g)) expect(m[2]!.trim(), m[0]).not.toMatch(/^\p{Extended_Pictographic}+$/u);
    }
  });

  it('the knowledge footnote says the formulas the code computes: gate rate (S+1)/(N+2), factor (S+1)/(N+1)', () => {
    const k = shown(knowledgePage([row()], 1, 1, 1, {}, ['Incident']));
    expect(k).toContain('Gate rate = (S + 1) / (N + 2)');
    expect(k).toContain('Factor = (S + 1) / (N + 1)');
    expect(k).toContain('S = resolved + 👍 and observations N = resolved + failed + 👍 + 👎′');
    expect(k).not.toContain('recalls + 👍 + 👎 + 2');
  });
});

describe('KB pull requests say their kind', () => {
  it('by the curation item that filed them, a comment as a comment', () => {
    expect(prKind('note', 'concept_pr')).toBe('note');
    expect(prKind('fix', 'fix_pr')).toBe('fix');
    expect(prKind('postmortem', 'postmortem_pr')).toBe('postmortem');
    expect(prKind('finding', 'novel')).toBe('finding');
    expect(prKind('note', 'pr_comment')).toBe('note · comment');
    expect(prKind(undefined, 'fix_pr')).toBe('fix');
    expect(prKind(undefined, undefined)).toBe('KB');
  });

  it('on the gaps page and the incident page', () => {
    const at = '2026-01-01T00:00:00Z';
    const prs = [
      { at, subject: 'fix', decision: 'fix_pr', triggerKey: 't', openId: 'o1', url: 'https://github.example/acme/kb/pull/3', number: 3 },
      { at, subject: 'postmortem', decision: 'postmortem_pr', triggerKey: 't', openId: 'o1', url: 'https://github.example/acme/kb/pull/4', number: 4 },
      { at, subject: 'note', decision: 'concept_pr', triggerKey: 't', openId: 'o1', url: 'https://github.example/acme/kb/pull/5', number: 5 },
    ];
    const g = gapsPage({ unanswered: [], nearMissByGate: [] }, { recent: prs, decisions: {}, prs });
    expect(g.match(/data-pr-kind="[^"]+"/g)).toEqual(['data-pr-kind="fix"', 'data-pr-kind="postmortem"', 'data-pr-kind="note"']);
    const incident: ViewIncident = {
      openId: 'o1',
      triggerKey: 't',
      fingerprint: 'f',
      at,
      cls: 'investigation',
      calls: 0,
      tokens: 0,
      prs: prs.map((p) => p.url),
    };
    const i = incidentPage({
      incident,
      thread: undefined,
      permalinks: [],
      prKinds: new Map(prs.map((p) => [p.url, { subject: p.subject, decision: p.decision }])),
    });
    expect(shown(i)).toContain('KB PR (fix): https://github.example/acme/kb/pull/3');
    expect(shown(i)).toContain('KB PR (postmortem): https://github.example/acme/kb/pull/4');
    expect(shown(i)).toContain('KB PR (note): https://github.example/acme/kb/pull/5');
  });
});

describe('an incident page', () => {
  it('measures on-it and resolve from the alert start, in words; a Matrix thread links through matrix.to', () => {
    const incident: ViewIncident = {
      openId: 'o1',
      triggerKey: 't',
      fingerprint: 'f',
      at: '2026-01-01T03:05:00Z',
      resolvedAt: '2026-01-01T06:20:00Z',
      cls: 'investigation',
      calls: 0,
      tokens: 0,
    };
    const thread = {
      openId: 'o1',
      firedAt: '2026-01-01T03:00:00Z',
      acks: [{ user: 'matrix:@ann:example.org', via: 'matrix', at: '2026-01-01T03:07:00Z' }],
      roots: { matrix: { channel: '!room:example.org', id: '$ev1' } },
    } as unknown as Thread;
    const url = matrixPermalink('!room:example.org', '$ev1')!;
    const html = incidentPage({ incident, thread, permalinks: [{ transport: 'matrix', channel: '!room:example.org', id: '$ev1', url }] });
    expect(shown(html)).toContain('on it 7 min after it fired');
    expect(shown(html)).toContain('resolved after 3 h 20 min');
    expect(html).toContain('value="12000"');
    // A silence's end is a time people read, as the cards say it.
    const silenced = incidentPage({
      incident,
      permalinks: [],
      thread: {
        ...thread,
        timeline: [{ kind: 'silence', at: '2026-01-01T03:10:00Z', user: 'cli:ann', via: 'cli', detail: '2026-01-01T07:10:00.000Z' }],
      } as unknown as Thread,
    });
    expect(shown(silenced)).toContain('until 2026-01-01 07:10 UTC');
    expect(silenced).not.toContain('07:10:00.000Z');
    expect(html).toContain(`href="${url}"`);
  });

  it('names people by display name, the surface id on hover; a hostile name is text', () => {
    const incident: ViewIncident = { openId: 'o2', triggerKey: 't', fingerprint: 'f', at: '2026-01-01T03:05:00Z', cls: 'investigation', calls: 0, tokens: 0 };
    const thread = {
      openId: 'o2',
      firedAt: '2026-01-01T03:00:00Z',
      acks: [
        { user: 'slack:U0ANN', via: 'slack', at: '2026-01-01T03:07:00Z' },
        { user: 'slack:U0EVE', via: 'slack', at: '2026-01-01T03:08:00Z' },
        { user: 'slack:U0NEW', via: 'slack', at: '2026-01-01T03:09:00Z' },
      ],
      timeline: [{ kind: 'vote', at: '2026-01-01T03:10:00Z', user: 'slack:U0ANN', via: 'slack', detail: 'down' }],
      roots: {},
    } as unknown as Thread;
    const names = { nameOf: (p: { via: string; id: string }) => ({ U0ANN: 'Ann Example', U0EVE: '<script>x</script>' })[p.id] };
    const html = incidentPage({ incident, thread, permalinks: [], names });
    expect(html).toContain('<span class="person" title="slack:U0ANN">Ann Example</span>');
    // The same person one way on the page: the timeline's vote names Ann as the ack line does.
    expect(html.match(/title="slack:U0ANN">Ann Example</g)).toHaveLength(2);
    expect(html).not.toContain('<script>x');
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
    // Someone the directory does not know yet: their id, never the ledger's slack:… key as a name.
    expect(html).toContain('title="slack:U0NEW">U0NEW</span>');
  });

  it('a structural near miss is named as a correct refusal', () => {
    const incident: ViewIncident = {
      openId: 'o1',
      triggerKey: 't',
      fingerprint: 'f',
      at: '2026-01-01T03:05:00Z',
      cls: 'investigation',
      calls: 0,
      tokens: 0,
      trace: {
        answer: 'none',
        stoppedBy: 'structural',
        candidates: [{ entry: 'incidents/a.md', score: 3 }],
        nearMiss: { entry: 'incidents/a.md', gate: 'structural', reason: 'another workload' },
      },
    };
    expect(shown(incidentPage({ incident, thread: undefined, permalinks: [] }))).toContain('a correct refusal');
  });
});

describe('matrix.to permalinks', () => {
  it('encode the room and event ids and name the room server to route through', () => {
    expect(matrixPermalink('!abc:example.org', '$ev/1+2')).toBe('https://matrix.to/#/%21abc%3Aexample.org/%24ev%2F1%2B2?via=example.org');
    expect(matrixPermalink('not a room', '$ev')).toBeUndefined();
    expect(matrixPermalink('!abc:example.org', 'no-dollar')).toBeUndefined();
    expect(matrixPermalink('!abc:example.org', '$e"><script>')).toBe('https://matrix.to/#/%21abc%3Aexample.org/%24e%22%3E%3Cscript%3E?via=example.org');
  });
});

describe('gaps', () => {
  it('do not count a structural refusal (another workload) as a near miss; a margin miss still counts', () => {
    const read = {
      *viewTriggers() {
        yield ['a', { opens: 3, answered: 0, firstAt: 'x', lastAt: 'y', nearMiss: { structural: 3 } }] as const;
        yield ['b', { opens: 2, answered: 1, firstAt: 'x', lastAt: 'y', nearMiss: { margin: 2, structural: 1 } }] as const;
      },
    } as unknown as ViewReader;
    const g = gaps(read);
    expect(g.nearMissByGate.map((x) => x.gate)).toEqual(['margin']);
    expect(g.nearMissByGate[0]!.triggers).toEqual([{ triggerKey: 'b', count: 2 }]);
  });
});

describe('staleness', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  const old = incidentEntry('incidents/old.md', { resource: 'ns/old', title: 'old', cause: 'c', resolution: 'r', timestamp: '2025-01-14' });
  const undated = playbook('playbooks/p.md', { title: 'p', body: 'b' });
  const noDate = { ...undated, timestamp: undefined } as typeof undated;
  const STALE = 180 * DAY;

  it('counts from the later of its own date and when the bot first served it', () => {
    expect(isStale(old, now, STALE)).toBe(true);
    expect(isStale(old, now, STALE, now.toISOString())).toBe(false);
    expect(isStale(old, now, STALE, new Date(now.getTime() - 181 * DAY).toISOString())).toBe(true);
    expect(isStale(noDate, now, STALE, new Date(now.getTime() - 200 * DAY).toISOString())).toBe(true);
    expect(isStale(noDate, now, STALE)).toBe(false);
    expect(isStale(old, now, STALE, 'not a date')).toBe(true);
    expect(isStale(old, now, 0, undefined)).toBe(false);
  });

  it('the knowledge row flags a bundled entry stale only once stale_after has passed since it was first served', () => {
    const read = {
      trackRecord: () => ({
        recalls: 0,
        resolved: 0,
        failed: 0,
        inFlight: 0,
        up: 0,
        down: 0,
        confirmations: 0,
        effectiveDown: 0,
        rate: 0.5,
        factor: 1,
        withheld: true,
      }),
      viewEntry: () => undefined,
    } as unknown as ViewReader;
    const served = { of: () => now.toISOString() };
    expect(knowledgeRow(read, old, now, { outcomeFloor: 0.5, staleAfterMs: STALE, servedSince: served }).flags).not.toContain('stale');
    expect(knowledgeRow(read, old, new Date(now.getTime() + 181 * DAY), { outcomeFloor: 0.5, staleAfterMs: STALE, servedSince: served }).flags).toContain(
      'stale',
    );
    expect(knowledgeRow(read, old, now, { outcomeFloor: 0.5, staleAfterMs: STALE }).flags).toContain('stale');
  });

  it('when an entry was first served is kept in the store, across a reopen; a later snapshot adds only new ids', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reprise-served-'));
    const store = createStore(undefined, dir);
    const log = recordingLogger([]);
    const a = incidentEntry('incidents/a.md', { resource: 'ns/a', title: 'a', cause: 'c', resolution: 'r' });
    const b = incidentEntry('incidents/b.md', { resource: 'ns/b', title: 'b', cause: 'c', resolution: 'r' });
    const first = await ServedSince.open(store, log);
    first.note(fixedSnapshot([a], { [a.id]: 1 }), new Date('2026-01-01T00:00:00Z'));
    await first.flushed();
    const reopened = await ServedSince.open(store, log);
    expect(reopened.of(a.id)).toBe('2026-01-01T00:00:00.000Z');
    reopened.note(fixedSnapshot([a, b], { [a.id]: 1, [b.id]: 1 }), new Date('2026-02-01T00:00:00Z'));
    await reopened.flushed();
    expect(reopened.of(a.id)).toBe('2026-01-01T00:00:00.000Z');
    expect(reopened.of(b.id)).toBe('2026-02-01T00:00:00.000Z');
    expect(await store.get(SERVED_SINCE_KEY)).toEqual({ [a.id]: '2026-01-01T00:00:00.000Z', [b.id]: '2026-02-01T00:00:00.000Z' });
    await store.close();
  });

  it('stays bounded: when full, it forgets ids the served catalog no longer has', async () => {
    const ids = Array.from({ length: MAX_IDS }, (_, i) => [`gone/${i}.md`, '2026-01-01T00:00:00.000Z'] as const);
    const full = await ServedSince.open({ get: async () => Object.fromEntries(ids), set: async () => undefined } as never, recordingLogger([]));
    const a = incidentEntry('incidents/a.md', { resource: 'ns/a', title: 'a', cause: 'c', resolution: 'r' });
    full.note(fixedSnapshot([a], { [a.id]: 1 }), new Date('2026-03-01T00:00:00Z'));
    expect(full.of(a.id)).toBe('2026-03-01T00:00:00.000Z');
    expect(full.of('gone/0.md')).toBeUndefined();
  });

  it('a record it cannot read is not trusted: it warns and counts from now', async () => {
    const warnings: unknown[] = [];
    const bad = { get: async () => ['not', 'a', 'map'], set: async () => undefined };
    const s = await ServedSince.open(bad as never, recordingLogger([], warnings));
    expect(s.of('x')).toBeUndefined();
    expect(warnings).toMatchObject([{ key: SERVED_SINCE_KEY }]);
    const weird = await ServedSince.open(
      { get: async () => ({ 'a.md': 'yesterday', 'b.md': 7, 'c.md': '2026-01-01T00:00:00Z' }), set: async () => undefined } as never,
      recordingLogger([]),
    );
    expect([weird.of('a.md'), weird.of('b.md'), weird.of('c.md')]).toEqual([undefined, undefined, '2026-01-01T00:00:00Z']);
  });
});
