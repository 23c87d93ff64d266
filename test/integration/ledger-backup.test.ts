/**
 * Backups and upgrades (issue 7 item 6, Done when: "A ledger exported, imported into an empty
 * store and verified gives the same aggregates"). A real `reprise serve` records a ledger
 * (firings, resolves, deliveries, 👍/👎, a silence, a note, through the real CLI); it is
 * exported while the bot runs, imported into an empty embedded store and into Redis, verified,
 * and compared read for read. Hostile files are refused with their line and leave the store
 * empty; a store of a newer build is refused; a store in today's format is upgraded in place.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import { Ledger } from '../../src/core/ledger/ledger.js';
import { STORE_SCHEMA_KEY, type StoreSchemaRecord } from '../../src/core/ledger/store-schema.js';
import type { KeyValueStore } from '../../src/ports/store.js';
import { redisAvailable, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli, spawnBot } from './helpers/spawn-bot.js';

afterEach(cleanup);
afterAll(() => {
  if (recorded) rmSync(recorded.dir, { recursive: true, force: true });
});

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';
const pod = (i: number): string => `checkout-api-7d9f8c6b5-${SAFE[i % SAFE.length]}k9z${SAFE[Math.floor(i / SAFE.length)]}`;
const FIXTURE_V0 = join(REPO_ROOT, 'test', 'fixtures', 'ledger-v0', 'reprise.sqlite');
const HAS_REDIS = redisAvailable();

function writeConfig(dir: string, store: string[] = []): string {
  const file = join(dir, 'reprise.yaml');
  writeFileSync(
    file,
    [`catalog:\n  dir: ${JSON.stringify(join(REPO_ROOT, 'catalog'))}`, `store:\n  snapshot_every: 5${store.map((l) => `\n  ${l}`).join('')}`].join('\n') + '\n',
  );
  return file;
}

/** Every per-entry aggregate and per-trigger occurrence the ledger answers, at a fixed time. */
async function reads(store: KeyValueStore): Promise<{ seq: number; reads: unknown; recalls: number; votes: number }> {
  const l = await Ledger.open(store);
  const now = new Date('2027-01-01T00:00:00Z');
  const entries = l.read
    .entryIds()
    .sort()
    .map((e) => [e, l.read.entryStats(e), l.read.trackRecord(e, 'incident', now)] as const);
  const triggers = l.read
    .triggerKeys()
    .sort()
    .map((t) => [t, l.read.occurrences(t), l.read.silence(t, now), l.read.recentEpisodes(t)] as const);
  return {
    seq: l.seq,
    reads: JSON.parse(JSON.stringify({ entries, triggers, recent: l.read.recentEpisodes(), resolves: l.read.aggregates().resolves })),
    recalls: entries.reduce((n, [, s]) => n + s.recalls, 0),
    votes: triggers.reduce((n, [, o]) => n + o.up + o.down, 0),
  };
}

async function withStore<T>(url: string, dir: string, fn: (s: KeyValueStore) => Promise<T>): Promise<T> {
  const s = createStore(url, dir);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const sqlite = (dir: string): string => `sqlite://${join(dir, 'reprise.sqlite')}`;
const eventLines = (file: string): string[] => readFileSync(file, 'utf8').trim().split('\n').slice(1, -1);

/** A ledger recorded by a real bot: exported while it runs, then again after a clean stop. */
interface Recorded {
  dir: string;
  whileRunning: string;
  afterStop: string;
}
let recorded: Recorded | undefined;

async function recordWithServe(): Promise<Recorded> {
  if (recorded) return recorded;
  // Shared by every test of the file: outlives each test's cleanup, removed after all of them.
  const dir = mkdtempSync(join(tmpdir(), 'reprise-backup-src-'));
  const config = writeConfig(dir);
  const env = { REPRISE_DATA_DIR: dir };
  const bot = await spawnBot({ dataDir: dir, args: ['--config', config] });
  for (let i = 1; i <= 6; i++) {
    const res = await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: pod(i) }));
    expect(res.status, res.text).toBe(202);
    if (i % 2 === 0) expect((await postAlert(bot.url, crashLoopPayload({ status: 'resolved', pod: pod(i - 1) }))).status).toBe(202);
  }
  // Deliveries are recorded after the cards reach the (console) surface.
  await bot.waitForTranscript((lines) => lines.length >= 6, 15_000);
  for (const args of [
    ['up', '--user', 'ann'],
    ['down', '--user', 'bob'],
    ['silence', '1h', '--user', 'eve'],
  ]) {
    const r = await runCli(['feedback', TRIGGER, ...args, '--config', config], { env });
    expect(r.code, r.stderr).toBe(0);
  }
  const note = await runCli(['note', TRIGGER, 'the cache node was restarted', '--user', 'ann', '--config', config], { env });
  expect(note.code, note.stderr).toBe(0);

  // A backup while the bot runs: it only reads.
  const whileRunning = join(dir, 'while-running.jsonl');
  const exp = await runCli(['ledger', 'export', '--out', whileRunning, '--config', config], { env });
  expect(exp.code, exp.stderr).toBe(0);
  expect(exp.stderr).toMatch(/^exported \d+ event\(s\) \(seq 1–\d+\) from .*reprise\.sqlite to .*while-running\.jsonl\n$/);
  // An import into the bot's own store is refused while it holds the writer lock.
  const busy = await runCli(['ledger', 'import', whileRunning, '--config', config], { env });
  expect(busy.code).toBe(1);
  expect(busy.stderr).toMatch(/in use by reprise serve \(pid \d+.*Nothing was imported/);

  expect((await bot.stop()).code).toBe(0);
  const afterStop = join(dir, 'after-stop.jsonl');
  const again = await runCli(['ledger', 'export', '--out', afterStop, '--config', config], { env });
  expect(again.code, again.stderr).toBe(0);
  recorded = { dir, whileRunning, afterStop };
  return recorded;
}

describe('ledger export → import → verify (embedded store)', () => {
  it('gives the same aggregates and occurrences as the ledger a real bot recorded', { timeout: 120_000 }, async () => {
    const src = await recordWithServe();
    // The export taken while the bot ran is a consistent cut: a prefix of the later one.
    const early = eventLines(src.whileRunning);
    const late = eventLines(src.afterStop);
    expect(early.length).toBeGreaterThan(20);
    expect(late.slice(0, early.length)).toEqual(early);
    const kinds = new Set(late.map((l) => (JSON.parse(l) as { event: { type: string } }).event.type));
    for (const k of ['open', 'resolve', 'outbox', 'delivered', 'feedback', 'silence', 'note']) expect(kinds, k).toContain(k);

    const dst = makeTmpDir('reprise-backup-dst-');
    const config = writeConfig(dst);
    const imp = await runCli(['ledger', 'import', src.afterStop, '--config', config], { env: { REPRISE_DATA_DIR: dst } });
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stdout).toMatch(
      new RegExp(`^imported ${late.length} event\\(s\\) from .*after-stop\\.jsonl \\(exported .* from .*reprise\\.sqlite\\) into .*reprise\\.sqlite\n`),
    );
    expect(imp.stdout).toMatch(new RegExp(`verified: stored aggregates at seq ${late.length} match a replay of the log`));
    expect(imp.stdout).toMatch(/aggregates: 1 entries \(recalls \d+, resolved \d+/);

    const before = await withStore(sqlite(src.dir), src.dir, reads);
    const after = await withStore(sqlite(dst), dst, reads);
    expect(before.recalls, 'the bot recorded recalls').toBeGreaterThan(0);
    expect(before.votes, 'and votes').toBeGreaterThan(0);
    expect(after.seq).toBe(before.seq);
    expect(after.reads).toEqual(before.reads);
    expect((await withStore(sqlite(dst), dst, (s) => s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY)))?.version).toBe(2);

    const verify = await runCli(['ledger', 'verify', '--config', config], { env: { REPRISE_DATA_DIR: dst } });
    expect(verify.code, verify.stdout).toBe(0);
    expect(verify.stdout).toContain('store schema version 2');
    expect(verify.stdout).toMatch(/stored aggregates at seq \d+ match a replay/);

    // The restored store serves: the bot opens it at the imported head.
    const bot = await spawnBot({ dataDir: dst, args: ['--config', config] });
    const opened = await bot.waitForLog((l) => l.msg === 'ledger opened');
    expect(opened['seq']).toBe(before.seq);
    expect((await bot.stop()).code).toBe(0);

    // A second import over it is refused, with how to proceed, and changes nothing.
    const twice = await runCli(['ledger', 'import', src.afterStop, '--config', config], { env: { REPRISE_DATA_DIR: dst } });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(
      /already holds a ledger \(head #\d+\): an import only goes into an empty store.*Nothing was imported; the store was not changed/,
    );
    expect((await withStore(sqlite(dst), dst, reads)).seq).toBe(before.seq);
  });

  it('refuses a truncated, reordered, tampered or garbage file with its line, and leaves the store empty', { timeout: 120_000 }, async () => {
    const src = await recordWithServe();
    const lines = readFileSync(src.afterStop, 'utf8').trim().split('\n');
    const edited = [...lines];
    const noteAt = edited.findIndex((l) => l.includes('"type":"note"'));
    edited[noteAt] = edited[noteAt]!.replace('the cache node', 'the DNS server');
    const cases: Array<[string, string, RegExp]> = [
      ['truncated', lines.slice(0, -3).join('\n') + '\n', new RegExp(`ends at line ${lines.length - 3} without its trailer: it is truncated`)],
      ['cut mid-line', lines.join('\n').slice(0, -40), new RegExp(`line ${lines.length}: the trailer is malformed|line ${lines.length}: not JSON`)],
      ['reordered', [lines[0], lines[2], lines[1], ...lines.slice(3)].join('\n') + '\n', /line 2: event seq 2 where 1 was expected/],
      ['tampered', edited.join('\n') + '\n', new RegExp(`line ${lines.length}: the events' digest does not match`)],
      ['garbage', 'PK\u0003\u0004 this is a zip, not an export\n', /line 1: not JSON/],
    ];
    for (const [name, text, reason] of cases) {
      const dst = makeTmpDir('reprise-backup-bad-');
      const file = join(dst, `${name.replace(/ /g, '-')}.jsonl`);
      writeFileSync(file, text);
      const r = await runCli(['ledger', 'import', file], { env: { REPRISE_DATA_DIR: dst } });
      expect(r.code, `${name}: ${r.stderr}`).toBe(1);
      expect(r.stderr, name).toMatch(reason);
      expect(r.stderr, name).toContain('Nothing was imported; the store is left empty.');
      const events = await runCli(['ledger', 'events', '--json'], { env: { REPRISE_DATA_DIR: dst } });
      expect(events.stdout, name).toBe('');
      expect(await withStore(sqlite(dst), dst, (s) => s.get(STORE_SCHEMA_KEY)), name).toBeUndefined();
    }
  });

  it('answers --help, and says what is missing from a bare import or an export with nothing to read', async () => {
    for (const sub of ['export', 'import']) {
      const r = await runCli(['ledger', sub, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^usage: reprise ledger events/);
      expect(r.stdout).toContain(`reprise ledger ${sub}`);
    }
    const dir = makeTmpDir();
    const bare = await runCli(['ledger', 'import'], { env: { REPRISE_DATA_DIR: dir } });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/which file\?/);
    const stdin = await runCli(['ledger', 'import', '-'], { env: { REPRISE_DATA_DIR: dir } });
    expect(stdin.code).toBe(2);
    expect(stdin.stderr).toMatch(/cannot read stdin/);
    const nothing = await runCli(['ledger', 'export', '--out', join(dir, 'x.jsonl')], { env: { REPRISE_DATA_DIR: join(dir, 'nowhere') } });
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/no ledger at .* yet/);
  });
});

describe.runIf(HAS_REDIS)('ledger export → import → verify (Redis)', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ durable: true });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('imports into an empty Redis with the same aggregates; a held leader lease refuses it', { timeout: 120_000 }, async () => {
    const src = await recordWithServe();
    redis.cli('FLUSHALL');
    const dir = makeTmpDir();
    const config = writeConfig(dir, [`url: ${redis.url}`]);

    // A replica leads the store: one writer at a time.
    await withStore(redis.url, dir, async (s) => {
      const lease = s.leaderLease!('serve-replica', 30_000);
      const token = await lease.acquire();
      expect(token).toBeGreaterThan(0);
      const r = await runCli(['ledger', 'import', src.afterStop, '--config', config]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/a reprise serve replica leads redis:\/\/127\.0\.0\.1:\d+ \(its leader lease is held\).*Nothing was imported/);
      await lease.release(token!);
    });
    expect(redis.cli('EXISTS', 'reprise::seq').trim(), 'nothing was written').toBe('0');

    const imp = await runCli(['ledger', 'import', src.afterStop, '--config', config]);
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stdout).toMatch(/verified: stored aggregates at seq \d+ match a replay/);
    expect(redis.cli('EXISTS', 'reprise::seq').trim(), 'the head is where the bot reads it').toBe('1');
    const before = await withStore(sqlite(src.dir), src.dir, reads);
    const after = await withStore(redis.url, dir, reads);
    expect(after.seq).toBe(before.seq);
    expect(after.reads).toEqual(before.reads);

    // And back out of Redis: the same events.
    const out = join(dir, 'from-redis.jsonl');
    const exp = await runCli(['ledger', 'export', '--out', out, '--config', config]);
    expect(exp.code, exp.stderr).toBe(0);
    expect(eventLines(out)).toEqual(eventLines(src.afterStop));
  });
});

describe('upgrades: the stored schema version', () => {
  it("a store in today's format (no version) is read as it is, and serve records version 1 at start", { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    copyFileSync(FIXTURE_V0, join(dir, 'reprise.sqlite'));
    const config = writeConfig(dir);
    const env = { REPRISE_DATA_DIR: dir };
    const v0 = await runCli(['ledger', 'verify', '--config', config], { env });
    expect(v0.code, v0.stdout).toBe(0);
    expect(v0.stdout).toContain('store schema version not recorded (a store written before versions were recorded: read as version 0');
    const before = await withStore(sqlite(dir), dir, reads);

    const bot = await spawnBot({ dataDir: dir, args: ['--config', config] });
    expect((await bot.waitForLog((l) => l.msg === 'ledger opened'))['seq']).toBe(before.seq);
    expect(bot.logs().some((l) => String(l.msg).startsWith('store schema migrated from version 0 to 1'))).toBe(true);
    expect((await bot.stop()).code).toBe(0);

    const rec = await withStore(sqlite(dir), dir, (s) => s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY));
    expect(rec?.version).toBe(2);
    expect(rec?.migrated?.map((m) => `${m.from}→${m.to}`)).toEqual(['0→1', '1→2']);
    expect((await withStore(sqlite(dir), dir, reads)).reads).toEqual(before.reads);
    const v1 = await runCli(['ledger', 'verify', '--config', config], { env });
    expect(v1.code, v1.stdout).toBe(0);
    expect(v1.stdout).toContain('store schema version 2\n');
  });

  it('a store of a newer reprise is refused by serve and by the ledger commands, saying to upgrade', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    copyFileSync(FIXTURE_V0, join(dir, 'reprise.sqlite'));
    await withStore(sqlite(dir), dir, (s) => s.set(STORE_SCHEMA_KEY, { version: 7, at: '2030-01-01T00:00:00.000Z' }));
    const env = { REPRISE_DATA_DIR: dir };
    await expect(spawnBot({ dataDir: dir })).rejects.toThrow(/schema version 7, written by a newer reprise.*Upgrade reprise/);
    for (const args of [
      ['ledger', 'verify'],
      ['ledger', 'events'],
      ['ledger', 'export'],
    ]) {
      const r = await runCli(args, { env });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(/schema version 7, written by a newer reprise; this build knows versions up to 2\. Upgrade reprise/);
    }
    expect((await withStore(sqlite(dir), dir, (s) => s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY)))?.version).toBe(7);
  });
});
