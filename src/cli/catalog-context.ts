import { fileURLToPath } from 'node:url';
import { buildFlexIndex } from '../adapters/flexsearch/flex-index.js';
import { loadCatalog } from '../core/catalog/load-catalog.js';
import { buildCatalogSnapshot, type CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import type { LintProblem } from '../core/types.js';

/** The starter catalog shipped with the package (`catalog/` beside `dist/`). */
export const BUNDLED_CATALOG = fileURLToPath(new URL('../../catalog', import.meta.url));

export interface LoadedSnapshot {
  snapshot: CatalogSnapshot;
  problems: LintProblem[];
  /** Problems of severity error: the entries they name were skipped. */
  skipped: LintProblem[];
}

/** Loads a catalog folder and indexes it; broken entries are skipped and reported, never fatal. */
export async function loadSnapshot(dir: string): Promise<LoadedSnapshot> {
  const { entries, problems } = await loadCatalog(dir);
  const snapshot = buildCatalogSnapshot(entries, buildFlexIndex(entries));
  return { snapshot, problems, skipped: problems.filter((p) => p.severity === 'error') };
}

/** Removes one entry (leave-one-out evaluation) and re-indexes. */
export function withoutEntry(snapshot: CatalogSnapshot, entryId: string): CatalogSnapshot {
  const entries = snapshot.entries.filter((e) => e.id !== entryId);
  return buildCatalogSnapshot(entries, buildFlexIndex(entries));
}
