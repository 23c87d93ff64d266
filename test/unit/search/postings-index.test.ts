import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateCatalog } from '../../../bench/synthetic-catalog.js';
import { generateQueries } from '../../../bench/synthetic-queries.js';
import { loadCatalog } from '../../../src/core/catalog/load-catalog.js';
import { buildFullScanIndex } from '../../../src/core/catalog/search-corpus.js';
import { PostingsIndex } from '../../../src/core/search/postings-index.js';
import { tokenize } from '../../../src/core/tokenize.js';
import type { Candidate, Entry } from '../../../src/core/types.js';
import type { SearchIndex } from '../../../src/ports/search-index.js';
import { makeEntry } from './make-entry.js';

const CORPUS = '/work/shared/corpus';

/** Ids and scores: scores are bit-identical to the exhaustive scan's, by design (not just close). */
const view = (cs: readonly Candidate[]): [string, number][] => cs.map((c) => [c.entry.id, c.score]);

function expectSame(index: SearchIndex, scan: SearchIndex, q: string[], k = 20, weights?: ReadonlyMap<string, number>): void {
  expect(view(index.search(q, k, weights)), q.join(' ')).toEqual(view(scan.search(q, k, weights)));
}

describe('PostingsIndex on the runbook corpus', () => {
  let entries: Entry[];
  let index: PostingsIndex;
  let scan: SearchIndex;
  beforeAll(async () => {
    ({ entries } = await loadCatalog(`${CORPUS}/runbooks`));
    index = new PostingsIndex(entries);
    scan = buildFullScanIndex(entries);
  });

  it('returns the exhaustive top 20 with the same scores for alert names and real alert texts', () => {
    expect(index.size).toBe(108);
    for (const e of entries) expectSame(index, scan, tokenize(e.id.split('/').pop()!.replace(/\.md$/, '')));
    const cases = readFileSync(`${CORPUS}/cases-dev.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { payload: { alerts: Array<{ labels: Record<string, string>; annotations: Record<string, string> }> } });
    for (const c of cases.filter((_, i) => i % 5 === 0)) {
      const a = c.payload.alerts[0]!;
      expectSame(index, scan, tokenize([a.annotations['summary'], a.annotations['description'], ...Object.values(a.labels)].join(' ')), 5);
    }
  });

  it('scores one entry as the exhaustive scan does', () => {
    const q = tokenize('pod crash looping restarts container memory');
    for (const e of entries) expect(index.score(q, e.id)).toBe(scan.score(q, e.id));
    expect(index.score(q, 'nope.md')).toBe(0);
  });
});

describe('PostingsIndex pruning on a 1,500-entry synthetic catalog', () => {
  const catalog = generateCatalog(1500, 5);
  const index = new PostingsIndex(catalog.entries);
  const scan = buildFullScanIndex(catalog.entries);
  const queries = generateQueries(catalog, 25, 9);

  it('keeps the exhaustive top k for k = 1, 5, 20', () => {
    for (const q of queries) for (const k of [1, 5, 20]) expectSame(index, scan, q.tokens, k);
  });

  it('applies query weights (0 drops a term, absent = 1) exactly as the exhaustive scan', () => {
    for (const q of queries.slice(0, 15)) {
      const terms = [...new Set(q.tokens)];
      const weights = new Map(terms.filter((_, i) => i % 3 === 0).map((t, i) => [t, i % 2 === 0 ? 0 : 2.5]));
      expectSame(index, scan, q.tokens, 20, weights);
    }
  });

  it('still ranks exactly with negative weights (no bounds then)', () => {
    const q = queries[0]!.tokens;
    expectSame(
      index,
      scan,
      q,
      10,
      new Map([
        [q[0]!, -1],
        [q[1]!, 0.5],
      ]),
    );
  });
});

describe('PostingsIndex edge cases', () => {
  const entries = [
    makeEntry('b.md', { title: 'disk full', body: 'check the disk' }),
    makeEntry('a.md', { title: 'disk full', body: 'check the disk', status: 'retired' }),
    makeEntry('c.md', { title: 'pod crash', tags: ['kube'], alerts: ['KubePodCrashLooping'] }),
    makeEntry('d.md', { description: 'etcd leader lost', body: 'etcd quorum' }),
  ];
  const index = new PostingsIndex(entries);
  const scan = buildFullScanIndex(entries);

  it('breaks ties by id and keeps non-active entries', () => {
    const hits = index.search(tokenize('disk'), 20);
    expect(hits.map((h) => h.entry.id)).toEqual(['a.md', 'b.md']);
    expect(hits[0]!.score).toBe(hits[1]!.score);
    expect(index.search(tokenize('disk'), 1).map((h) => h.entry.id)).toEqual(['a.md']);
  });

  it('returns nothing for k < 1, an empty query or unknown terms; a fractional k counts whole', () => {
    expect(index.search(['disk'], 0)).toEqual([]);
    expect(index.search(['disk'], 0.5)).toEqual([]);
    expect(index.search(['disk'], Number.NaN)).toEqual([]);
    expect(index.search([], 20)).toEqual([]);
    expect(index.search(['zzz'], 20)).toEqual([]);
    expect(index.search(['disk'], 1.7)).toHaveLength(1);
    expect(index.search(['disk'], Number.POSITIVE_INFINITY)).toHaveLength(2);
  });

  it('counts a repeated query term once and returns a fresh array', () => {
    const hits = index.search(['etcd', 'etcd'], 20);
    expect(view(hits)).toEqual(view(scan.search(['etcd'], 20)));
    hits.pop();
    expect(index.search(['etcd'], 20)).toHaveLength(1);
  });

  it('scores counts too large to pack (title, tags, description, body) exactly', () => {
    const heavy = [
      ...entries,
      makeEntry('heavy.md', { title: 'disk '.repeat(40), tags: Array(40).fill('kube'), description: 'etcd '.repeat(100), body: 'pod '.repeat(70_000) }),
    ];
    const big = new PostingsIndex(heavy);
    const full = buildFullScanIndex(heavy);
    for (const q of [['disk'], ['kube'], ['etcd', 'quorum'], ['pod', 'crash'], ['disk', 'kube', 'etcd', 'pod']]) expectSame(big, full, q, 3);
    big.update([], ['b.md']);
    expectSame(big, buildFullScanIndex(heavy.filter((e) => e.id !== 'b.md')), ['disk', 'kube', 'etcd', 'pod'], 3);
  });

  it('handles an empty catalog, and grows from one', () => {
    const empty = new PostingsIndex([]);
    expect(empty.size).toBe(0);
    expect(empty.search(['disk'], 20)).toEqual([]);
    empty.update(entries, []);
    expect(empty.size).toBe(4);
    expectSame(empty, scan, tokenize('disk pod etcd kube'), 2);
  });
});

describe('PostingsIndex updates', () => {
  const catalog = generateCatalog(600, 8);
  const queries = generateQueries(catalog, 15, 3).map((q) => q.tokens);
  const rewrite = (e: Entry, i: number): Entry => ({ ...e, title: `${e.title} rewritten ${catalog.vocabulary[i % 50]}`, body: e.body.slice(0, 300) });

  function expectLikeFresh(index: PostingsIndex, entries: readonly Entry[]): void {
    const scan = buildFullScanIndex(entries);
    expect(index.size).toBe(entries.length);
    for (const q of queries) expectSame(index, scan, q, 10);
    for (const e of entries.slice(0, 20)) expect(index.score(queries[0]!, e.id)).toBe(scan.score(queries[0]!, e.id));
  }

  it('adds, replaces and removes entries like a rebuild, and ignores unknown ids', () => {
    const index = new PostingsIndex(catalog.entries);
    let entries = [...catalog.entries];
    const replaced = entries.slice(10, 15).map(rewrite);
    const added = generateCatalog(20, 99).entries.map((e) => ({ ...e, id: `new/${e.id}` }));
    const removed = entries.slice(40, 45).map((e) => e.id);
    index.update([...replaced, ...added], [...removed, 'not/there.md']);
    entries = entries.filter((e) => !removed.includes(e.id)).map((e) => replaced.find((r) => r.id === e.id) ?? e);
    expectLikeFresh(index, [...entries, ...added]);
  });

  it('stays exact through enough churn to compact, many times over', () => {
    const index = new PostingsIndex(catalog.entries.slice(0, 300));
    const live = new Map(catalog.entries.slice(0, 300).map((e) => [e.id, e]));
    for (let round = 0; round < 12; round++) {
      const remove = [...live.keys()].filter((_, i) => i % 7 === round % 7).slice(0, 15);
      const upsert = catalog.entries.slice(300 + round * 20, 320 + round * 20).concat([...live.values()].slice(0, 3).map(rewrite));
      index.update(upsert, remove);
      for (const id of remove) live.delete(id);
      for (const e of upsert) live.set(e.id, e);
    }
    expectLikeFresh(index, [...live.values()]);
  });

  it('keeps its pruning bounds valid when documents grow longer on average (no compaction)', () => {
    // X holds "target" once in a long body. While the other documents are short, that is a
    // tiny tf~; once long documents arrive it is not, and X must beat A, which was ahead.
    const filler = (n: number): string => 'filler '.repeat(n);
    const short = Array.from({ length: 19 }, (_, i) => makeEntry(`s${i}.md`, { body: 'word' }));
    const a = makeEntry('a.md', { body: `anchor ${filler(1499)}` });
    const x = makeEntry('x.md', { body: `target ${filler(999)}` });
    const index = new PostingsIndex([...short, a, x], { churnShare: Number.POSITIVE_INFINITY });
    expect(index.search(['anchor', 'target'], 1)[0]?.entry.id).toBe('x.md');
    const long = Array.from({ length: 50 }, (_, i) => makeEntry(`l${i}.md`, { body: filler(5000) }));
    index.update(long, []);
    const scan = buildFullScanIndex([...short, a, x, ...long]);
    expect(scan.search(['anchor', 'target'], 1)[0]?.entry.id).toBe('x.md');
    expectSame(index, scan, ['anchor', 'target'], 1);
  });

  it('takes the statistics of a field used for the first time into account', () => {
    const bare = catalog.entries.slice(0, 50).map((e) => ({ ...e, tags: [], description: '' }));
    const index = new PostingsIndex(bare);
    const tagged = catalog.entries.slice(50, 53);
    index.update(tagged, []);
    expectLikeFresh(index, [...bare, ...tagged]);
  });

  it('rebuilds when an indexed entry was mutated in place, instead of corrupting its statistics', () => {
    const entries = catalog.entries.slice(0, 100).map((e) => ({ ...e }));
    const index = new PostingsIndex(entries);
    const victim = entries[3]!;
    victim.body = 'completely different words now';
    index.update([{ ...victim, title: 'replaced' }], []);
    expectLikeFresh(
      index,
      entries.map((e) => (e.id === victim.id ? { ...victim, title: 'replaced' } : e)),
    );
  });
});
