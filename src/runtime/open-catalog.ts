import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/schema.js';
import { loadCatalog } from '../core/catalog/load-catalog.js';
import { buildCatalogSnapshot, type CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import type { LintProblem } from '../core/types.js';

/** The starter catalog shipped with the package (`catalog/` beside `dist/`). */
export const BUNDLED_CATALOG = fileURLToPath(new URL('../../catalog', import.meta.url));

/**
 * The one rule for which catalog folder a command reads: the folder it was given (`--catalog`);
 * else the configured `catalog.dir` when it exists; else, when that is the default `catalog`
 * (beside the config file or in the working directory) and there is none, the bundled starter
 * catalog — so `npm start` on a fresh clone serves something. A configured folder that does not
 * exist is returned as it is (loading it says so).
 */
export function catalogFolder(config: Pick<Config, 'catalog'>, given?: string): { dir: string; bundled: boolean } {
  if (given !== undefined) return { dir: given, bundled: false };
  const dir = config.catalog.dir;
  if (!existsSync(dir) && basename(dir) === 'catalog') return { dir: BUNDLED_CATALOG, bundled: true };
  return { dir, bundled: false };
}

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
