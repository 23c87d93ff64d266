/**
 * The catalog `serve` answers from: a folder read once at start, or a git remote kept in a
 * local clone and re-indexed when its HEAD moves (issue 6 item 2). Either way the bot reads
 * `current()`, `/readyz` reads `check()`, and the control socket's `catalog sync` calls
 * `syncNow()`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { CatalogSync, type SyncResult } from '../core/catalog/catalog-sync.js';
import { RepriseError } from '../core/errors.js';
import { buildCatalogSnapshot, type CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { PostingsIndex } from '../core/search/postings-index.js';
import type { ReadinessCheck } from '../http/readiness.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { LintProblem } from '../core/types.js';
import { CATALOG_INDEX_FILE } from './catalog-index-file.js';
import { catalogFolder, loadSnapshot, type LoadedSnapshot } from './open-catalog.js';

/** What `reprise catalog sync` prints. */
export interface SyncReply extends Omit<SyncResult, 'skipped'> {
  remote: string;
  branch: string;
  skipped: { file: string; line: number; rule: string; message: string }[];
}

export interface ServedCatalog {
  readonly source: 'dir' | 'git';
  current(): CatalogSnapshot;
  check(): ReadinessCheck;
  /** The git sync, when the catalog comes from git. */
  readonly sync: CatalogSync | undefined;
  /**
   * Fetch now and wait for the index (the control socket's `POST /v1/catalog/sync`).
   * @throws RepriseError `not_found` without git, `unavailable` when the remote failed.
   */
  syncNow(): Promise<SyncReply>;
  /** Starts polling (git only). */
  start(): void;
  stop(): Promise<void>;
}

/** Where the clone lives: `catalog.git.clone_dir`, else `catalog-git` in the data dir. */
export function cloneDir(config: Config): string {
  return config.catalog.git?.clone_dir ?? join(config.store.data_dir, 'catalog-git');
}

/** The catalog folder inside the clone: what a git-synced bot indexes. */
export function cloneCatalogDir(config: Config): string {
  const path = config.catalog.git?.path ?? '';
  return path === '' ? cloneDir(config) : join(cloneDir(config), ...path.split('/'));
}

/** Where a command beside the bot reads the catalog the bot serves, and what it is. */
export interface ServedFolder {
  dir: string;
  /** The bundled starter catalog (no `catalog.dir` folder). */
  bundled: boolean;
  /** The bot's git clone (when `catalog.git` is set): its HEAD is what the bot indexed. */
  clone?: string;
}

/**
 * The catalog a running bot answers from, for the commands that must answer the same
 * (`recall`, `search`, `mcp`): `given` (`--catalog`), else the bot's git clone when
 * `catalog.git` is set, else the folder `serve` reads ({@link catalogFolder}). Never fetches
 * or writes the clone: the bot owns it. A string is why there is none, with the fix.
 */
export function servedCatalogFolder(config: Config, given?: string): ServedFolder | string {
  if (given !== undefined) return existsSync(given) ? { dir: given, bundled: false } : `catalog ${given} does not exist`;
  if (config.catalog.git) {
    const dir = cloneCatalogDir(config);
    if (!existsSync(dir))
      return `catalog.git is set but the bot's clone ${dir} does not exist yet: start \`reprise serve\` once (it clones), or pass --catalog DIR`;
    return { dir, bundled: false, clone: cloneDir(config) };
  }
  const { dir, bundled } = catalogFolder(config);
  return existsSync(dir) ? { dir, bundled } : `catalog ${dir} does not exist; pass --catalog DIR or set catalog.dir in --config`;
}

/**
 * A folder read once at start (broken entries skipped and logged by the caller). With
 * `indexFile`, an unchanged catalog is read back from the index saved by an earlier start.
 */
export async function staticCatalog(dir: string, bundled: boolean, logger: Logger, indexFile?: string): Promise<ServedCatalog> {
  const loaded = await loadSnapshot(dir, { ...(indexFile !== undefined ? { indexFile } : {}), logger });
  let { snapshot, problems, skipped } = loaded;
  const { index } = loaded;
  const report = (): number => {
    for (const p of problems.filter((x) => x.severity === 'warning' && x.rule === 'file-outside-catalog'))
      logger.warn({ file: p.file, rule: p.rule }, p.message);
    for (const p of skipped) logger.warn({ file: p.file, line: p.line, rule: p.rule }, `catalog entry skipped: ${p.message}`);
    return new Set(skipped.map((p) => p.file)).size;
  };
  let skippedFiles = report();
  logger.info(
    {
      catalog: dir,
      entries: snapshot.entries.length,
      skippedFiles,
      problems: problems.length,
      ...(index ? { index: index.from, ...('reason' in index ? { why: index.reason } : { checked: index.checked }) } : {}),
    },
    'catalog indexed',
  );
  // Served on the files' stats: their bytes are read once the bot is ready, and a catalog that
  // differs after all (a file system whose stats lie) replaces the one served.
  let verifying: Promise<void> | undefined;
  const verify = (check: () => Promise<LoadedSnapshot | undefined>): Promise<void> =>
    check().then(
      (fresh) => {
        if (!fresh) return void logger.debug({ catalog: dir }, 'catalog files read: the saved index is theirs');
        ({ snapshot, problems, skipped } = fresh);
        skippedFiles = report();
        logger.warn(
          { catalog: dir, entries: snapshot.entries.length },
          'the catalog files differ from the saved index their stats matched; serving them as they are now',
        );
      },
      (err: unknown) => logger.warn({ err, catalog: dir }, 'reading the catalog files to confirm the saved index failed; serving the saved index'),
    );
  return {
    source: 'dir',
    sync: undefined,
    current: () => snapshot,
    check: () => ({
      name: 'catalog',
      ok: true,
      detail: { dir, bundled, entries: snapshot.entries.length, skippedFiles, builtAt: snapshot.builtAt.toISOString() },
    }),
    syncNow: () =>
      Promise.reject(
        new RepriseError('not_found', 'catalog sync is off', {
          userMessage: `this bot serves the folder ${dir} as is: catalog sync needs catalog.git.url (or REPRISE_CATALOG_GIT_URL) in its config`,
        }),
      ),
    start: () => {
      if (loaded.verify) verifying ??= verify(loaded.verify);
    },
    stop: async () => {
      if (verifying) await verifying;
    },
  };
}

/**
 * A git-synced catalog. The clone an earlier run left is indexed at once (a restart with the
 * remote down still serves); otherwise the bot is not ready until the first fetch indexed.
 */
export async function gitCatalog(config: Config, clock: Clock, logger: Logger): Promise<ServedCatalog> {
  const git = config.catalog.git!;
  const log = logger.child({ component: 'catalog-sync' });
  // simple-git is loaded only for a git-synced catalog: a folder catalog never pays for it.
  const { GitMirror } = await import('../adapters/git/git-mirror.js');
  const mirror = new GitMirror({ url: git.url, branch: git.branch, dir: cloneDir(config) });
  const empty = buildCatalogSnapshot([], new PostingsIndex([]), clock.now());
  let current = empty;
  // A restart over an unchanged clone reads the index saved for it back (catalog-index-file.ts),
  // on the files' stats alone: only this bot's checkouts write the clone, and each write moves
  // a file's change time. (No read-after-ready check here: the sync owns the snapshot.)
  const indexFile = join(config.store.data_dir, CATALOG_INDEX_FILE);
  const indexFolder = async (root: string): Promise<{ snapshot: CatalogSnapshot; problems: LintProblem[] }> => {
    const { snapshot, problems, index } = await loadSnapshot(root, { indexFile, logger: log, builtAt: clock.now() });
    if (index?.from === 'saved') log.info({ file: indexFile }, 'catalog index read back from the data dir');
    return { snapshot, problems };
  };
  const sync = new CatalogSync({ mirror, path: git.path, clock, logger: log, onSnapshot: (s) => (current = s), indexFolder });
  const local = await sync.indexLocal();
  if (local) log.info({ head: local.head, dir: mirror.dir }, 'serving the local clone until the first fetch');
  log.info({ remote: mirror.remote, branch: mirror.branch, dir: mirror.dir, pollInterval: git.poll_interval }, 'catalog synced from git');

  const check = (): ReadinessCheck => {
    const st = sync.status();
    const detail: Record<string, unknown> = {
      source: 'git',
      remote: st.remote,
      branch: st.branch,
      dir: sync.root,
      head: st.head ?? null,
      entries: st.entries,
      skippedFiles: st.skippedFiles,
      builtAt: current === empty ? null : current.builtAt.toISOString(),
      lastSuccessAt: st.lastSuccessAt ?? null,
      lastAttemptAt: st.lastAttemptAt ?? null,
      consecutiveFailures: st.consecutiveFailures,
    };
    if (st.lastError) {
      detail['lastError'] = st.lastError;
      if (st.indexed) detail['serving'] = `the last good index (HEAD ${st.head}) while the remote fails`;
    }
    if (!st.indexed) return { name: 'catalog', ok: false, reason: `no index yet: ${st.lastError?.message ?? 'the first fetch is in progress'}`, detail };
    return { name: 'catalog', ok: true, detail };
  };

  return {
    source: 'git',
    sync,
    current: () => current,
    check,
    syncNow: async () => {
      let r: SyncResult;
      try {
        r = await sync.syncNow();
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new RepriseError('unavailable', message, { userMessage: `catalog sync failed: ${message}` });
      }
      return {
        ...r,
        remote: mirror.remote,
        branch: mirror.branch,
        skipped: r.skipped.map((p) => ({ file: p.file, line: p.line, rule: p.rule, message: p.message })),
      };
    },
    start: () => sync.start(git.poll_interval_ms),
    stop: () => sync.stop(),
  };
}
