/**
 * One writer per embedded store (SPEC §8, §11): an exclusive SQLite lock on a small file
 * beside the store. The operating system releases it when its process exits, however it
 * exits (`kill -9` included), so there is no stale lock to clean up and no PID to guess about.
 */
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { embeddedStoreFile } from './keyv-store.js';
import { ensurePrivateDir, ensurePrivateFile } from './private-files.js';

export interface StoreLock {
  readonly path: string;
  release(): void;
}

/**
 * The lock file guarding the store `url` (undefined when the store needs none: `memory://`
 * lives in one process, and Redis replicas coordinate in the store itself).
 */
export function storeLockPath(url: string | undefined, dataDir: string): string | undefined {
  const file = embeddedStoreFile(url, dataDir);
  return file === undefined ? undefined : `${file}.lock`;
}

/**
 * Takes the lock without waiting. Resolves with the held lock, or `undefined` when another
 * process (or another part of this one) holds it.
 * @throws Error when the lock file cannot be created or opened at all (permissions, a
 *   read-only disk) — that is not "nobody holds it", and must never be read as such.
 */
export function tryLockStore(path: string): StoreLock | undefined {
  try {
    ensurePrivateDir(dirname(path));
    ensurePrivateFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // The store is its owner's alone (0600 in a 0700 folder): another user cannot even take the lock.
    const whose = code === 'EACCES' || code === 'EPERM' ? '; the store belongs to another user: run this as its owner, nothing was recorded' : '';
    throw new Error(`cannot open the store lock ${path}: ${(err as Error).message}${whose}`, { cause: err });
  }
  const db = new DatabaseSync(path);
  try {
    db.exec('PRAGMA busy_timeout = 0');
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if (isBusy(err)) return undefined;
    throw new Error(`cannot open the store lock ${path}: ${(err as Error).message}`, { cause: err });
  }
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    },
  };
}

function isBusy(err: unknown): boolean {
  const e = err as { errcode?: number; message?: string };
  // SQLITE_BUSY (5) and SQLITE_LOCKED (6), with or without extended codes.
  return e.errcode !== undefined ? [5, 6].includes(e.errcode & 0xff) : /locked|busy/i.test(e.message ?? '');
}
