/**
 * A real `redis-server` on 127.0.0.1 for the tests that need one (the Debian package; `.ci/run`
 * installs it). Skipped when it is missing locally — but when `REPRISE_REQUIRE_REDIS=1` (set by
 * `.ci/run` after installing it) a missing or unstartable server fails the suite instead.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait-for.js';

const REQUIRED = process.env['REPRISE_REQUIRE_REDIS'] === '1';

/** Whether the Redis suites run here; throws when they are required and cannot. */
export function redisAvailable(): boolean {
  const ok = spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;
  if (!ok && REQUIRED) throw new Error('REPRISE_REQUIRE_REDIS=1 but redis-server / redis-cli are not on PATH (apt-get install redis-server)');
  return ok;
}

export interface RedisServer {
  port: number;
  url: string;
  dir: string;
  cli(...args: string[]): string;
  /** SIGKILL (a crash: with AOF `always`, every acknowledged write survives). */
  kill(): Promise<void>;
  /** Starts it again on the same port and data folder. */
  restart(): Promise<void>;
  /** Kills it and removes its folder. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/**
 * Starts a private Redis. `durable` (default): append-only file fsynced on every write, the
 * setting the README asks of a production Redis behind several replicas.
 */
export async function startRedis(opts: { durable?: boolean } = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'reprise-redis-'));
  const durable = opts.durable ?? true;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--dir',
    dir,
    '--appendonly',
    durable ? 'yes' : 'no',
    ...(durable ? ['--appendfsync', 'always'] : []),
  ];
  let child: ChildProcess | undefined;
  const cli = (...a: string[]): string => execFileSync('redis-cli', ['-p', String(port), ...a], { encoding: 'utf8' });
  const up = async (): Promise<void> => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    // A refused connection (not up yet) counts as not yet.
    await waitFor(() => cli('PING').trim() === 'PONG', `redis-server on port ${port} to answer PING`);
  };
  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  };
  await up();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    cli,
    kill,
    restart: async () => {
      await kill();
      await up();
    },
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
