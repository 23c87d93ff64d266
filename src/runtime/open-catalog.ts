import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/schema.js';
import { loadCatalog, parseCatalogFiles, readCatalogFiles } from '../core/catalog/load-catalog.js';
import { buildCatalogSnapshot, restoreCatalogSnapshot, savedTables, type CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import type { Entry, LintProblem } from '../core/types.js';
import type { Logger } from '../ports/logger.js';
import { catalogKey, decodeSavedCatalog, readSavedBytes, writeSavedCatalog } from './catalog-index-file.js';

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
  /** With an index file: `saved` when it was read back, else `built` and why. */
  index?: { from: 'saved' } | { from: 'built'; reason: string };
}

export interface LoadSnapshotOptions {
  /**
   * The saved index (catalog-index-file.ts): read back when it was built from the very same
   * files, else the catalog is indexed and the file (re)written. Absent: always indexed.
   */
  indexFile?: string;
  /** Where a failed write of the index file is reported (it never fails the load). */
  logger?: Logger;
  /** The snapshot's `builtAt` (default: now). */
  builtAt?: Date;
}

/**
 * Loads a catalog folder and indexes it for recall; broken entries are skipped and reported,
 * never fatal. The index is the exact postings index, updatable in place: a sync applies its
 * changes with `updateCatalogSnapshot` instead of re-indexing. With `indexFile`, a catalog whose
 * files have not changed since the index was saved is read back instead of parsed and indexed.
 */
export async function loadSnapshot(dir: string, opts: LoadSnapshotOptions = {}): Promise<LoadedSnapshot> {
  if (opts.indexFile === undefined) {
    const { entries, problems } = await loadCatalog(dir);
    return loaded(entries, new PostingsIndex(entries), problems, opts.builtAt);
  }
  const [files, bytes] = await Promise.all([readCatalogFiles(dir), readSavedBytes(opts.indexFile)]);
  const key = catalogKey(files);
  const read = Buffer.isBuffer(bytes) ? decodeSavedCatalog(bytes, key) : bytes;
  let reason: string;
  if ('saved' in read) {
    try {
      const { entries, problems, index, tables } = read.saved;
      const snapshot = restoreCatalogSnapshot(entries, PostingsIndex.fromSaved(entries, index), tables, opts.builtAt);
      return { snapshot, problems, skipped: problems.filter((p) => p.severity === 'error'), index: { from: 'saved' } };
    } catch (err) {
      reason = `the saved index does not fit its entries (${err instanceof Error ? err.message : String(err)})`;
    }
  } else reason = read.reason;
  const { entries, problems } = parseCatalogFiles(files);
  const index = new PostingsIndex(entries);
  const built = loaded(entries, index, problems, opts.builtAt);
  try {
    writeSavedCatalog(opts.indexFile, { key, entries, problems, index: index.saved(), tables: savedTables(built.snapshot) });
  } catch (err) {
    opts.logger?.warn({ err, file: opts.indexFile }, 'the catalog index could not be saved; the next start indexes the catalog again');
  }
  return { ...built, index: { from: 'built', reason } };
}

function loaded(entries: Entry[], index: PostingsIndex, problems: LintProblem[], builtAt = new Date()): LoadedSnapshot {
  return { snapshot: buildCatalogSnapshot(entries, index, builtAt), problems, skipped: problems.filter((p) => p.severity === 'error') };
}

/**
 * A new snapshot without one entry (leave-one-out evaluation), indexed afresh: `snapshot`
 * stays usable, which an in-place update would not allow.
 */
export function withoutEntry(snapshot: CatalogSnapshot, entryId: string): CatalogSnapshot {
  const entries = snapshot.entries.filter((e) => e.id !== entryId);
  return buildCatalogSnapshot(entries, new PostingsIndex(entries));
}
