import { buildCatalogSnapshot, updateCatalogSnapshot } from '../src/core/recall/catalog-snapshot.js';
import type { CatalogChange } from '../src/core/recall/catalog-snapshot.js';
import type { UpdatableSearchIndex } from '../src/ports/search-index.js';
import type { Entry } from '../src/core/types.js';
import { percentile } from './percentile.js';
import { generateCatalog } from './synthetic-catalog.js';
import type { SyntheticCatalog } from './synthetic-catalog.js';

/** Catalog changes applied in place (`updateCatalogSnapshot`), as a git sync would. */
export interface UpdateResult {
  updates: number;
  /** Entries each update touches: replaced + added + removed. */
  changed: number;
  /** One update: the index updated in place and the snapshot's tables patched (ms). */
  p50Ms: number;
  maxMs: number;
  /** `buildCatalogSnapshot` alone over the catalog (the index build comes on top of it). */
  snapshotBuildMs: number;
}

const REPLACED = 6;
const ADDED = 2;
const REMOVED = 2;

/**
 * `updates` changes of 10 entries each (6 rewritten, 2 new, 2 deleted) to the snapshot over
 * `index`, each timed. The entries' new text comes from another synthetic catalog.
 */
export function runUpdateBench(catalog: SyntheticCatalog, index: UpdatableSearchIndex, updates: number, log: (line: string) => void): UpdateResult {
  // In id order, as loadCatalog returns a catalog (the snapshot then edits its list by position).
  const sorted = [...catalog.entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const t0 = process.hrtime.bigint();
  let snapshot = buildCatalogSnapshot(sorted, index);
  const snapshotBuildMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const pool = generateCatalog(Math.min(catalog.entries.length, 500), 77).entries;
  const ids = catalog.entries.map((e) => e.id);
  const text = (i: number, id: string): Entry => ({ ...pool[i % pool.length]!, id });
  const times: number[] = [];
  for (let u = 0; u < updates; u++) {
    const upserts: Entry[] = [];
    for (let j = 0; j < REPLACED; j++) upserts.push(text(u * 10 + j, ids[(u * 7919 + j * 104_729) % ids.length]!));
    for (let j = 0; j < ADDED; j++) upserts.push(text(u * 10 + REPLACED + j, `bench-new/${u}-${j}.md`));
    const removedIds: string[] = [];
    for (let j = 0; j < REMOVED; j++) {
      const at = (u * 15_485_863 + j * 32_452_843) % ids.length;
      if (upserts.some((e) => e.id === ids[at])) continue;
      removedIds.push(...ids.splice(at, 1));
    }
    ids.push(...upserts.slice(REPLACED).map((e) => e.id));
    const change: CatalogChange = { upserts, removedIds };
    const t = process.hrtime.bigint();
    snapshot = updateCatalogSnapshot(snapshot, change);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const result = { updates, changed: REPLACED + ADDED + REMOVED, p50Ms: percentile(times, 50), maxMs: times[times.length - 1] ?? Number.NaN, snapshotBuildMs };
  log(
    `  update of ${result.changed} entries: p50 ${result.p50Ms.toFixed(3)} ms, max ${result.maxMs.toFixed(3)} ms (${updates} updates; snapshot build ${snapshotBuildMs.toFixed(1)} ms)`,
  );
  return result;
}
