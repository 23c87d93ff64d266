import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MAX_SOCKET_PATH } from '../http/control-server.js';

/**
 * How a running `serve` announces itself in its data dir, so CLI writers go through it. Only
 * a hint: the store lock says whether a bot really runs, the socket answers whether it is
 * this one.
 */
export interface ServeOwner {
  pid: number;
  /** The control socket (mode 0600). */
  socket: string;
  port: number;
  host: string;
  user: string;
  startedAt: string;
}

const FILE = 'serve.json';

/** The control socket for a data dir: inside it, or in the temp dir when that path is too long for a socket. */
export function controlSocketPath(dataDir: string): string {
  const inDir = join(resolve(dataDir), 'reprise.sock');
  if (Buffer.byteLength(inDir) <= MAX_SOCKET_PATH) return inDir;
  const id = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16);
  return join(tmpdir(), `reprise-${id}.sock`);
}

export function writeServeOwner(dataDir: string, owner: ServeOwner): void {
  mkdirSync(dataDir, { recursive: true });
  // Write then rename: a reader never sees half a file.
  const tmp = join(dataDir, `.${FILE}.${process.pid}`);
  writeFileSync(tmp, `${JSON.stringify(owner)}\n`, { mode: 0o600 });
  renameSync(tmp, join(dataDir, FILE));
}

export function removeServeOwner(dataDir: string, pid: number): void {
  if (readServeOwner(dataDir)?.pid === pid) rmSync(join(dataDir, FILE), { force: true });
}

/** The last `serve` that announced itself here, if its file is readable (alive or not). */
export function readServeOwner(dataDir: string): ServeOwner | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8')) as Partial<ServeOwner>;
    if (typeof v.pid !== 'number' || typeof v.socket !== 'string') return undefined;
    return { pid: v.pid, socket: v.socket, port: v.port ?? 0, host: v.host ?? '', user: v.user ?? '', startedAt: v.startedAt ?? '' };
  } catch {
    return undefined;
  }
}
