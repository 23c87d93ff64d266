import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildFullScanIndex } from '../../../src/core/catalog/search-corpus.js';
import { buildCatalogSnapshot, updateCatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import type { CatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../../../src/core/search/postings-index.js';
import type { Entry } from '../../../src/core/types.js';
import { makeEntry } from '../search/make-entry.js';

const ALERTS = ['KubePodCrashLooping', 'EtcdNoLeader', 'NodeDiskFull'];
const SOURCES = ['https://wiki/a', 'https://wiki/a/', 'https://wiki/b?x=1'];

const entry = (id: string) =>
  fc
    .record({
      alerts: fc.subarray(ALERTS, { maxLength: 2 }),
      status: fc.constantFrom('active', 'active', 'draft', 'retired'),
      source: fc.option(fc.constantFrom(...SOURCES), { nil: undefined }),
      title: fc.constantFrom('disk full', 'pod crash', 'etcd leader'),
      // Pointer pages resolve against the whole catalog: by path, path without .md, or alert.
      pointsTo: fc.option(fc.constantFrom('a.md', 'b', 'f.md', 'EtcdNoLeader'), { nil: undefined, freq: 3 }),
    })
    .map(
      ({ pointsTo, ...t }) =>
        ({
          ...makeEntry(id, { ...t, status: t.status as Entry['status'], ...(t.source ? { source: t.source } : {}) }),
          ...(pointsTo ? { pointsTo } : {}),
        }) as Entry,
    );

const ids = (xs: readonly Entry[]): string[] => xs.map((e) => e.id);

/** Everything a snapshot answers, as plain data. */
function tables(s: CatalogSnapshot): unknown {
  const sorted = <V>(m: ReadonlyMap<string, V>, f: (v: V) => unknown) =>
    [...m].map(([k, v]) => [k, f(v)]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return {
    entries: ids(s.entries),
    byId: sorted(s.byId, (e) => e),
    byAlert: sorted(s.byAlert, ids),
    knownAlerts: [...s.knownAlerts].sort(),
    bySource: sorted(s.bySource, (e) => e.id),
    nameWords: sorted(s.nameWords, (w) => w),
    family: sorted(s.family, (t) => t),
    nameFrequency: sorted(s.nameFrequency, (n) => n),
    hits: s.index.search(['disk', 'pod', 'etcd', 'crash'], 20).map((c) => [c.entry.id, c.score]),
  };
}

describe('updateCatalogSnapshot', () => {
  it('equals a snapshot built afresh over the new entries (lists in id order)', () => {
    const idArb = fc.constantFrom('a.md', 'b.md', 'c/d.md', 'c/e.md', 'f.md', 'g.md');
    fc.assert(
      fc.property(
        fc.uniqueArray(idArb, { maxLength: 6 }).chain((xs) => fc.tuple(...xs.map(entry))),
        fc.array(fc.record({ upserts: fc.array(idArb.chain(entry), { maxLength: 3 }), removedIds: fc.subarray(['a.md', 'c/d.md', 'g.md', 'zz.md']) }), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.boolean(),
        (initial, changes, inIdOrder) => {
          // In id order the list is edited by position; otherwise filtered and merged.
          const start = inIdOrder ? [...initial].sort((a, b) => (a.id < b.id ? -1 : 1)) : [...initial].sort((a, b) => (a.id < b.id ? 1 : -1));
          let snap = buildCatalogSnapshot(start, new PostingsIndex(start));
          const live = new Map(start.map((e) => [e.id, e]));
          for (const change of changes) {
            snap = updateCatalogSnapshot(snap, change);
            for (const id of change.removedIds) live.delete(id);
            for (const e of change.upserts) live.set(e.id, e);
          }
          const now = [...live.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
          const want = tables(buildCatalogSnapshot(now, new PostingsIndex(now))) as Record<string, unknown>;
          const got = tables(snap) as Record<string, unknown>;
          if (inIdOrder) expect(got).toEqual(want);
          else {
            // Out of id order, which of two entries sharing a source wins is the build order's
            // business: compare what does not depend on it.
            expect([...(got['entries'] as string[])].sort()).toEqual(want['entries']);
            for (const key of ['byId', 'knownAlerts', 'family', 'hits']) expect(got[key], key).toEqual(want[key]);
            // A pointer's names join its target's in build order.
            const unordered = (t: unknown) => (t as [string, string[][]][]).map(([k, lists]) => [k, lists.map((l) => l.join(' ')).sort()]);
            expect(unordered(got['nameWords']), 'nameWords').toEqual(unordered(want['nameWords']));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses a snapshot whose index cannot follow changes', () => {
    const snap = buildCatalogSnapshot([], buildFullScanIndex([]));
    expect(() => updateCatalogSnapshot(snap, { upserts: [], removedIds: [] })).toThrow(/no updatable index/);
  });
});
