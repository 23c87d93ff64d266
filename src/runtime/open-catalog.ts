import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/schema.js';
import { loadCatalog, parseCatalogFiles, readCatalogFiles, statCatalogFiles } from '../core/catalog/load-catalog.js';
import { buildCatalogSnapshot, restoreCatalogSnapshot, savedTables, type CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import type { Entry, LintProblem } from '../core/types.js';
import type { Logger } from '../ports/logger.js';
import {
  catalogKey,
  catalogStatKey,
  decodeSavedBytes,
  RACY_MS,
  readSavedBytes,
  statsProve,
  writeSavedCatalog,
  type SavedCatalog,
} from './catalog-index-file.js';

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
  /**
   * With an index file: `saved` when it was read back — `checked: 'stat'` when the files'
   * stats proved them unchanged (not read), `'content'` when they were read and hashed — else
   * `built` and why.
   */
  index?: { from: 'saved'; checked: 'stat' | 'content' } | { from: 'built'; reason: string };
  /**
   * Set when the index was served on the files' stats: reads the files and hashes them, as a
   * start over changed files would. Resolves `undefined` when they are what the index was
   * built from, else with the catalog built from them (and saved again). Run after ready.
   */
  verify?: () => Promise<LoadedSnapshot | undefined>;
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
  /** How long before the stats were recorded a change still makes them prove nothing (default {@link RACY_MS}; tests). */
  racyMs?: number;
}

/**
 * Loads a catalog folder and indexes it for recall; broken entries are skipped and reported,
 * never fatal. The index is the exact postings index, updatable in place: a sync applies its
 * changes with `updateCatalogSnapshot` instead of re-indexing. With `indexFile`, a catalog whose
 * files have not changed since the index was saved is read back instead of parsed and indexed.
 */
export async function loadSnapshot(dir: string, opts: LoadSnapshotOptions = {}): Promise<LoadedSnapshot> {
  const indexFile = opts.indexFile;
  if (indexFile === undefined) {
    const { entries, problems } = await loadCatalog(dir);
    return loaded(entries, new PostingsIndex(entries), problems, opts.builtAt);
  }
  // The moment before the stats: a file changed after it may not show in them (RACY_MS).
  const statAt = Date.now();
  const [stats, bytes] = await Promise.all([statCatalogFiles(dir), readSavedBytes(indexFile)]);
  const stat = { key: catalogStatKey(stats.root, stats.files), at: statAt };
  const read = Buffer.isBuffer(bytes) ? decodeSavedBytes(bytes) : bytes;
  const saved = 'saved' in read ? read.saved : undefined;
  let reason = 'reason' in read ? read.reason : '';
  if (saved && statsProve(saved, stat.key, stats.files, opts.racyMs ?? RACY_MS)) {
    const restored = restore(saved, opts.builtAt);
    if ('snapshot' in restored) {
      // The files stand as they did when they were read: the index is theirs. Reading them
      // again (most of a start's time over 10,000 entries) is left to `verify`, after ready.
      const verify = async (): Promise<LoadedSnapshot | undefined> => {
        if (catalogKey(await readCatalogFiles(dir)) === saved.key) return undefined;
        return loadSnapshot(dir, { ...opts, racyMs: Number.POSITIVE_INFINITY });
      };
      return { ...restored, index: { from: 'saved', checked: 'stat' }, verify };
    }
    reason = restored.reason;
  }
  const files = await readCatalogFiles(dir);
  const key = catalogKey(files);
  if (saved && saved.key === key) {
    const restored = restore(saved, opts.builtAt);
    if ('snapshot' in restored) {
      // The same files with other stats (touched, checked out again, copied): saved with these, the next start need not read them.
      save(indexFile, { ...saved, stat }, opts.logger);
      return { ...restored, index: { from: 'saved', checked: 'content' } };
    }
    reason = restored.reason;
  } else if (saved) reason = 'the catalog or the code changed since the index was saved';
  const { entries, problems } = parseCatalogFiles(files);
  const index = new PostingsIndex(entries);
  const built = loaded(entries, index, problems, opts.builtAt);
  save(indexFile, { key, entries, problems, index: index.saved(), tables: savedTables(built.snapshot), stat }, opts.logger);
  return { ...built, index: { from: 'built', reason } };
}

/** The snapshot a saved catalog holds, or why it does not fit together. */
function restore(saved: SavedCatalog, builtAt: Date | undefined): Omit<LoadedSnapshot, 'index'> | { reason: string } {
  try {
    const { entries, problems, index, tables } = saved;
    const snapshot = restoreCatalogSnapshot(entries, PostingsIndex.fromSaved(entries, index), tables, builtAt);
    return { snapshot, problems, skipped: problems.filter((p) => p.severity === 'error') };
  } catch (err) {
    return { reason: `the saved index does not fit its entries (${err instanceof Error ? err.message : String(err)})` };
  }
}

/** Writes the index file; a failure is logged, never thrown (the catalog still serves). */
function save(file: string, saved: SavedCatalog, logger: Logger | undefined): void {
  try {
    writeSavedCatalog(file, saved);
  } catch (err) {
    logger?.warn({ err, file }, 'the catalog index could not be saved; the next start indexes the catalog again');
  }
}

function loaded(entries: Entry[], index: PostingsIndex, problems: LintProblem[], builtAt = new Date()): LoadedSnapshot {
  return { snapshot: buildCatalogSnapshot(entries, index, builtAt), problems, skipped: problems.filter((p) => p.severity === 'error') };
}
