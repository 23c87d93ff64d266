import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEntry } from '../../../src/core/catalog/parse-entry.js';
import { marker } from '../../../src/core/curate/markers.js';
import { batches, fileBatch, planImport } from '../../../src/core/import/import-plan.js';
import { neutraliseKeepingCode, renderPostmortemEntry } from '../../../src/core/import/postmortem-entry.js';
import { readPostmortem, type ReadResult } from '../../../src/core/import/read-postmortem.js';
import { buildCatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../../../src/core/search/postings-index.js';
import type { Entry } from '../../../src/core/types.js';
import type { DraftFile, ForgePullRequest } from '../../../src/ports/forge.js';

const DIR = join(import.meta.dirname, '../../fixtures/postmortems/good');
const FILES = ['2024-03-05-checkout-crashloop.md', 'disk-full-logs.md', 'incident-2023-11-db-lag.md', 'gdoc-export-ingress.md', 'numbered-cert-expiry.md'];
const read = (): ReadResult[] => FILES.map((f) => readPostmortem(f, readFileSync(join(DIR, f), 'utf8')));
const doc = (f: string) => {
  const r = readPostmortem(f, readFileSync(join(DIR, f), 'utf8'));
  if (!r.ok) throw new Error(r.reason);
  return r.doc;
};
const catalogOf = (files: Record<string, string>) => {
  const entries = Object.entries(files).map(([id, text]) => {
    const p = parseEntry(id, text);
    if (!p.entry) throw new Error(JSON.stringify(p.problems));
    return p.entry;
  });
  return buildCatalogSnapshot(entries, new PostingsIndex(entries));
};
const EMPTY = catalogOf({});
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
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  ...o,
});

describe('a postmortem as an Incident entry draft', () => {
  it('is an entry the catalog loads without problems, with the team’s resolution as its Resolution and code kept as code', () => {
    for (const f of FILES) {
      const d = renderPostmortemEntry(doc(f));
      const parsed = parseEntry(d.entry.path, d.entry.content);
      expect(
        parsed.problems.filter((p) => p.severity === 'error'),
        f,
      ).toEqual([]);
      expect(parsed.entry?.sections['resolution'], f).toBeTruthy();
      expect(d.entry.content).not.toMatch(/last_validated/);
    }
    const disk = parseEntry('x.md', renderPostmortemEntry(doc('disk-full-logs.md')).entry.content).entry as Entry;
    expect(disk.type).toBe('Incident');
    expect(disk.resource?.raw).toBe('host/logs-02');
    expect(disk.alerts).toEqual(['nodefilesystemspacefillingup']);
    expect(disk.sections['resolution']).toBe('Vacuumed the journal: `journalctl --vacuum-size=2G`, then restarted rsyslog.');
    // Markdown source: the escaped parenthesis renders as one (no link can be built from it).
    expect(disk.sections['cause']).toBe('A debug log level \\(`LOG_LEVEL=debug`\\) was left on after an investigation.');
    expect(disk.timestamp).toBe('2024-07-19');
    const cert = parseEntry('y.md', renderPostmortemEntry(doc('numbered-cert-expiry.md')).entry.content).entry as Entry;
    expect(cert.type).toBe('Playbook');
    expect(cert.alerts).toEqual(['certificateexpiringsoon']);
    // A sub-heading of the postmortem is a line of text, not a section of the entry.
    expect(Object.keys(cert.sections)).not.toContain('4.1 steps');
    expect(cert.sections['resolution']).toMatch(/^4\.1 Steps\n\n1\. Updated the solver secret\./);
  });

  it('leaves no mention, link, HTML or heading of the postmortem’s text live', () => {
    const d = renderPostmortemEntry(doc('gdoc-export-ingress.md')).entry.content;
    expect(d).not.toMatch(/@channel|<b>|https:\/\/wiki/);
    expect(d).toContain('@\u2060channel');
    expect(d).toContain('&lt;b&gt;');
    expect(neutraliseKeepingCode('run `rm -rf /tmp/@x` then ping @oncall <!-- reprise:dup=ab -->')).toBe(
      'run `rm -rf /tmp/@x` then ping @\u2060oncall &lt;\\!-- reprise:dup=ab --&gt;',
    );
    expect(neutraliseKeepingCode('```sh\n# not a heading @here\n```\n# heading')).toBe('```sh\n# not a heading @here\n```\n\\# heading');
  });
});

describe('the import’s dedup gate', () => {
  it('drafts every readable postmortem into an empty catalog with no PRs, and lists the rest with the reason', () => {
    const plan = planImport([...read(), { ok: false, file: 'bad.md', reason: 'binary' }], { catalog: EMPTY, pullRequests: [], dupScore: 8 });
    expect(plan.drafts.map((d) => d.doc.file)).toEqual(FILES);
    expect(plan.unreadable).toEqual([{ file: 'bad.md', reason: 'binary' }]);
  });

  it('a re-run files nothing: each postmortem already in a PR (open, merged, or closed by a human) is skipped with the PR', () => {
    const docs = read();
    const first = planImport(docs, { catalog: EMPTY, pullRequests: [], dupScore: 8 });
    const [a, b, ...rest] = first.drafts;
    const prs = [
      pr(7, [marker('import', a!.doc.contentHash), marker('dup', a!.fingerprint)].join('\n'), { state: 'closed', merged: true }),
      pr(8, rest.map((d) => marker('import', d.doc.contentHash)).join('\n')),
      pr(9, marker('import', b!.doc.contentHash), { state: 'closed' }),
    ];
    const again = planImport(docs, { catalog: EMPTY, pullRequests: prs, dupScore: 8 });
    expect(again.drafts).toEqual([]);
    expect(again.skipped.map((s) => [s.file, s.reason])).toEqual([
      [a!.doc.file, 'already imported in PR #7 (merged)'],
      [b!.doc.file, 'already imported in PR #9 (closed unmerged)'],
      ...rest.map((d) => [d.doc.file, 'already imported in PR #8 (open)']),
    ]);
  });

  it('an open draft with the same fingerprint, the same postmortem twice, or a catalog entry with its fingerprint or its text is known', () => {
    const docs = read();
    const drafts = planImport(docs, { catalog: EMPTY, pullRequests: [], dupScore: 8 }).drafts;
    const disk = drafts.find((d) => d.doc.file === 'disk-full-logs.md')!;
    const db = drafts.find((d) => d.doc.file === 'incident-2023-11-db-lag.md')!;
    const copy = readPostmortem('copy/disk-full-logs.md', readFileSync(join(DIR, 'disk-full-logs.md'), 'utf8'));
    const catalog = catalogOf({ 'incidents/db.md': db.entry.content });
    const plan = planImport([...docs, copy], { catalog, pullRequests: [pr(3, marker('dup', disk.fingerprint))], dupScore: 8 });
    expect(plan.skipped).toEqual(
      expect.arrayContaining([
        { file: 'disk-full-logs.md', reason: 'the same knowledge is drafted in open PR #3', url: 'https://forge.example/pr/3' },
        { file: 'incident-2023-11-db-lag.md', reason: 'the catalog already has it: incidents/db.md (imported from the same text)' },
      ]),
    );
    // The copy is the same text: drafted once (here: already in PR #3 through its fingerprint).
    expect(plan.drafts.map((d) => d.doc.file)).not.toContain('copy/disk-full-logs.md');
    const twice = planImport([...docs, copy], { catalog: EMPTY, pullRequests: [], dupScore: 8 });
    expect(twice.skipped).toEqual([{ file: 'copy/disk-full-logs.md', reason: 'the same incident as disk-full-logs.md, imported once' }]);
  });

  it('a catalog entry about the same workload is the same knowledge only when its cause says the same', () => {
    const entry = (cause: string) =>
      [
        '---',
        'type: Incident',
        'title: checkout-api restarts',
        'resource: payments/checkout-api',
        'alerts: [KubePodCrashLooping]',
        '---',
        '## Symptom',
        '',
        'KubePodCrashLooping on checkout-api pods after a config rollout.',
        '',
        '## Cause',
        '',
        cause,
        '',
        '## Resolution',
        '',
        'kubectl rollout undo deploy/checkout-api -n payments',
        '',
      ].join('\n');
    const crash = [read()[0]!];
    const other = planImport(crash, {
      catalog: catalogOf({ 'incidents/heap.md': entry('The JVM heap flag left no room for non-heap memory, so the kernel OOM-killed the pods.') }),
      pullRequests: [],
      dupScore: 2,
    });
    expect(other.drafts).toHaveLength(1);
    const same = planImport(crash, {
      catalog: catalogOf({
        'incidents/cache.md': entry('The config set CACHE_URL to a host that did not resolve; the app exits on start when the cache is unreachable.'),
      }),
      pullRequests: [],
      dupScore: 2,
    });
    expect(same.drafts).toEqual([]);
    expect(same.skipped[0]?.reason).toMatch(/^the catalog already has it: incidents\/cache\.md \(score .* cause words shared\)$/);
  });
});

describe('filing a batch', () => {
  it('one branch named by its content, every entry in one commit under catalog.git.path, one PR whose markers find each postmortem again', async () => {
    const drafts = planImport(read(), { catalog: EMPTY, pullRequests: [], dupScore: 8 }).drafts;
    const pushed: DraftFile[] = [];
    const created: { title: string; body: string; head: string; labels?: readonly string[] }[] = [];
    const forge = {
      createPullRequest: async (p: { title: string; body: string; head: string; labels?: readonly string[] }) => {
        created.push(p);
        return pr(41, p.body, { head: p.head });
      },
    };
    const branches = { push: async (f: DraftFile) => (pushed.push(f), { branch: f.branch, commit: 'c0ffee' }) };
    const [g1, g2] = batches(drafts, 3);
    expect([g1?.length, g2?.length]).toEqual([3, 2]);
    const filed = await fileBatch(forge as never, branches, g1!, { labels: ['reprise'], prefix: 'kb/' });
    expect(filed).toEqual({ number: 41, url: 'https://forge.example/pr/41', files: g1!.map((d) => d.doc.file) });
    expect(pushed[0]?.branch).toMatch(/^reprise\/import\/postmortems-[0-9a-f]{12}$/);
    expect([pushed[0]!.path, ...(pushed[0]!.more ?? []).map((m) => m.path)]).toEqual(g1!.map((d) => `kb/${d.entry.path}`));
    expect(created[0]?.labels).toEqual(['reprise', 'postmortem-import']);
    expect(created[0]?.title).toMatch(/^KB: import 3 postmortems \(/);
    const again = planImport(read(), { catalog: EMPTY, pullRequests: [pr(41, created[0]!.body)], dupScore: 8 });
    expect(again.drafts.map((d) => d.doc.file)).toEqual(g2!.map((d) => d.doc.file));
    // Retrying the same batch pushes the same branch (the retry replaces a half-done attempt).
    await fileBatch(forge as never, branches, g1!, { labels: [] });
    expect(pushed[1]?.branch).toBe(pushed[0]?.branch);
    expect(created[0]!.body).not.toMatch(/@channel|<b>/);
  });
});
