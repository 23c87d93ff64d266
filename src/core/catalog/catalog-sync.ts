/**
 * Catalog sync (SPEC §5 "Sync", issue 6 item 2): keeps the served index in step with a
 * catalog mirror, polled and on demand. The index is rebuilt only when HEAD moved — in place
 * from the changed files when few changed, from the whole tree otherwise. A failing remote
 * keeps the last good index and is reported (status, readiness, metrics). Broken entries in a
 * new HEAD are skipped with their lint problem, never fatal.
 */
import { realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { CatalogMirror, MirrorChange } from '../../ports/catalog-mirror.js';
import type { Clock, Timer } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { buildCatalogSnapshot, isUpdatable, updateCatalogSnapshot, type CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { PostingsIndex } from '../search/postings-index.js';
import type { LintProblem } from '../types.js';
import { loadCatalog, loadCatalogFiles } from './load-catalog.js';

export interface CatalogSyncOptions {
  mirror: CatalogMirror;
  /** Folder of the catalog inside the repository (`''` = its root), with `/`. */
  path?: string;
  clock: Clock;
  logger: Logger;
  /** More changed files than this → a full rebuild instead of an in-place update. Default 200. */
  incrementalLimit?: number;
  /** Called with every new snapshot (the previous one is spent when it was updated in place). */
  onSnapshot?: (snapshot: CatalogSnapshot, result: SyncResult) => void;
  /**
   * Reads and indexes the whole catalog folder for a full rebuild (default: parse every entry
   * and index it). `serve` passes one that reads back an index saved for the same files.
   */
  indexFolder?: (root: string) => Promise<{ snapshot: CatalogSnapshot; problems: LintProblem[] }>;
}

export type RebuildMode = 'none' | 'full' | 'incremental';

/** What one sync did. */
export interface SyncResult {
  /** HEAD indexed before (absent on the first index). */
  oldHead?: string;
  head: string;
  /** none: HEAD had not moved, nothing was rebuilt. */
  mode: RebuildMode;
  /** Entries added, replaced or removed by this sync (a full rebuild counts the difference). */
  entriesChanged: number;
  entries: number;
  /** Problems of severity error in the files this sync read (those entries were skipped). */
  skipped: LintProblem[];
  at: string;
}

/** How the sync is doing, for /readyz, metrics and `reprise catalog sync`. */
export interface CatalogSyncStatus {
  remote: string;
  branch: string;
  /** The HEAD the served index was built from. */
  head?: string;
  /** True once an index was built (from the remote or from a clone left by an earlier run). */
  indexed: boolean;
  entries: number;
  skippedFiles: number;
  lastAttemptAt?: string;
  /** Last time the remote answered and the index matched its HEAD. */
  lastSuccessAt?: string;
  lastError?: { at: string; message: string };
  consecutiveFailures: number;
  /** Counters since start. */
  fetches: number;
  failures: number;
  rebuilds: { full: number; incremental: number };
  unchanged: number;
}

const HEX = /^[0-9a-f]{7,64}$/;

export class CatalogSync {
  readonly #mirror: CatalogMirror;
  readonly #path: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #limit: number;
  readonly #onSnapshot: ((s: CatalogSnapshot, r: SyncResult) => void) | undefined;
  readonly #indexFolder: (root: string) => Promise<{ snapshot: CatalogSnapshot; problems: LintProblem[] }>;
  #snapshot: CatalogSnapshot | undefined;
  /** Lint problems by file, for the files in the served index's tree. */
  #problems = new Map<string, LintProblem[]>();
  #status: CatalogSyncStatus;
  /** A sync queued but not started: every request until it starts shares it. */
  #queued: Promise<SyncResult> | undefined;
  #running: Promise<SyncResult> | undefined;
  #timer: Timer | undefined;
  #stopped = false;

  constructor(opts: CatalogSyncOptions) {
    const path = (opts.path ?? '').replace(/^\/+|\/+$/g, '');
    if (path.split('/').some((s) => s === '..' || s === '.') || path.includes('\\')) throw new Error(`catalog.git.path ${JSON.stringify(opts.path)} must be a folder inside the repository`);
    this.#mirror = opts.mirror;
    this.#path = path;
    this.#clock = opts.clock;
    this.#log = opts.logger;
    this.#limit = opts.incrementalLimit ?? 200;
    this.#onSnapshot = opts.onSnapshot;
    this.#indexFolder = opts.indexFolder ?? (async (root) => {
      const { entries, problems } = await loadCatalog(root);
      return { snapshot: buildCatalogSnapshot(entries, new PostingsIndex(entries), this.#clock.now()), problems };
    });
    this.#status = { remote: opts.mirror.remote, branch: opts.mirror.branch, indexed: false, entries: 0, skippedFiles: 0, consecutiveFailures: 0, fetches: 0, failures: 0, rebuilds: { full: 0, incremental: 0 }, unchanged: 0 };
  }

  /** The catalog folder in the working tree. */
  get root(): string {
    return this.#path === '' ? this.#mirror.dir : join(this.#mirror.dir, ...this.#path.split('/'));
  }

  get snapshot(): CatalogSnapshot | undefined {
    return this.#snapshot;
  }

  status(): CatalogSyncStatus {
    return { ...this.#status, rebuilds: { ...this.#status.rebuilds }, ...(this.#status.lastError ? { lastError: { ...this.#status.lastError } } : {}) };
  }

  /** Every lint problem of the served tree, by file then line. */
  problems(): LintProblem[] {
    return [...this.#problems.values()].flat();
  }

  /**
   * Indexes the clone an earlier run left, without touching the remote: a restart with the
   * remote down still serves the last good catalog. Does nothing when there is no clone.
   * @returns the result, or undefined when there was no usable clone.
   */
  async indexLocal(): Promise<SyncResult | undefined> {
    const head = await this.#mirror.localHead();
    if (head === undefined) return undefined;
    try {
      return await this.#full(head);
    } catch (err) {
      this.#log.warn({ err: messageOf(err) }, 'the local catalog clone could not be indexed; waiting for the first fetch');
      return undefined;
    }
  }

  /**
   * Fetches now and rebuilds if HEAD moved. Requests made before the fetch starts share it;
   * requests made while one runs share the one run queued after it (which sees anything
   * pushed before they asked).
   * @throws Error when the remote failed (the last good index is kept).
   */
  syncNow(): Promise<SyncResult> {
    if (this.#queued) return this.#queued;
    const after = this.#running ?? Promise.resolve();
    const queued = after.then(
      () => this.#start(),
      () => this.#start(),
    );
    this.#queued = queued;
    return queued;
  }

  #start(): Promise<SyncResult> {
    this.#queued = undefined;
    const run = this.#syncOnce();
    this.#running = run;
    const clear = (): void => {
      if (this.#running === run) this.#running = undefined;
    };
    run.then(clear, clear);
    return run;
  }

  /** Polls every `intervalMs` (the first poll right away); failures are logged and counted. */
  start(intervalMs: number): void {
    this.#stopped = false;
    const tick = (): void => {
      if (this.#stopped) return;
      this.syncNow()
        .catch(() => undefined) // recorded in the status and logged by #syncOnce
        .finally(() => {
          if (this.#stopped) return;
          this.#timer = this.#clock.setTimeout(tick, intervalMs).unref();
        });
    };
    tick();
  }

  /** Stops polling and waits for a sync in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clock.clearTimeout(this.#timer);
    await Promise.allSettled([this.#queued, this.#running]);
  }

  async #syncOnce(): Promise<SyncResult> {
    const at = this.#clock.now().toISOString();
    this.#status.lastAttemptAt = at;
    this.#status.fetches++;
    let head: string;
    try {
      head = await this.#mirror.update();
      if (!HEX.test(head)) throw new Error(`the clone's HEAD ${JSON.stringify(head.slice(0, 80))} is not a commit id`);
    } catch (err) {
      return this.#failed(at, `fetching ${this.#mirror.remote} (${this.#mirror.branch}): ${messageOf(err)}`);
    }
    try {
      const oldHead = this.#status.head;
      let result: SyncResult;
      if (this.#snapshot !== undefined && oldHead === head) {
        this.#status.unchanged++;
        result = { oldHead, head, mode: 'none', entriesChanged: 0, entries: this.#snapshot.entries.length, skipped: [], at };
        this.#log.debug({ head }, 'catalog HEAD unchanged; index kept');
      } else {
        result = await this.#rebuild(oldHead, head);
      }
      this.#status.lastSuccessAt = at;
      this.#status.consecutiveFailures = 0;
      delete this.#status.lastError;
      return result;
    } catch (err) {
      return this.#failed(at, `indexing ${head.slice(0, 12)}: ${messageOf(err)}`);
    }
  }

  #failed(at: string, message: string): never {
    this.#status.failures++;
    this.#status.consecutiveFailures++;
    this.#status.lastError = { at, message };
    const kept = this.#status.head ? `; still serving ${this.#status.head.slice(0, 12)}` : '; no index yet';
    this.#log.warn({ remote: this.#mirror.remote, branch: this.#mirror.branch, consecutiveFailures: this.#status.consecutiveFailures }, `catalog sync failed: ${message}${kept}`);
    throw new Error(message + kept);
  }

  async #rebuild(oldHead: string | undefined, head: string): Promise<SyncResult> {
    const prev = this.#snapshot;
    if (prev !== undefined && oldHead !== undefined && isUpdatable(prev.index)) {
      let changes: MirrorChange[] | undefined;
      try {
        changes = await this.#mirror.changes(oldHead, head);
      } catch (err) {
        this.#log.info({ err: messageOf(err) }, 'catalog diff unavailable; rebuilding the whole index');
      }
      const paths = changes ? this.#inCatalog(changes) : undefined;
      if (paths !== undefined && paths.length <= this.#limit && (await this.#rootInside())) {
        try {
          return await this.#incremental(prev, oldHead, head, paths);
        } catch (err) {
          // The previous snapshot may be spent by now: a full rebuild replaces it either way.
          this.#log.warn({ err: messageOf(err) }, 'in-place catalog update failed; rebuilding the whole index');
        }
      }
    }
    return this.#full(head, oldHead);
  }

  /** Changed paths under the catalog folder, relative to it. */
  #inCatalog(changes: readonly MirrorChange[]): string[] {
    const prefix = this.#path === '' ? '' : `${this.#path}/`;
    return changes.filter((c) => c.path.startsWith(prefix)).map((c) => c.path.slice(prefix.length));
  }

  /** The catalog folder resolves inside the clone (a `path` that is a link out of the repository is refused). */
  async #rootInside(): Promise<boolean> {
    const clone = await realpath(this.#mirror.dir);
    const root = await realpath(this.root).catch(() => undefined);
    return root !== undefined && (root === clone || root.startsWith(clone + sep));
  }

  async #full(head: string, oldHead?: string): Promise<SyncResult> {
    if (!(await this.#rootInside())) throw new Error(`catalog folder ${this.#path || '.'} is missing from the repository or links outside it`);
    const { snapshot, problems } = await this.#indexFolder(this.root);
    const { entries } = snapshot;
    const prev = this.#snapshot;
    let entriesChanged = entries.length;
    if (prev) {
      const before = new Map(prev.entries.map((e) => [e.id, JSON.stringify(e)]));
      entriesChanged = entries.filter((e) => before.get(e.id) !== JSON.stringify(e)).length + [...before.keys()].filter((id) => !snapshot.byId.has(id)).length;
    }
    this.#problems = new Map();
    for (const p of problems) this.#problems.set(p.file, [...(this.#problems.get(p.file) ?? []), p]);
    this.#status.rebuilds.full++;
    return this.#publish(snapshot, { ...(oldHead ? { oldHead } : {}), head, mode: 'full', entriesChanged, entries: entries.length, skipped: problems.filter((p) => p.severity === 'error'), at: this.#clock.now().toISOString() });
  }

  async #incremental(prev: CatalogSnapshot, oldHead: string, head: string, paths: readonly string[]): Promise<SyncResult> {
    const loaded = await loadCatalogFiles(this.root, paths);
    const removedIds = loaded.missing.filter((id) => prev.byId.has(id));
    for (const p of paths) this.#problems.delete(p);
    for (const p of loaded.problems) this.#problems.set(p.file, [...(this.#problems.get(p.file) ?? []), p]);
    const snapshot = updateCatalogSnapshot(prev, { upserts: loaded.entries, removedIds }, this.#clock.now());
    this.#status.rebuilds.incremental++;
    return this.#publish(snapshot, { oldHead, head, mode: 'incremental', entriesChanged: loaded.entries.length + removedIds.length, entries: snapshot.entries.length, skipped: loaded.problems.filter((p) => p.severity === 'error'), at: this.#clock.now().toISOString() });
  }

  #publish(snapshot: CatalogSnapshot, result: SyncResult): SyncResult {
    this.#snapshot = snapshot;
    this.#status.head = result.head;
    this.#status.indexed = true;
    this.#status.entries = snapshot.entries.length;
    this.#status.skippedFiles = [...this.#problems.values()].filter((ps) => ps.some((p) => p.severity === 'error')).length;
    for (const p of result.skipped) this.#log.warn({ file: p.file, line: p.line, rule: p.rule, head: result.head.slice(0, 12) }, `catalog entry skipped: ${p.message}`);
    for (const p of this.problems().filter((x) => x.rule === 'file-outside-catalog')) this.#log.warn({ file: p.file, rule: p.rule }, p.message);
    this.#log.info({ oldHead: result.oldHead, head: result.head, mode: result.mode, entries: result.entries, entriesChanged: result.entriesChanged, skippedFiles: this.#status.skippedFiles }, 'catalog indexed');
    this.#onSnapshot?.(snapshot, result);
    return result;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
