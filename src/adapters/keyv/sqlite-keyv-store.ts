/**
 * A Keyv storage adapter over Node's built-in `node:sqlite` — the embedded, server-less default
 * store (SPEC §8). WAL journal with `synchronous=FULL`: a `set` has been fsynced when it
 * returns, so a process or host crash after an acknowledgement loses nothing. No native module.
 * The file and its WAL are 0600 in a 0700 folder whatever the umask (private-files.ts).
 */
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import { EventEmitter } from 'node:events';
import type { KeyvStoreAdapter } from 'keyv';
import { logKey, type LogKeys } from '../../ports/store.js';
import { ensurePrivateDir, ensurePrivateFile, tighten } from './private-files.js';

export interface SqliteKeyvStoreOptions {
  /** Database file, or `:memory:`. Parent directories are created. */
  path: string;
  /** Table name (letters, digits, underscore). Default `keyv`. */
  table?: string;
  /** Milliseconds to wait on a lock held by another connection. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Open an existing file for reading only (`reprise mcp` beside a running bot, the single
   * writer): nothing is created, no pragma or schema is written, expired rows are skipped
   * instead of deleted, and any write fails with SQLITE_READONLY.
   */
  readOnly?: boolean;
}

type Row = { key: string; value: string; expires: number | null };

/** How often expired rows are swept (see `#pruneExpired`). */
const PRUNE_EVERY_MS = 10 * 60_000;

/** Implements keyv 5's `KeyvStoreAdapter`; keys arrive already prefixed with `namespace:`. */
export class SqliteKeyvStore extends EventEmitter implements KeyvStoreAdapter {
  /** `dialect`/`url` tell Keyv this adapter can iterate. */
  readonly opts: { dialect: 'sqlite'; url: string; table: string };
  namespace?: string | undefined;
  readonly #db: DatabaseSync;
  readonly #readOnly: boolean;
  readonly #stmt: {
    get: StatementSync;
    set: StatementSync;
    del: StatementSync;
    clearAll: StatementSync;
    clearPrefix: StatementSync;
    iterAll: StatementSync;
    iterPrefix: StatementSync;
    prune: StatementSync;
  };
  #prunedAt = 0;

  constructor(options: SqliteKeyvStoreOptions) {
    super();
    const table = options.table ?? 'keyv';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) throw new Error(`invalid sqlite table name: ${table}`);
    this.#readOnly = options.readOnly === true;
    if (options.path !== ':memory:' && !this.#readOnly) {
      // 0600 before SQLite opens it: its WAL and shared-memory files take the database's mode.
      ensurePrivateDir(dirname(options.path));
      ensurePrivateFile(options.path);
      for (const suffix of ['-wal', '-shm', '-journal']) tighten(`${options.path}${suffix}`);
    }
    this.opts = { dialect: 'sqlite', url: `sqlite://${options.path}`, table };
    this.#db = new DatabaseSync(options.path, { readOnly: this.#readOnly });
    this.#db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    if (!this.#readOnly) {
      this.#db.exec('PRAGMA journal_mode = WAL');
      this.#db.exec('PRAGMA synchronous = FULL');
      this.#db.exec(`CREATE TABLE IF NOT EXISTS ${table} (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires INTEGER)`);
    }
    // Prefix matching by range keeps it exact (LIKE would treat `_` and `%` in namespaces as wildcards).
    this.#stmt = {
      get: this.#db.prepare(`SELECT key, value, expires FROM ${table} WHERE key = ?`),
      set: this.#db.prepare(
        `INSERT INTO ${table} (key, value, expires) VALUES (?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires = excluded.expires`,
      ),
      del: this.#db.prepare(`DELETE FROM ${table} WHERE key = ?`),
      clearAll: this.#db.prepare(`DELETE FROM ${table}`),
      clearPrefix: this.#db.prepare(`DELETE FROM ${table} WHERE key >= ? AND key < ?`),
      iterAll: this.#db.prepare(`SELECT key, value, expires FROM ${table} ORDER BY key`),
      iterPrefix: this.#db.prepare(`SELECT key, value, expires FROM ${table} WHERE key >= ? AND key < ? ORDER BY key`),
      prune: this.#db.prepare(`DELETE FROM ${table} WHERE expires IS NOT NULL AND expires <= ?`),
    };
  }

  /** Run `fn`, turning a thrown sqlite error into an `error` event plus a rejection. */
  #guard<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      if (this.listenerCount('error') > 0) this.emit('error', err);
      return Promise.reject(err);
    }
  }

  #live(key: string, now = Date.now()): Row | undefined {
    const row = this.#stmt.get.get(key) as Row | undefined;
    if (!row) return undefined;
    if (row.expires !== null && row.expires <= now) {
      if (!this.#readOnly) this.#stmt.del.run(key);
      return undefined;
    }
    return row;
  }

  get<Value>(key: string): Promise<Value | undefined> {
    return this.#guard(() => this.#live(key)?.value as Value | undefined);
  }

  getMany<Value>(keys: string[]): Promise<Array<Value | undefined>> {
    return this.#guard(() => {
      const now = Date.now();
      return keys.map((k) => this.#live(k, now)?.value as Value | undefined);
    });
  }

  /** `ttl` in milliseconds; absent or 0 means no expiry. */
  set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    return this.#guard(() => {
      const expires = typeof ttl === 'number' && ttl > 0 ? Date.now() + ttl : null;
      this.#stmt.set.run(key, typeof value === 'string' ? value : JSON.stringify(value), expires);
      return true;
    });
  }

  setMany(entries: Array<{ key: string; value: unknown; ttl?: number }>): Promise<void> {
    return this.#guard(() => {
      this.#transaction(() => {
        for (const e of entries) {
          const expires = typeof e.ttl === 'number' && e.ttl > 0 ? Date.now() + e.ttl : null;
          this.#stmt.set.run(e.key, typeof e.value === 'string' ? e.value : JSON.stringify(e.value), expires);
        }
      });
    });
  }

  delete(key: string): Promise<boolean> {
    return this.#guard(() => Number(this.#stmt.del.run(key).changes) > 0);
  }

  deleteMany(keys: string[]): Promise<boolean> {
    return this.#guard(() => {
      let changed = 0;
      this.#transaction(() => {
        for (const k of keys) changed += Number(this.#stmt.del.run(k).changes);
      });
      return changed > 0;
    });
  }

  has(key: string): Promise<boolean> {
    return this.#guard(() => this.#live(key) !== undefined);
  }

  hasMany(keys: string[]): Promise<boolean[]> {
    return this.#guard(() => keys.map((k) => this.#live(k) !== undefined));
  }

  /** Clears this namespace only (everything when there is none). */
  clear(): Promise<void> {
    return this.#guard(() => {
      if (this.namespace) this.#stmt.clearPrefix.run(...prefixRange(this.namespace));
      else this.#stmt.clearAll.run();
    });
  }

  /** Yields `[key, rawValue]` for live rows of `namespace` (all rows without one), in key order. */
  async *iterator(namespace?: string): AsyncGenerator<[string, string], void> {
    const ns = namespace ?? this.namespace;
    const rows = (ns ? this.#stmt.iterPrefix.all(...prefixRange(ns)) : this.#stmt.iterAll.all()) as Row[];
    const now = Date.now();
    for (const row of rows) {
      if (row.expires !== null && row.expires <= now) continue;
      yield [row.key, row.value];
    }
  }

  /**
   * Appends keyv-serialized `records` after the log's stored head in one `BEGIN IMMEDIATE`
   * transaction (the write lock is taken before the head is read, so two connections can never
   * allocate the same number) and returns the first number. Keys are full (namespace included).
   */
  /** With `idKey`: an id already appended writes nothing and returns the first number it got then. */
  appendLog(log: LogKeys, records: readonly string[], opts: { idKey?: string; idTtlMs?: number } = {}): number {
    let first = 0;
    this.#transaction(() => {
      const done = opts.idKey === undefined ? undefined : this.#live(opts.idKey);
      if (done !== undefined) {
        first = readHead(done.value, opts.idKey!);
        return;
      }
      const row = this.#live(log.headKey);
      const head = row === undefined ? 0 : readHead(row.value, log.headKey);
      first = head + 1;
      records.forEach((r, i) => this.#stmt.set.run(logKey(log, first + i), r, null));
      this.#stmt.set.run(log.headKey, JSON.stringify({ value: head + records.length }), null);
      if (opts.idKey !== undefined)
        this.#stmt.set.run(opts.idKey, JSON.stringify({ value: first }), opts.idTtlMs === undefined ? null : Date.now() + opts.idTtlMs);
    });
    return first;
  }

  /** Sets `key` (full key, keyv-serialized `record`) to expire in `ttlMs`, only when no live row holds it; true when set. */
  setIfAbsent(key: string, record: string, ttlMs: number): boolean {
    this.#pruneExpired();
    let set = false;
    this.#transaction(() => {
      if (this.#live(key) !== undefined) return;
      this.#stmt.set.run(key, record, Date.now() + ttlMs);
      set = true;
    });
    return set;
  }

  /**
   * Expired rows are dropped when read; claims (replay memory) are seldom read again, so they are
   * swept now and then — at most every {@link PRUNE_EVERY_MS}, from the writer only.
   */
  #pruneExpired(): void {
    const now = Date.now();
    if (this.#readOnly || now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    this.#stmt.prune.run(now);
  }

  disconnect(): Promise<void> {
    return this.#guard(() => {
      if (this.#db.isOpen) this.#db.close();
    });
  }

  #transaction(fn: () => void): void {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      fn();
      this.#db.exec('COMMIT');
    } catch (err) {
      this.#db.exec('ROLLBACK');
      throw err;
    }
  }
}

/** The head's number from its keyv-serialized row (`{"value":N}`). */
function readHead(raw: string, key: string): number {
  let v: unknown;
  try {
    v = (JSON.parse(raw) as { value?: unknown }).value;
  } catch {
    v = undefined;
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new Error(`log head ${key} is corrupt: ${raw.slice(0, 80)}`);
  return v;
}

/** `[lo, hi)` covering exactly the keys starting with `ns:`. */
function prefixRange(ns: string): [string, string] {
  return [`${ns}:`, `${ns};`];
}
