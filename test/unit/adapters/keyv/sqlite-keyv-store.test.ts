import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import Keyv from 'keyv';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteKeyvStore } from '../../../../src/adapters/keyv/sqlite-keyv-store.js';

let dir: string;
const opened: Keyv[] = [];

function keyv(namespace = 'ns', file = 'kv.sqlite'): Keyv {
  const k = new Keyv(new SqliteKeyvStore({ path: join(dir, file) }), { namespace, throwOnErrors: true });
  opened.push(k);
  return k;
}

/**
 * Moves the wall clock (`Date.now`, which the store and Keyv read for expiry) `ms` ahead without
 * waiting; timers stay real. Undone after each test.
 */
function stepWallClock(ms: number): void {
  const now = Date.now();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(now + ms);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-sqlite-'));
});
afterEach(async () => {
  vi.useRealTimers();
  for (const k of opened.splice(0)) await k.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('SqliteKeyvStore through Keyv', () => {
  it('sets, gets, has, deletes and gets many', async () => {
    const k = keyv();
    expect(await k.get('missing')).toBeUndefined();
    expect(await k.set('a', { n: 1, s: ':colon', list: [1, 2] })).toBe(true);
    await k.set('b', 'text');
    expect(await k.get('a')).toEqual({ n: 1, s: ':colon', list: [1, 2] });
    expect(await k.has('a')).toBe(true);
    expect(await k.has('zz')).toBe(false);
    expect(await k.getMany(['a', 'zz', 'b'])).toEqual([{ n: 1, s: ':colon', list: [1, 2] }, undefined, 'text']);
    expect(await k.delete('a')).toBe(true);
    expect(await k.delete('a')).toBe(false);
    expect(await k.get('a')).toBeUndefined();
  });

  it('expires values after their ttl', async () => {
    const k = keyv();
    // No timing assumption: an hour-long ttl is live, a 1 ms one expires (polled, not slept on).
    await k.set('long', 2, 3_600_000);
    expect(await k.get('long')).toBe(2);
    await k.set('short', 1, 1);
    await expect.poll(() => k.get('short')).toBeUndefined();
    expect(await k.has('short')).toBe(false);
    expect(await k.get('long')).toBe(2);
  });

  it('claims a key only while no live row holds it, and sweeps expired claims nobody reads again', async () => {
    const file = join(dir, 'claims.sqlite');
    const a = new SqliteKeyvStore({ path: file });
    expect(a.setIfAbsent('k', '{"value":1}', 60_000)).toBe(true);
    expect(a.setIfAbsent('k', '{"value":2}', 60_000)).toBe(false);
    for (let i = 0; i < 50; i++) await a.set(`gone-${i}`, '{"value":0}', 1);
    await a.disconnect();
    const rows = (): number => {
      const db = new DatabaseSync(file);
      try {
        return Number((db.prepare('SELECT count(*) AS n FROM keyv').get() as { n: number }).n);
      } finally {
        db.close();
      }
    };
    expect(rows()).toBe(51);
    // The next writer's first claim sweeps what expired meanwhile (polled: no timing assumption).
    await expect
      .poll(() => {
        const b = new SqliteKeyvStore({ path: file });
        try {
          b.setIfAbsent('other', '{"value":3}', 60_000);
        } finally {
          void b.disconnect();
        }
        return rows();
      })
      .toBe(2);
  });

  it('keeps namespaces apart: clear only empties its own (also with LIKE wildcards in the name)', async () => {
    const a = keyv('app_1');
    const b = keyv('appX1');
    await a.set('k', 'a');
    await b.set('k', 'b');
    expect(await a.get('k')).toBe('a');
    expect(await b.get('k')).toBe('b');
    await a.clear();
    expect(await a.get('k')).toBeUndefined();
    expect(await b.get('k')).toBe('b');
  });

  it('iterates the live keys of its namespace', async () => {
    const a = keyv('one');
    const b = keyv('two');
    await a.set('x', 1);
    await a.set('y', 2);
    await a.set('gone', 3, 1);
    await b.set('z', 9);
    // The 1 ms TTL runs out by the store's own clock (SQLite rows carry a wall-clock expiry): step it.
    stepWallClock(10);
    const seen: Array<[string, unknown]> = [];
    for await (const [key, value] of a.iterator!(undefined)) seen.push([key as string, value]);
    expect(seen).toEqual([
      ['x', 1],
      ['y', 2],
    ]);
  });

  it('persists to the file in WAL mode with synchronous=FULL', async () => {
    const k = keyv('p');
    await k.set('durable', { ok: true });
    await k.disconnect();
    const db = new DatabaseSync(join(dir, 'kv.sqlite'));
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('SELECT key FROM keyv').all()).toEqual([{ key: 'p:durable' }]);
    db.close();
    const again = keyv('p');
    expect(await again.get('durable')).toEqual({ ok: true });
  });

  it('reports errors as rejections and error events', async () => {
    const store = new SqliteKeyvStore({ path: join(dir, 'err.sqlite') });
    const errors: unknown[] = [];
    store.on('error', (e: unknown) => errors.push(e));
    await store.disconnect();
    await expect(store.set('k', 'v')).rejects.toThrow();
    expect(errors).toHaveLength(1);
  });

  it('refuses an unsafe table name', () => {
    expect(() => new SqliteKeyvStore({ path: ':memory:', table: 'x; DROP TABLE y' })).toThrow(/table name/);
  });
  it("read-only: creates nothing, sees the writer's rows, refuses writes and leaves expired rows in place", async () => {
    const file = join(dir, 'sub', 'ro.sqlite');
    expect(() => new SqliteKeyvStore({ path: file, readOnly: true })).toThrow(/unable to open/);
    expect(existsSync(join(dir, 'sub'))).toBe(false);
    const w = keyv('ns', 'ro.sqlite');
    await w.set('a', 1);
    await w.set('gone', 'x', 1);
    // The 1 ms TTL runs out by the store's own clock (SQLite rows carry a wall-clock expiry): step it.
    stepWallClock(5);
    const r = new Keyv(new SqliteKeyvStore({ path: join(dir, 'ro.sqlite'), readOnly: true }), { namespace: 'ns', throwOnErrors: true });
    opened.push(r);
    expect(await r.get('a')).toBe(1);
    await w.set('b', 2);
    expect(await r.get('b')).toBe(2);
    expect(await r.get('gone')).toBeUndefined();
    await expect(r.set('c', 3)).rejects.toThrow(/readonly/);
    await expect(r.delete('a')).rejects.toThrow(/readonly/);
    const db = new DatabaseSync(join(dir, 'ro.sqlite'));
    // The expired row is still there: skipping it is the reader's business, deleting it the writer's.
    expect(db.prepare("SELECT count(*) AS n FROM keyv WHERE key = 'ns:gone'").get()).toEqual({ n: 1 });
    db.close();
  });
});
