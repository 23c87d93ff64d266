import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../../src/adapters/keyv/keyv-store.js';
import type { KeyValueStore } from '../../../../src/ports/store.js';
import { redisAvailable, startRedis } from '../../../helpers/redis-server.js';
import { REPO_ROOT } from '../../../integration/helpers/spawn-bot.js';

let dir: string;
const opened: KeyValueStore[] = [];
function track(s: KeyValueStore): KeyValueStore {
  opened.push(s);
  return s;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-store-'));
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function roundTrip(store: KeyValueStore): Promise<void> {
  await store.set('a', { x: 1 });
  await store.set('b', 0);
  expect(await store.get('a')).toEqual({ x: 1 });
  expect(await store.get('b')).toBe(0);
  expect(await store.getMany(['a', 'nope', 'b'])).toEqual([{ x: 1 }, undefined, 0]);
  expect(await store.getMany([])).toEqual([]);
  await store.delete('a');
  expect(await store.get('a')).toBeUndefined();
}

describe('createStore', () => {
  it('defaults to the embedded sqlite file in the data dir, creating the dir', async () => {
    const dataDir = join(dir, 'nested', 'data');
    const store = track(createStore(undefined, dataDir));
    await roundTrip(store);
    expect(existsSync(join(dataDir, 'reprise.sqlite'))).toBe(true);
  });

  it('keeps values across close and reopen of the same file', async () => {
    const url = `sqlite://${join(dir, 'x.sqlite')}`;
    const first = createStore(url, dir);
    await first.set('k', ['v']);
    await first.close();
    expect(await track(createStore(url, dir)).get('k')).toEqual(['v']);
  });

  it('accepts file: URLs and memory://', async () => {
    await roundTrip(track(createStore(pathToFileURL(join(dir, 'f.sqlite')).href, dir)));
    expect(existsSync(join(dir, 'f.sqlite'))).toBe(true);
    await roundTrip(track(createStore('memory://', dir)));
  });

  it('rejects an unknown scheme naming the supported ones, without leaking credentials', () => {
    expect(() => createStore('postgres://user:secret@db/x', dir)).toThrow(/sqlite:\/\/.*redis:\/\/.*memory:\/\//);
    expect(() => createStore('postgres://user:secret@db/x', dir)).not.toThrow(/secret/);
    expect(() => createStore('/just/a/path', dir)).toThrow(/unsupported store URL/);
  });

  it('refuses to store undefined', async () => {
    await expect(track(createStore('memory://', dir)).set('k', undefined)).rejects.toThrow(/undefined/);
  });

  it('fails a write to an unreachable Redis instead of hanging or reporting success', async () => {
    const store = track(createStore('redis://127.0.0.1:1', dir, { connectTimeoutMs: 300 }));
    await expect(store.set('k', 1)).rejects.toThrow();
  });
});

describe('appendLog records', () => {
  it('read back exactly as written, strings starting with a colon included (keyv escapes those)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reprise-rec-'));
    const store = createStore(`sqlite://${join(dir, 's.sqlite')}`, dir);
    try {
      const value = { a: ':colon', b: ':base64:aGVsbG8=', c: '::double', d: [':x', 1, null, true], e: { ':key': 'v' }, f: 'plain' };
      const first = await store.appendLog({ headKey: 'h', prefix: 'r:', pad: 4 }, [value, { n: 2 }]);
      expect(first).toBe(1);
      expect(await store.get('r:0001')).toEqual(value);
      expect(await store.getMany(['r:0001', 'r:0002'])).toEqual([value, { n: 2 }]);
      expect(await store.get('h')).toBe(2);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(redisAvailable())('a Redis store, once closed', () => {
  it('holds nothing that keeps the process alive (a CLI command on Redis exits when done)', { timeout: 60_000 }, async () => {
    const redis = await startRedis();
    try {
      // A long connect timeout: a timer left behind by the connect race would hold the child
      // for a minute; closed properly, it exits as soon as its work is done.
      const script = `
        const { createStore } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'src/adapters/keyv/keyv-store.ts')).href)});
        const s = createStore(${JSON.stringify(redis.url)}, '.', { connectTimeoutMs: 60000 });
        await s.set('k', 1);
        if ((await s.get('k')) !== 1) process.exit(3);
        await s.close();`;
      // The source under test, not a build that may be stale (the unit tests run without one).
      const fromSource = [
        '--experimental-transform-types',
        '--disable-warning=ExperimentalWarning',
        '--import',
        pathToFileURL(join(REPO_ROOT, 'bench/ts-resolve.js')).href,
      ];
      const child = spawn(process.execPath, [...fromSource, '--input-type=module', '-e', script], { stdio: 'ignore' });
      const exited = await new Promise<number | null | 'held'>((resolve) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve('held');
        }, 30_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      expect(exited).toBe(0);
    } finally {
      await redis.stop();
    }
  });
});
