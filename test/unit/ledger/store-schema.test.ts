/**
 * The store's schema version (issue 7 item 6): a store in today's format (no version recorded)
 * opens unchanged and gets version 1 recorded by its writer; a store of a newer build is
 * refused; the migration registry runs its steps in order and resumes after a failed one.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { verifyLedger } from '../../../src/core/ledger/ledger-verify.js';
import {
  checkStoreSchemaForReading,
  IDENTITY_KEY,
  migrateStoreSchema,
  migrationPath,
  readStoreSchema,
  STORE_SCHEMA_KEY,
  STORE_SCHEMA_VERSION,
  type StoreMigration,
  type StoreSchemaRecord,
} from '../../../src/core/ledger/store-schema.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { realisticEvents } from './backup-events.js';

const FIXTURE = new URL('../../fixtures/ledger-v0/reprise.sqlite', import.meta.url).pathname;

let dir: string;
const open: KeyValueStore[] = [];
const store = (url: string): KeyValueStore => {
  const s = createStore(url, dir);
  open.push(s);
  return s;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-schema-'));
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** Every per-entry aggregate and per-trigger occurrence a ledger answers. */
function reads(l: Ledger): unknown {
  const now = new Date('2026-04-01T00:00:00Z');
  const entries = l.read
    .entryIds()
    .sort()
    .map((e) => [e, l.read.entryStats(e), l.read.trackRecord(e, 'incident', now)]);
  const triggers = l.read
    .triggerKeys()
    .sort()
    .map((t) => [t, l.read.occurrences(t), l.read.silence(t, now), l.read.recentEpisodes(t)]);
  return JSON.parse(JSON.stringify({ seq: l.seq, entries, triggers, recent: l.read.recentEpisodes(), resolves: l.read.aggregates().resolves }));
}

describe("a store in today's format (written by the build before the schema version)", () => {
  it('opens with the new code, gets the current version recorded by its writer, and reads exactly the same', async () => {
    const file = join(dir, 'reprise.sqlite');
    copyFileSync(FIXTURE, file);
    const s = store(`sqlite://${file}`);
    expect(await s.get(STORE_SCHEMA_KEY), 'the fixture predates the version').toBeUndefined();
    const before = await readStoreSchema(s);
    expect(before).toMatchObject({ version: 0, recorded: false, empty: false });
    expect(before.pending.map((m) => `${m.from}→${m.to}`)).toEqual(['0→1', '1→2']);

    // A reader opens it as it is, and writes nothing.
    const reader = await Ledger.open(s);
    expect(reader.seq).toBe(realisticEvents().length);
    expect(await s.get(STORE_SCHEMA_KEY)).toBeUndefined();
    const readBefore = reads(reader);

    // The writer (serve, or a CLI command under the lock) records the version at open.
    const writer = await Ledger.open(s, { migrate: true });
    const rec = await s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY);
    expect(rec?.version).toBe(STORE_SCHEMA_VERSION);
    expect(rec?.migrated?.map((m) => [m.from, m.to])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    // Every event it holds was keyed by the identity before version 2.
    expect(await s.get(IDENTITY_KEY)).toMatchObject({ version: 2, lastV1Seq: realisticEvents().length });
    expect(reads(writer)).toEqual(readBefore);

    // The same events as written, replayed. The old build's snapshot is of an older read-model
    // version: ignored (a full replay), and replaced by the writer's next snapshot.
    const v = await verifyLedger(s);
    expect(v.corrupt).toEqual([]);
    expect(v.snapshot).toBe('old_format');
    expect(v.total).toBe(realisticEvents().length);
    // And it keeps working: a new event appends after the old ones.
    await writer.append({ type: 'resolve', fingerprint: 'fp-after-upgrade', at: '2026-05-01T00:00:00.000Z' });
    expect(writer.seq).toBe(realisticEvents().length + 1);
    await writer.close();
    expect((await verifyLedger(s)).snapshot).toBe('match');
    // A second open has nothing left to do.
    expect(await readStoreSchema(s)).toMatchObject({ version: STORE_SCHEMA_VERSION, recorded: true, pending: [] });
  });

  it('matches, read for read, a ledger written from the same events by the current writer', async () => {
    const file = join(dir, 'reprise.sqlite');
    copyFileSync(FIXTURE, file);
    const old = await Ledger.open(store(`sqlite://${file}`), { migrate: true });
    const fresh = await Ledger.open(store('memory://'));
    const events = realisticEvents();
    for (let i = 0; i < events.length; i += 7) {
      await fresh.transaction(async (tx) => {
        for (const e of events.slice(i, i + 7)) tx.record(e);
      });
    }
    expect(reads(old)).toEqual(reads(fresh));
  });
});

describe('a store claiming a newer schema version', () => {
  it('is refused by readers and writers, naming the fix', async () => {
    const s = store(`sqlite://${join(dir, 'new.sqlite')}`);
    const l = await Ledger.open(s, { migrate: true });
    await l.append({ type: 'resolve', fingerprint: 'f', at: '2026-03-01T00:00:00.000Z' });
    await l.close();
    await s.set(STORE_SCHEMA_KEY, { version: STORE_SCHEMA_VERSION + 1, at: '2027-01-01T00:00:00.000Z' });
    await expect(Ledger.open(s)).rejects.toThrow(new RegExp(`schema version ${STORE_SCHEMA_VERSION + 1}, written by a newer reprise.*Upgrade reprise`));
    await expect(Ledger.open(s, { migrate: true })).rejects.toThrow(/Upgrade reprise/);
    await expect(checkStoreSchemaForReading(s)).rejects.toThrow(/newer reprise/);
    // Refusing changed nothing.
    expect((await s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY))?.version).toBe(STORE_SCHEMA_VERSION + 1);
  });

  it('refuses a damaged version record instead of guessing', async () => {
    const s = store('memory://');
    await s.set(STORE_SCHEMA_KEY, { version: 'one' });
    await expect(Ledger.open(s)).rejects.toThrow(/schema record "meta:schema" is damaged/);
  });
});

describe('recording the version', () => {
  it("records the current version on an empty store at the writer's open, and nothing for a reader", async () => {
    const s = store('memory://');
    await Ledger.open(s);
    expect(await s.get(STORE_SCHEMA_KEY)).toBeUndefined();
    expect(await readStoreSchema(s)).toMatchObject({ version: STORE_SCHEMA_VERSION, recorded: false, empty: true, pending: [] });
    await Ledger.open(s, { migrate: true });
    const rec = await s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY);
    expect(rec?.version).toBe(STORE_SCHEMA_VERSION);
    expect(rec?.migrated).toBeUndefined();
  });

  it('a replica that does not lead records nothing; it migrates once it leads, before its first write', async () => {
    const s = store('memory://');
    await s.appendLog({ headKey: 'seq', prefix: 'ev:', pad: 12 }, [{ type: 'resolve', fingerprint: 'f', at: '2026-03-01T00:00:00.000Z' }]);
    let fence: { key: string; token: number } | undefined;
    const l = await Ledger.open(s, { migrate: true, fence: () => fence });
    expect(await s.get(STORE_SCHEMA_KEY), 'a follower writes nothing').toBeUndefined();
    await expect(l.append({ type: 'resolve', fingerprint: 'g', at: '2026-03-01T00:01:00.000Z' })).rejects.toThrow(/not the leader/);
    expect(await s.get(STORE_SCHEMA_KEY)).toBeUndefined();
    fence = { key: 'leader:fence', token: 1 };
    await l.append({ type: 'resolve', fingerprint: 'g', at: '2026-03-01T00:01:00.000Z' });
    expect((await s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY))?.version).toBe(STORE_SCHEMA_VERSION);
  });
});

describe('the migration registry', () => {
  const ran: string[] = [];
  const registry = (failAt?: number): StoreMigration[] => [
    { from: 0, to: 1, description: 'record', readsUnmigrated: true, run: async () => void ran.push('0→1') },
    {
      from: 1,
      to: 2,
      description: 'rename a key',
      readsUnmigrated: false,
      run: async ({ store: s, write }) => {
        ran.push('1→2');
        if (failAt === 2) throw new Error('disk full');
        await write('renamed', (await s.get('old')) ?? 'none');
      },
    },
    { from: 2, to: 3, description: 'add an index', readsUnmigrated: true, run: async () => void ran.push('2→3') },
  ];
  const clock = () => new Date('2026-06-01T00:00:00Z');
  const plain = (s: KeyValueStore) => ({ store: s, write: (k: string, v: unknown) => s.set(k, v) });

  it('runs the steps from the stored version in order, recording the version after each', async () => {
    ran.length = 0;
    const s = store('memory://');
    await s.set('seq', 3);
    await s.set('old', 'value');
    const steps = await migrateStoreSchema(plain(s), clock, 3, registry());
    expect(steps.map((m) => m.to)).toEqual([1, 2, 3]);
    expect(ran).toEqual(['0→1', '1→2', '2→3']);
    expect(await s.get('renamed')).toBe('value');
    const rec = await s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY);
    expect(rec).toEqual({
      version: 3,
      at: '2026-06-01T00:00:00.000Z',
      migrated: [0, 1, 2].map((from) => ({ from, to: from + 1, at: '2026-06-01T00:00:00.000Z' })),
    });
    expect(await migrateStoreSchema(plain(s), clock, 3, registry())).toEqual([]);
  });

  it('a failed step leaves the version at the last step done, and the next run resumes there', async () => {
    ran.length = 0;
    const s = store('memory://');
    await s.set('seq', 3);
    await expect(migrateStoreSchema(plain(s), clock, 3, registry(2))).rejects.toThrow(/disk full/);
    expect((await s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY))?.version).toBe(1);
    // A reader refuses a store it cannot read until the writer migrates it.
    await expect(checkStoreSchemaForReading(s, 3, registry())).rejects.toThrow(/must be migrated \(rename a key\).*reprise serve/);
    ran.length = 0;
    await migrateStoreSchema(plain(s), clock, 3, registry());
    expect(ran).toEqual(['1→2', '2→3']);
    expect((await s.get<StoreSchemaRecord>(STORE_SCHEMA_KEY))?.version).toBe(3);
  });

  it('refuses a build whose registry lacks a step', () => {
    expect(() => migrationPath(0, 2, [registry()[0]!])).toThrow(/no migration of the store schema from version 1 to 2/);
    expect(migrationPath(0).map((m) => m.to)).toEqual([1, 2]);
    expect(STORE_SCHEMA_VERSION).toBe(2);
  });
});
