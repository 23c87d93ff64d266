import { describe, expect, it } from 'vitest';
import { parseEntry } from '../../../src/core/catalog/parse-entry.js';
import { marker } from '../../../src/core/curate/markers.js';
import { historyIncident, incidentMarker, planPagerDutyImport, type HistoryIncident, type PagerDutyPlanDeps } from '../../../src/core/import/pagerduty-plan.js';
import { pagerDutyBatchBody, type NewDraft } from '../../../src/core/import/pagerduty-batch.js';
import { parsePagerDutyPayload } from '../../../src/core/pagerduty.js';
import { buildCatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../../../src/core/search/postings-index.js';
import type { ForgeComment, ForgePullRequest } from '../../../src/ports/forge.js';

const catalogOf = (files: Record<string, string>) => {
  const entries = Object.entries(files).map(([id, text]) => {
    const p = parseEntry(id, text);
    if (!p.entry) throw new Error(JSON.stringify(p.problems));
    return p.entry;
  });
  return buildCatalogSnapshot(entries, new PostingsIndex(entries));
};
const pr = (n: number, body: string, o: Partial<ForgePullRequest> = {}): ForgePullRequest => ({
  number: n,
  url: `https://forge.example/pr/${n}`,
  title: `KB ${n}`,
  body,
  state: 'open',
  merged: false,
  labels: [],
  head: `b${n}`,
  base: 'main',
  createdAt: '2026-11-01T00:00:00Z',
  updatedAt: '2026-11-01T00:00:00Z',
  ...o,
});
const UNTIL = new Date('2026-12-01T00:00:00Z');
const deps = (o: Partial<PagerDutyPlanDeps> = {}): PagerDutyPlanDeps => ({ catalog: catalogOf({}), pullRequests: [], comments: () => [], until: UNTIL, ...o });
const inc = (id: string, title: string, created: string, o: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  title,
  status: 'resolved',
  created_at: created,
  last_status_change_at: new Date(Date.parse(created) + 3_600_000).toISOString(),
  service: { id: 'PSVC', summary: 'checkout' },
  ...o,
});
const noted = (raw: Record<string, unknown>, content: string, name = 'Ann Example'): HistoryIncident => ({
  raw,
  notes: [{ content, createdAt: String(raw['created_at']), user: { id: 'PANN', name } }],
});

describe('planPagerDutyImport', () => {
  it('keys an incident exactly as the webhook does, title spaces and all', () => {
    const raw = inc('P1', 'Checkout 5xx rate  above 2 %', '2026-11-10T10:00:00Z', { urgency: 'high', incident_key: 'k-1' });
    const hook = parsePagerDutyPayload({ event: { event_type: 'incident.resolved', occurred_at: '2026-11-10T11:00:00Z', data: raw } });
    if (hook.kind !== 'incident') throw new Error(hook.kind);
    const mine = historyIncident(raw);
    expect(mine?.incident.triggerKey).toBe(hook.incident.triggerKey);
    expect(mine?.incident.triggerKey).toContain('checkout 5xx rate');
    const plan = planPagerDutyImport([noted(raw, 'fix: scaled checkout to 8')], deps());
    expect(plan.drafts[0]?.triggerKey).toBe(hook.incident.triggerKey);
  });

  it('grades each fix by whether the trigger came back within a day, and lists each different fix once', () => {
    const items = [
      noted(inc('P1', 'Queue backlog', '2026-11-01T00:00:00Z'), 'fix: restarted the consumer'),
      // Came back 12 h after P1 was resolved: P1's fix did not hold.
      noted(inc('P2', 'Queue backlog', '2026-11-01T13:00:00Z'), 'fixed: raised the consumer concurrency to 8', 'Bob'),
      noted(inc('P3', 'Queue backlog', '2026-11-10T00:00:00Z'), 'Fix: raised the consumer concurrency to 8.', 'Bob'),
      // Less than a day before the window's end: not graded yet.
      noted(inc('P4', 'Queue backlog', '2026-11-30T12:00:00Z'), 'fix: restarted the consumer'),
    ];
    const plan = planPagerDutyImport(items, deps());
    expect(plan.drafts).toHaveLength(1);
    const d = plan.drafts[0]!;
    expect(d.kind).toBe('new');
    expect(d.fixes.map((f) => f.id)).toEqual(['P1', 'P2']);
    expect(d.counted).toEqual(['P3', 'P4']);
    expect(d.outcomes.map((o) => [o.text, o.held, o.cameBack, o.pending])).toEqual([
      ['restarted the consumer', 0, 1, 1],
      ['raised the consumer concurrency to 8', 2, 0, 0],
    ]);
    expect(plan.skipped.map((s) => [s.id, s.reason.split(':')[0]])).toEqual([
      ['P3', 'duplicate'],
      ['P4', 'duplicate'],
    ]);
    if (d.kind !== 'new') throw new Error(d.kind);
    // The list puts the fix that held first.
    const list = d.entry.content.split('## What has fixed it')[1] ?? '';
    expect(list.indexOf('raised the consumer')).toBeLessThan(list.indexOf('restarted the consumer'));
    expect(list).toContain('worked 2 of 2 times');
  });

  it('skips what was imported before, what says no fix, what was merged; lists what could not be read', () => {
    const items: HistoryIncident[] = [
      noted(inc('P1', 'A', '2026-11-01T00:00:00Z'), 'fix: one'),
      noted(inc('P2', 'B', '2026-11-02T00:00:00Z'), 'fix: two'),
      noted(inc('P3', 'C', '2026-11-03T00:00:00Z'), 'no fix yet'),
      { raw: inc('P4', 'D', '2026-11-04T00:00:00Z', { resolve_reason: { type: 'merge_resolve_reason', incident: { id: 'P1' } } }), notes: [] },
      { raw: inc('P5', 'E', '2026-11-05T00:00:00Z'), readError: 'its notes or log could not be read: 500' },
      { raw: { title: 'no id' } },
      { raw: inc('P6', 'F', '2026-11-06T00:00:00Z'), notes: [], resolve: { message: 'Resolved through the website.' } },
      { raw: inc('P7', 'G', '2026-11-07T00:00:00Z', { resolve_reason: 'failed over to the standby' }), notes: [] },
    ];
    const closed = pr(9, marker('import', 'pagerduty:P2'), { state: 'closed', merged: false });
    const commented = pr(10, `${marker('dup', 'a'.repeat(64))}`);
    const comments = (n: number): ForgeComment[] =>
      n === 10 ? [{ id: 1, url: 'u', body: marker('fix', 'pagerduty:P1'), createdAt: '2026-11-01T00:00:00Z' }] : [];
    const plan = planPagerDutyImport(items, deps({ pullRequests: [closed, commented], comments }));
    const why = Object.fromEntries(plan.skipped.map((s) => [s.id, s.reason]));
    expect(why['P1']).toBe('already imported in PR #10 (open)');
    expect(why['P2']).toBe('already imported in PR #9 (closed unmerged)');
    expect(why['P3']).toMatch(/^no fix text/);
    expect(why['P4']).toMatch(/^merged into P1/);
    expect(why['P6']).toMatch(/^no fix text/);
    expect(plan.unreadable.map((u) => [u.id, u.reason])).toEqual([
      ['#6', 'not a PagerDuty incident object (no id)'],
      ['P5', 'its notes or log could not be read: 500'],
    ]);
    expect(plan.drafts.flatMap((d) => d.fixes.map((f) => [f.id, f.fix, f.from]))).toEqual([['P7', 'failed over to the standby', 'resolve']]);
  });

  it('names every incident in a marker, an id with odd characters by its hash', () => {
    expect(incidentMarker('PT4KHLK')).toBe('pagerduty:PT4KHLK');
    const odd = incidentMarker('P1 --> <b>');
    expect(odd).toMatch(/^pagerduty:sha256-[0-9a-f]{40}$/);
    expect(() => marker('import', odd)).not.toThrow();
    const raw = inc('P1 --> <b>', 'A', '2026-11-01T00:00:00Z');
    const again = planPagerDutyImport([noted(raw, 'fix: one')], deps({ pullRequests: [pr(3, marker('import', odd), { merged: true, state: 'closed' })] }));
    expect(again.skipped[0]?.reason).toBe('already imported in PR #3 (merged)');
  });

  it("adds to the trigger's entry where one exists: the open PR for it, else the catalog's, unless it already says the fix", () => {
    const raw = inc('P1', 'Disk full', '2026-11-01T00:00:00Z');
    const fp = historyIncident(raw)!.fp;
    const entry = [
      '---',
      'type: Playbook',
      'title: Disk full',
      'description: Disk full.',
      'alerts: [Disk full]',
      `fingerprint: ${fp}`,
      '---',
      '## Symptom',
      '',
      'Disk full.',
      '',
      '## Resolution',
      '',
      '> vacuumed the journal',
      '',
    ].join('\n');
    const catalog = catalogOf({ 'playbooks/disk.md': entry });
    const onCatalog = planPagerDutyImport([noted(raw, 'fix: deleted old core dumps')], deps({ catalog }));
    expect(onCatalog.drafts.map((d) => [d.kind, d.kind === 'catalog' ? d.entryId : ''])).toEqual([['catalog', 'playbooks/disk.md']]);
    const known = planPagerDutyImport([noted(raw, 'Fixed: Vacuumed the journal.')], deps({ catalog }));
    expect(known.drafts).toEqual([]);
    expect(known.skipped[0]?.reason).toBe("duplicate: the catalog's entry playbooks/disk.md already says this fix");
    const open = planPagerDutyImport([noted(raw, 'fix: deleted old core dumps')], deps({ catalog, pullRequests: [pr(4, marker('dup', fp))] }));
    expect(open.drafts.map((d) => [d.kind, d.kind === 'open-pr' ? d.pr.number : 0])).toEqual([['open-pr', 4]]);
  });

  it('writes hostile words inert: the entry and the PR body ping, link and open HTML nothing', () => {
    const raw = inc('P1', 'Login <b>down</b> @channel #12', '2026-11-01T00:00:00Z', { incident_number: 12 });
    const plan = planPagerDutyImport(
      [noted(raw, '<p>Fix: ran <script>x()</script>[this](https://evil.example) for <!here> and <@U1|ann> see #34 @org/team</p>', '<img src=x> Mallory')],
      deps(),
    );
    const d = plan.drafts[0] as NewDraft;
    const body = pagerDutyBatchBody([d]);
    // The frontmatter keeps the alert's name as sent (recall matches it; GitHub shows YAML as escaped data); every rendered line is inert.
    const rendered = d.entry.content.split('\n---\n').slice(1).join('\n---\n');
    expect(rendered).toContain('## Resolution');
    for (const text of [rendered, body]) {
      expect(text).not.toMatch(/<(?!!-- reprise:)[a-z!/]/i);
      expect(text).not.toMatch(/@(?:channel|here|ann|org)\b/);
      expect(text).not.toMatch(/#(?:12|34)\b/);
      expect(text).not.toMatch(/\]\(https?:/);
      expect(text).not.toContain('x()');
    }
    expect(body).toContain(marker('import', 'pagerduty:P1'));
    expect(body).toContain(marker('dup', d.fingerprint));
    // One entry: its file is named, so the curator's amend finds it; several: none is.
    expect(body).toContain(marker('entry', d.entry.path.replace(/\//g, ':')));
    expect(pagerDutyBatchBody([d, { ...d, fingerprint: 'b'.repeat(64) }])).not.toContain('reprise:entry=');
  });
});
