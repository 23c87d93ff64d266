import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFlexIndex } from '../../../../src/adapters/flexsearch/flex-index.js';
import { loadCatalog } from '../../../../src/core/catalog/load-catalog.js';
import { parseEntry } from '../../../../src/core/catalog/parse-entry.js';
import { buildFullScanIndex } from '../../../../src/core/catalog/search-corpus.js';
import { tokenize } from '../../../../src/core/tokenize.js';
import type { Entry } from '../../../../src/core/types.js';
import type { SearchIndex } from '../../../../src/ports/search-index.js';

const CORPUS = '/work/shared/corpus';

interface Case {
  id: string;
  expect: { runbook?: string };
  payload: { alerts: Array<{ labels: Record<string, string>; annotations: Record<string, string> }> };
}

describe('FlexSearch candidates + BM25 on the runbook corpus', () => {
  let index: SearchIndex;
  let scan: SearchIndex;
  let entries: Entry[];
  beforeAll(async () => {
    ({ entries } = await loadCatalog(`${CORPUS}/runbooks`));
    index = buildFlexIndex(entries);
    scan = buildFullScanIndex(entries);
  });

  it('indexes every entry', () => {
    expect(index.size).toBe(108);
  });

  it('finds the runbook named after an alert, and agrees with a full scan, for 20 alert names', () => {
    const names = entries.filter((_, i) => i % 5 === 0).map((e) => e.id.split('/').pop()!.replace(/\.md$/, ''));
    expect(names.length).toBeGreaterThanOrEqual(20);
    for (const name of names) {
      const q = tokenize(name);
      const flex = index.search(q, 20);
      const full = scan.search(q, 20);
      expect(flex[0]?.entry.id, name).toBe(full[0]?.entry.id);
      expect(flex[0]?.entry.id.endsWith(`/${name}.md`), name).toBe(true);
      expect(flex.map((c) => c.score)).toEqual(full.map((c) => c.score));
    }
  });

  it('agrees with a full scan on real alert texts (summary, description, labels), names hidden or not', () => {
    const cases = readFileSync(`${CORPUS}/cases-dev.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Case);
    for (const c of cases.filter((_, i) => i % 15 === 0)) {
      const a = c.payload.alerts[0]!;
      const q = tokenize([a.annotations['summary'], a.annotations['description'], ...Object.values(a.labels)].join(' '));
      const flex = index.search(q, 20);
      expect(
        flex.map((x) => x.entry.id),
        c.id,
      ).toEqual(scan.search(q, 20).map((x) => x.entry.id));
    }
  });

  it('applies query term weights exactly as a full scan does', () => {
    const q = tokenize('pod crash loop restart container memory');
    const weights = new Map([
      ['crash', 3],
      ['memory', 0],
    ]);
    const flex = index.search(q, 20, weights);
    expect(flex.map((x) => x.entry.id)).toEqual(scan.search(q, 20, weights).map((x) => x.entry.id));
    expect(flex[0]?.score).toBeCloseTo(index.score(q, flex[0]!.entry.id, weights), 12);
    expect(flex.map((x) => x.score)).not.toEqual(index.search(q, 20).map((x) => x.score));
  });

  it('returns sorted, positive scores capped at k, in a fresh array', () => {
    const q = tokenize('pod crash looping restarts');
    const hits = index.search(q, 5);
    expect(hits).toHaveLength(5);
    expect(hits.every((h, i) => h.score > 0 && (i === 0 || hits[i - 1]!.score >= h.score))).toBe(true);
    expect(hits[0]?.entry.id).toBe('kubernetes/KubePodCrashLooping.md');
    hits.pop();
    expect(index.search(q, 5)).toHaveLength(5);
    expect(index.score(q, 'kubernetes/KubePodCrashLooping.md')).toBe(hits[0]?.score);
    expect(index.score(q, 'nope.md')).toBe(0);
  });

  it('returns nothing for an empty query, k = 0 or unknown terms', () => {
    expect(index.search([], 20)).toEqual([]);
    expect(index.search(['pod'], 0)).toEqual([]);
    expect(index.search(['zzzunknownzzz'], 20)).toEqual([]);
  });
});

describe('FlexSearch index on a small catalog', () => {
  const entry = (id: string, title: string, status = 'active'): Entry =>
    parseEntry(id, `---\ntype: Playbook\ntitle: ${title}\nstatus: ${status}\n---\nbody\n`).entry!;

  it('ORs query terms, breaks ties by id and keeps non-active entries (status is exposed)', () => {
    const entries = [entry('b.md', 'disk full'), entry('a.md', 'disk full', 'retired'), entry('c.md', 'pod crash')];
    const index = buildFlexIndex(entries);
    const hits = index.search(tokenize('disk crash'), 20);
    expect(hits.map((h) => h.entry.id)).toEqual(['c.md', 'a.md', 'b.md']);
    expect(hits[1]?.entry.status).toBe('retired');
    expect(hits[1]?.score).toBe(hits[2]?.score);
    expect(
      buildFullScanIndex(entries)
        .search(tokenize('disk crash'), 20)
        .map((h) => h.entry.id),
    ).toEqual(['c.md', 'a.md', 'b.md']);
  });

  it('handles an empty catalog', () => {
    const index = buildFlexIndex([]);
    expect(index.size).toBe(0);
    expect(index.search(['disk'], 20)).toEqual([]);
  });
});
