import { fileURLToPath } from 'node:url';
import { loadCatalog } from '../core/catalog/load-catalog.js';
import { buildCatalogSnapshot, type CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import type { LintProblem } from '../core/types.js';

/** The starter catalog shipped with the package (`catalog/` beside `dist/`). */
export const BUNDLED_CATALOG = fileURLToPath(new URL('../../catalog', import.meta.url));

export interface LoadedSnapshot {
  snapshot: CatalogSnapshot;
  problems: LintProblem[];
  /** Problems of severity error: the entries they name were skipped. */
  skipped: LintProblem[];
}

/**
 * Loads a catalog folder and indexes it for recall; broken entries are skipped and reported,
 * never fatal. The index is the exact postings index, updatable in place: a sync applies its
 * changes with `updateCatalogSnapshot` instead of re-indexing.
 */
export async function loadSnapshot(dir: string): Promise<LoadedSnapshot> {
  const { entries, problems } = await loadCatalog(dir);
  const snapshot = buildCatalogSnapshot(entries, new PostingsIndex(entries));
  return { snapshot, problems, skipped: problems.filter((p) => p.severity === 'error') };
}

/**
 * A new snapshot without one entry (leave-one-out evaluation), indexed afresh: `snapshot`
 * stays usable, which an in-place update would not allow.
 */
export function withoutEntry(snapshot: CatalogSnapshot, entryId: string): CatalogSnapshot {
  const entries = snapshot.entries.filter((e) => e.id !== entryId);
  return buildCatalogSnapshot(entries, new PostingsIndex(entries));
}
