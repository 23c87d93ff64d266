/**
 * The `KeyValueStore` port over keyv (SPEC §8): the embedded sqlite file by default, Redis for
 * more than one replica, an in-memory Map for tests.
 */
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Keyv from 'keyv';
import type KeyvRedis from '@keyv/redis';
import {
  APPEND_ID_TTL_MS,
  CorruptRecordError,
  logKey,
  type AppendOptions,
  type Fence,
  type KeyValueStore,
  type LeaderLease,
  type LogKeys,
} from '../../ports/store.js';
import { SqliteKeyvStore } from './sqlite-keyv-store.js';
import { redisAppendLog, redisSetFenced, redisSetIfAbsent, type RedisEvalClient } from './redis-append-log.js';
import { redisLease } from './redis-lease.js';
import { maskUrl } from '../../core/redact.js';

/** Namespace every key lives under (keeps our keys apart on a shared Redis). */
export const STORE_NAMESPACE = 'reprise';
export const DEFAULT_STORE_FILE = 'reprise.sqlite';
/**
 * Keyv's own wire format (`{"value": …}`, a string starting with `:` escaped by a second `:`),
 * so `get`/`getMany` read the record back unchanged — written by native JSON.stringify, many
 * times faster than keyv's recursive serializer on the big JSON values the ledger appends.
 */
export function keyvRecord(value: unknown): string {
  return JSON.stringify({ value }, (_key, v: unknown) => (typeof v === 'string' && v.startsWith(':') ? `:${v}` : v));
}

/** Records serialized between two yields to the event loop. */
const SERIALIZE_CHUNK = 256;

export const SUPPORTED_STORE_SCHEMES = ['sqlite:', 'file:', 'redis:', 'rediss:', 'memory:'] as const;

/** Where an append id is remembered (unprefixed). */
export function appendIdKey(id: string): string {
  return `append-id:${id}`;
}
/** The lease and fence keys (unprefixed) replicas share on Redis. */
export const LEASE_KEY = 'leader:lease';
export const FENCE_KEY = 'leader:fence';

/**
 * The atomic part of `appendLog`, done by the backend itself: `records` are keyv-serialized
 * values, keys (log, `idKey`, fence key) already carry keyv's namespace prefix. Resolves with
 * the first number (the earlier one for an id already appended).
 */
export type AtomicAppend = (log: LogKeys, records: readonly string[], extras: { idKey?: string; fence?: Fence }) => Promise<number>;

/** What only a shared backend (Redis) adds: fenced writes and the leader lease (keys prefixed). */
export interface SharedBackend {
  setFenced(key: string, record: string, fence: Fence): Promise<void>;
  lease(leaseKey: string, fenceKey: string, owner: string, ttlMs: number): LeaderLease;
}

/** A backend's atomic set-if-absent with an expiry (key prefixed, record keyv-serialized). */
export type AtomicSetIfAbsent = (key: string, record: string, ttlMs: number) => Promise<boolean>;

/** How a backend names a key (keyv prefixes the namespace differently per adapter). */
export type KeyPrefixer = (key: string) => string;

/**
 * Adapts a Keyv instance to the port. Keyv swallows store errors by default (emits `error`,
 * returns false); a ledger write that silently failed would be acknowledged and lost, so this
 * wrapper makes every failure a rejection.
 */
export class KeyvStore implements KeyValueStore {
  readonly keyv: Keyv;
  readonly #append: AtomicAppend | undefined;
  readonly #prefix: KeyPrefixer;
  readonly #shared: SharedBackend | undefined;
  /** In-process serialisation of appends for backends without an atomic one (the memory Map). */
  #chain: Promise<unknown> = Promise.resolve();

  /**
   * `append`/`prefix` give the backend's atomic append; without them appends are serialised in
   * this process only — right for the in-memory Map, which no other process can see.
   */
  readonly #setIfAbsent: AtomicSetIfAbsent | undefined;

  constructor(keyv: Keyv, backend: { append?: AtomicAppend; prefix?: KeyPrefixer; shared?: SharedBackend; setIfAbsent?: AtomicSetIfAbsent } = {}) {
    this.keyv = keyv;
    this.keyv.throwOnErrors = true;
    // Errors surface as rejections; keep the emitter from reporting them a second time.
    this.keyv.on('error', () => {});
    this.#append = backend.append;
    this.#prefix = backend.prefix ?? ((k) => k);
    this.#shared = backend.shared;
    this.#setIfAbsent = backend.setIfAbsent;
    if (this.#shared) {
      const shared = this.#shared;
      this.setFenced = async (key, value, fence) =>
        shared.setFenced(this.#prefix(key), keyvRecord(value), { key: this.#prefix(fence.key), token: fence.token });
      this.leaderLease = (owner, ttlMs) => ({ ...shared.lease(this.#prefix(LEASE_KEY), this.#prefix(FENCE_KEY), owner, ttlMs), fenceKey: FENCE_KEY });
    }
  }

  /** Present on a shared backend only (see the port). */
  setFenced?: (key: string, value: unknown, fence: Fence) => Promise<void>;
  leaderLease?: (owner: string, ttlMs: number) => LeaderLease;

  async get<T>(key: string): Promise<T | undefined> {
    try {
      const v = (await this.keyv.get(key)) as T | null | undefined;
      return v ?? undefined;
    } catch (err) {
      if (err instanceof SyntaxError) throw new CorruptRecordError(key, err);
      throw err;
    }
  }

  async getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    if (keys.length === 0) return [];
    try {
      const values = (await this.keyv.getMany([...keys])) as Array<T | null | undefined>;
      return values.map((v) => v ?? undefined);
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      // One undecodable record spoils the batch: find which, one key at a time.
      const out: Array<T | undefined> = [];
      for (const k of keys) out.push(await this.get<T>(k));
      return out;
    }
  }

  async set(key: string, value: unknown): Promise<void> {
    if (value === undefined) throw new Error(`store: refusing to set ${key} to undefined (use delete)`);
    const ok = await this.keyv.set(key, value);
    if (!ok) throw new Error(`store: write of ${key} failed`);
  }

  async delete(key: string): Promise<void> {
    await this.keyv.delete(key);
  }

  async setExpiring(key: string, value: unknown, ttlMs: number): Promise<void> {
    if (value === undefined) throw new Error(`store: refusing to set ${key} to undefined (use delete)`);
    if (!(ttlMs > 0)) throw new Error(`store: an expiring key needs a positive ttl, got ${ttlMs}`);
    const ok = await this.keyv.set(key, value, ttlMs);
    if (!ok) throw new Error(`store: write of ${key} failed`);
  }

  async setIfAbsent(key: string, value: unknown, ttlMs: number): Promise<boolean> {
    if (value === undefined) throw new Error(`store: refusing to set ${key} to undefined (use delete)`);
    if (!(ttlMs > 0)) throw new Error(`store: an expiring key needs a positive ttl, got ${ttlMs}`);
    if (this.#setIfAbsent) return this.#setIfAbsent(this.#prefix(key), keyvRecord(value), ttlMs);
    // The in-memory Map: one process sees it, so serialising here makes it atomic.
    const run = this.#chain.then(async () => {
      if ((await this.keyv.get(key)) !== undefined) return false;
      await this.setExpiring(key, value, ttlMs);
      return true;
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async appendLog(log: LogKeys, values: readonly unknown[], opts: AppendOptions = {}): Promise<number> {
    if (values.length === 0) throw new Error('store: appendLog needs at least one value');
    if (values.some((v) => v === undefined)) throw new Error('store: refusing to append undefined');
    if (this.#append) {
      const records: string[] = [];
      for (let i = 0; i < values.length; i++) {
        // A 10,000-event batch takes a while to serialize: let other requests in meanwhile.
        if (i > 0 && i % SERIALIZE_CHUNK === 0) await new Promise<void>((resolve) => setImmediate(resolve));
        records.push(keyvRecord(values[i]));
      }
      // Prefixing the record prefix gives the prefixed record keys: keyv's prefix is a concatenation.
      const extras: { idKey?: string; fence?: Fence } = {};
      if (opts.id !== undefined) extras.idKey = this.#prefix(appendIdKey(opts.id));
      // Only a shared backend fences; one a file lock guards has a single writer already.
      if (opts.fence && this.#shared) extras.fence = { key: this.#prefix(opts.fence.key), token: opts.fence.token };
      return this.#append({ headKey: this.#prefix(log.headKey), prefix: this.#prefix(log.prefix), pad: log.pad }, records, extras);
    }
    const run = this.#chain.then(async () => {
      const idKey = opts.id === undefined ? undefined : appendIdKey(opts.id);
      const done = idKey === undefined ? undefined : await this.get<number>(idKey);
      if (done !== undefined) return done;
      const head = (await this.get<number>(log.headKey)) ?? 0;
      for (let i = 0; i < values.length; i++) await this.set(logKey(log, head + 1 + i), values[i]);
      await this.set(log.headKey, head + values.length);
      if (idKey !== undefined) await this.keyv.set(idKey, head + 1, APPEND_ID_TTL_MS);
      return head + 1;
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.keyv.disconnect();
  }
}

function sqliteStore(path: string, readOnly = false): KeyValueStore {
  const adapter = new SqliteKeyvStore({ path, readOnly });
  return new KeyvStore(new Keyv(adapter, { namespace: STORE_NAMESPACE }), {
    // Keyv prefixes `namespace:` itself on this adapter; the atomic append must write the same keys.
    prefix: (k) => `${STORE_NAMESPACE}:${k}`,
    append: async (log, records, extras) =>
      adapter.appendLog(log, records, extras.idKey === undefined ? {} : { idKey: extras.idKey, idTtlMs: APPEND_ID_TTL_MS }),
    setIfAbsent: async (key, record, ttlMs) => adapter.setIfAbsent(key, record, ttlMs),
  });
}

/**
 * `@keyv/redis`, loaded the first time a Redis store is built: with its Redis client it is
 * ~400 modules and ~25 MB that a bot on the embedded store never uses. `createStore` stays
 * synchronous (ninety callers), so it is required (the package's CommonJS build), not imported.
 */
let redisModule: typeof import('@keyv/redis') | undefined;
function keyvRedis(): typeof import('@keyv/redis') {
  redisModule ??= createRequire(import.meta.url)('@keyv/redis') as typeof import('@keyv/redis');
  return redisModule;
}

function redisStore(url: string, opts: CreateStoreOptions): KeyValueStore {
  // Without a connection timeout a write to an unreachable Redis waits forever, and so
  // would the webhook acknowledging it.
  const keyv = keyvRedis().createKeyv(url, {
    namespace: STORE_NAMESPACE,
    throwOnErrors: true,
    throwOnConnectError: true,
    connectionTimeout: opts.connectTimeoutMs ?? 5000,
  });
  const adapter = keyv.store as KeyvRedis<unknown>;
  // @keyv/redis races each connect against a timer it never clears, which kept every CLI
  // command on Redis alive 5 s after its work was done. Same timeout, but it does not hold the
  // process open (a connect in progress holds it through its socket).
  (adapter as unknown as { createTimeoutPromise: (ms: number) => Promise<never> }).createTimeoutPromise = (timeoutMs: number) =>
    new Promise<never>((_, reject) => {
      setTimeout(() => reject(new Error(`Redis timed out after ${timeoutMs}ms`)), timeoutMs).unref();
    });
  const client = async (): Promise<RedisEvalClient> => (await adapter.getClient()) as unknown as RedisEvalClient;
  return new KeyvStore(keyv, {
    prefix: (k) => adapter.createKeyPrefix(k, adapter.namespace),
    append: async (log, records, extras) => redisAppendLog(await client(), log, records, { ...extras, idTtlMs: APPEND_ID_TTL_MS }),
    setIfAbsent: async (key, record, ttlMs) => redisSetIfAbsent(await client(), key, record, ttlMs),
    shared: {
      setFenced: async (key, record, fence) => redisSetFenced(await client(), key, record, fence),
      lease: (leaseKey, fenceKey, owner, ttlMs) => redisLease(client, { leaseKey, fenceKey }, owner, ttlMs),
    },
  });
}

function sqlitePath(rest: string, dataDir: string): string {
  if (rest === '' || rest === '/') return join(dataDir, DEFAULT_STORE_FILE);
  if (rest === ':memory:') return rest;
  return isAbsolute(rest) ? rest : resolve(rest);
}

/**
 * The file of the embedded store `url` names (undefined for stores without one: Redis, memory).
 * Same resolution as {@link createStore}.
 */
export function embeddedStoreFile(url: string | undefined, dataDir: string): string | undefined {
  const u = url?.trim() ?? '';
  if (u === '') return join(dataDir, DEFAULT_STORE_FILE);
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(u)?.[1]?.toLowerCase();
  let path: string | undefined;
  if (scheme === 'sqlite:') path = sqlitePath(u.slice('sqlite:'.length).replace(/^\/\//, ''), dataDir);
  else if (scheme === 'file:') path = u.startsWith('file://') ? fileURLToPath(u) : sqlitePath(u.slice('file:'.length), dataDir);
  return path === ':memory:' ? undefined : path;
}

/**
 * Build the store named by `url`:
 * - undefined / empty → embedded sqlite at `<dataDir>/reprise.sqlite` (dataDir is created);
 * - `sqlite:///abs/file.sqlite`, `sqlite://rel/file.sqlite` (relative to the working
 *   directory), `sqlite://` (default file), `sqlite://:memory:`;
 * - `file:///abs/file.sqlite` or `file:rel/file.sqlite` → the same embedded sqlite store;
 * - `redis://…` / `rediss://…` → Redis via `@keyv/redis` (connects lazily on first use; a
 *   command fails after `connectTimeoutMs` without a connection);
 * - `memory://` → keyv's in-memory Map (tests; nothing survives the process).
 * @throws Error naming the supported schemes for anything else.
 */
export interface CreateStoreOptions {
  /** Redis only: how long a command waits for a connection before failing (ms). Default 5000. */
  connectTimeoutMs?: number;
  /**
   * Embedded sqlite only: open the existing file read-only (nothing created, any write fails).
   * Redis has no such mode; a reader there simply never writes.
   */
  readOnly?: boolean;
}

export function createStore(url: string | undefined, dataDir: string, opts: CreateStoreOptions = {}): KeyValueStore {
  const u = url?.trim() ?? '';
  const ro = opts.readOnly === true;
  if (u === '') return sqliteStore(join(dataDir, DEFAULT_STORE_FILE), ro);
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(u)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'sqlite:': {
      return sqliteStore(sqlitePath(u.slice('sqlite:'.length).replace(/^\/\//, ''), dataDir), ro);
    }
    case 'file:': {
      return sqliteStore(u.startsWith('file://') ? fileURLToPath(u) : sqlitePath(u.slice('file:'.length), dataDir), ro);
    }
    case 'redis:':
    case 'rediss:':
      return redisStore(u, opts);
    case 'memory:':
      return new KeyvStore(new Keyv({ namespace: STORE_NAMESPACE }));
    default:
      throw new Error(
        `unsupported store URL ${JSON.stringify(maskUrl(u))}: use sqlite://<file>, file:<file>, ` +
          `redis://<host>:<port>, rediss://…, or memory:// (empty = embedded sqlite in the data dir)`,
      );
  }
}
