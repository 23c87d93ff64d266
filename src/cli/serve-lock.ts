import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where a running `serve` announces itself, so CLI writers go through it (one ledger writer). */
export interface ServeLock {
  pid: number;
  port: number;
  host: string;
}

const FILE = 'serve.json';

export function writeServeLock(dataDir: string, lock: ServeLock): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, FILE), `${JSON.stringify(lock)}\n`);
}

export function removeServeLock(dataDir: string, pid: number): void {
  const lock = readServeLock(dataDir);
  if (lock?.pid === pid) rmSync(join(dataDir, FILE), { force: true });
}

/** The running server's lock, or undefined when none is alive (stale locks are ignored). */
export function liveServeLock(dataDir: string): ServeLock | undefined {
  const lock = readServeLock(dataDir);
  if (!lock) return undefined;
  try {
    process.kill(lock.pid, 0);
    return lock;
  } catch {
    return undefined;
  }
}

function readServeLock(dataDir: string): ServeLock | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8')) as Partial<ServeLock>;
    return typeof v.pid === 'number' && typeof v.port === 'number' ? { pid: v.pid, port: v.port, host: v.host ?? '127.0.0.1' } : undefined;
  } catch {
    return undefined;
  }
}
