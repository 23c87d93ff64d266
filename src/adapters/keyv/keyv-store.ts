/**
 * The `KeyValueStore` port over keyv (SPEC §8): the embedded sqlite file by default, Redis for
 * more than one replica, an in-memory Map for tests.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Keyv from 'keyv';
import { createKeyv } from '@keyv/redis';
import type { KeyValueStore } from '../../ports/store.js';
import { SqliteKeyvStore } from './sqlite-keyv-store.js';

/** Namespace every key lives under (keeps our keys apart on a shared Redis). */
export const STORE_NAMESPACE = 'reprise';
export const DEFAULT_STORE_FILE = 'reprise.sqlite';
export const SUPPORTED_STORE_SCHEMES = ['sqlite:', 'file:', 'redis:', 'rediss:', 'memory:'] as const;

/**
 * Adapts a Keyv instance to the port. Keyv swallows store errors by default (emits `error`,
 * returns false); a ledger write that silently failed would be acknowledged and lost, so this
 * wrapper makes every failure a rejection.
 */
export class KeyvStore implements KeyValueStore {
  readonly keyv: Keyv;

  constructor(keyv: Keyv) {
    this.keyv = keyv;
    this.keyv.throwOnErrors = true;
    // Errors surface as rejections; keep the emitter from reporting them a second time.
    this.keyv.on('error', () => {});
  }

  async get<T>(key: string): Promise<T | undefined> {
    const v = (await this.keyv.get(key)) as T | null | undefined;
    return v ?? undefined;
  }

  async getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    if (keys.length === 0) return [];
    const values = (await this.keyv.getMany([...keys])) as Array<T | null | undefined>;
    return values.map((v) => v ?? undefined);
  }

  async set(key: string, value: unknown): Promise<void> {
    if (value === undefined) throw new Error(`store: refusing to set ${key} to undefined (use delete)`);
    const ok = await this.keyv.set(key, value);
    if (!ok) throw new Error(`store: write of ${key} failed`);
  }

  async delete(key: string): Promise<void> {
    await this.keyv.delete(key);
  }

  async close(): Promise<void> {
    await this.keyv.disconnect();
  }
}

function sqliteStore(path: string): KeyValueStore {
  return new KeyvStore(new Keyv(new SqliteKeyvStore({ path }), { namespace: STORE_NAMESPACE }));
}

function sqlitePath(rest: string, dataDir: string): string {
  if (rest === '' || rest === '/') return join(dataDir, DEFAULT_STORE_FILE);
  if (rest === ':memory:') return rest;
  return isAbsolute(rest) ? rest : resolve(rest);
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
}

export function createStore(url: string | undefined, dataDir: string, opts: CreateStoreOptions = {}): KeyValueStore {
  const u = url?.trim() ?? '';
  if (u === '') return sqliteStore(join(dataDir, DEFAULT_STORE_FILE));
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(u)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'sqlite:': {
      return sqliteStore(sqlitePath(u.slice('sqlite:'.length).replace(/^\/\//, ''), dataDir));
    }
    case 'file:': {
      return sqliteStore(u.startsWith('file://') ? fileURLToPath(u) : sqlitePath(u.slice('file:'.length), dataDir));
    }
    case 'redis:':
    case 'rediss:':
      return new KeyvStore(
        // Without a connection timeout a write to an unreachable Redis waits forever, and so
        // would the webhook acknowledging it.
        createKeyv(u, {
          namespace: STORE_NAMESPACE,
          throwOnErrors: true,
          throwOnConnectError: true,
          connectionTimeout: opts.connectTimeoutMs ?? 5000,
        }),
      );
    case 'memory:':
      return new KeyvStore(new Keyv({ namespace: STORE_NAMESPACE }));
    default:
      throw new Error(
        `unsupported store URL ${JSON.stringify(redactUrl(u))}: use sqlite://<file>, file:<file>, ` +
          `redis://<host>:<port>, rediss://…, or memory:// (empty = embedded sqlite in the data dir)`,
      );
  }
}

/** Drop credentials from a URL before it goes into an error message. */
function redactUrl(u: string): string {
  return u.replace(/\/\/[^/@]*@/, '//***@');
}
