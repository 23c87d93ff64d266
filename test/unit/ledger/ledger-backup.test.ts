/**
 * Ledger export and import (issue 7 item 6) in-process: a round trip keeps every aggregate, and
 * a truncated, reordered, tampered, foreign or garbage file is refused with its line and reason
 * before anything is written — the target store stays empty.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { isRepriseError } from '../../../src/core/errors.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { HEAD_KEY, Ledger, SNAPSHOT_KEY } from '../../../src/core/ledger/ledger.js';
import { checkExport, exportLedger, importLedger } from '../../../src/core/ledger/ledger-backup.js';
import { addEventToDigest } from '../../../src/core/ledger/ledger-export-format.js';
import { IMPORT_MARKER_KEY, STORE_SCHEMA_KEY, STORE_SCHEMA_VERSION } from '../../../src/core/ledger/store-schema.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { realisticEvents } from './backup-events.js';

const NOW = () => new Date('2026-07-01T12:00:00Z');

async function sourceLedger(events: LedgerEvent[] = realisticEvents()): Promise<{ store: KeyValueStore; ledger: Ledger }> {
  const store = createStore('memory://', '/tmp');
  const ledger = await Ledger.open(store, { migrate: true, snapshotEvery: 50 });
  for (let i = 0; i < events.length; i += 5) {
    await ledger.transaction(async (tx) => {
      for (const e of events.slice(i, i + 5)) tx.record(e);
    });
  }
  return { store, ledger };
}

async function exportLines(store: KeyValueStore): Promise<string[]> {
  const out: string[] = [];
  for await (const l of exportLedger(store, { source: 'memory://', now: NOW })) out.push(l.slice(0, -1));
  return out;
}

const source = (lines: string[]) => () =>
  (async function* () {
    yield* lines;
  })();

/** Per-entry aggregates and per-trigger occurrences, the reads the Done-when compares. */
function aggregates(l: Ledger): unknown {
  const now = new Date('2026-08-01T00:00:00Z');
  return JSON.parse(
    JSON.stringify({
      entries: l.read
        .entryIds()
        .sort()
        .map((e) => [e, l.read.entryStats(e), l.read.trackRecord(e, 'incident', now)]),
      triggers: l.read
        .triggerKeys()
        .sort()
        .map((t) => [t, l.read.occurrences(t), l.read.silence(t, now)]),
    }),
  );
}

async function assertEmpty(store: KeyValueStore): Promise<void> {
  expect(await store.get(HEAD_KEY)).toBeUndefined();
  expect(await store.get(SNAPSHOT_KEY)).toBeUndefined();
  expect(await store.get('ev:000000000001')).toBeUndefined();
  expect(await store.get(STORE_SCHEMA_KEY)).toBeUndefined();
}

/** Imports `lines` into a fresh store; resolves with the refusal's message (and checks the store stayed empty). */
async function refusal(lines: string[]): Promise<string> {
  const target = createStore('memory://', '/tmp');
  try {
    await importLedger(target, source(lines), { now: NOW });
  } catch (err) {
    expect(isRepriseError(err), String(err)).toBe(true);
    await assertEmpty(target);
    return (err as Error).message;
  }
  throw new Error('the import was not refused');
}

/** Rewrites the trailer's events digest as if whoever edited the file knew the format. */
function redigest(lines: string[]): string[] {
  const hash = createHash('sha256');
  for (const l of lines.slice(1, -1)) {
    const v = JSON.parse(l) as { seq: number; event: unknown };
    addEventToDigest(hash, v.seq, v.event);
  }
  const trailer = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
  trailer['eventsSha256'] = hash.digest('hex');
  return [...lines.slice(0, -1), JSON.stringify(trailer)];
}

describe('ledger export → import', () => {
  it('gives the same aggregates, occurrences and events, through the real writer (snapshots included)', async () => {
    const { store, ledger } = await sourceLedger();
    const lines = await exportLines(store);
    const events = realisticEvents();
    expect(lines).toHaveLength(events.length + 2);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      kind: 'header',
      format: 'reprise-ledger-export',
      formatVersion: 1,
      schemaVersion: 2,
      headSeq: events.length,
      source: 'memory://',
      exportedAt: '2026-07-01T12:00:00.000Z',
    });
    expect(JSON.parse(lines[1]!)).toEqual({ kind: 'event', seq: 1, event: events[0] });
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ kind: 'trailer', count: events.length, lastSeq: events.length });

    const target = createStore('memory://', '/tmp');
    const result = await importLedger(target, source(lines), { ledger: { snapshotEvery: 50 }, now: NOW });
    expect(result.verification.snapshot).toBe('match');
    expect(result.verification.total).toBe(events.length);
    const imported = await Ledger.open(target);
    expect(imported.seq).toBe(ledger.seq);
    expect(aggregates(imported)).toEqual(aggregates(ledger));
    expect(aggregates(imported)).not.toEqual(aggregates(await Ledger.open(createStore('memory://', '/tmp'))));
    // Every event, in order, with its seq.
    expect(await exportLines(target)).toEqual(lines);
    // The writer's periodic snapshot was written, as the bot would.
    expect((await target.get<{ seq: number }>(SNAPSHOT_KEY))?.seq).toBe(events.length);
    expect((await target.get<{ version: number }>(STORE_SCHEMA_KEY))?.version).toBe(STORE_SCHEMA_VERSION);
  });

  it('exports a consistent cut: events appended during the export are not in it', async () => {
    const { store, ledger } = await sourceLedger();
    const head = ledger.seq;
    const out: string[] = [];
    for await (const l of exportLedger(store, { source: 'x' })) {
      out.push(l);
      if (out.length === 3) await ledger.append({ type: 'resolve', fingerprint: 'late', at: '2026-09-01T00:00:00.000Z' });
    }
    expect(ledger.seq).toBe(head + 1);
    const checked = await checkExport(source(out.map((l) => l.slice(0, -1)))());
    expect(checked.trailer.count).toBe(head);
  });

  it('reports progress on both sides', async () => {
    const { store } = await sourceLedger(realisticEvents(10, 100));
    const exported: string[] = [];
    const lines: string[] = [];
    for await (const l of exportLedger(store, { source: 'x', progressEvery: 50, onProgress: (d, t) => exported.push(`${d}/${t}`) })) lines.push(l.slice(0, -1));
    const total = lines.length - 2;
    expect(exported).toEqual(Array.from({ length: Math.floor(total / 50) }, (_, i) => `${(i + 1) * 50}/${total}`));
    const imported: string[] = [];
    await importLedger(createStore('memory://', '/tmp'), source(lines), { batch: 20, progressEvery: 50, onProgress: (d, t) => imported.push(`${d}/${t}`) });
    // Reported after the batch (of 20) that passes each multiple of 50.
    expect(imported).toEqual(Array.from({ length: Math.floor(total / 50) }, (_, i) => `${Math.min(total, Math.ceil(((i + 1) * 50) / 20) * 20)}/${total}`));
  });

  it('round-trips an empty ledger', async () => {
    const lines = await exportLines(createStore('memory://', '/tmp'));
    expect(lines).toHaveLength(2);
    const target = createStore('memory://', '/tmp');
    await importLedger(target, source(lines));
    expect((await Ledger.open(target)).seq).toBe(0);
  });

  it('refuses to export a ledger with an unreadable record, naming it', async () => {
    const { store } = await sourceLedger(realisticEvents(3, 0));
    await store.set('ev:000000000002', { type: 'open' });
    await expect(exportLines(store)).rejects.toThrow(/record #2 cannot be read .*ledger verify/);
  });
});

describe('ledger import refuses', () => {
  let lines: string[];
  const good = async (): Promise<string[]> => (lines ??= await exportLines((await sourceLedger(realisticEvents(6, 20))).store));

  it('a store that already holds a ledger, saying how to proceed, and leaves it untouched', async () => {
    const { store, ledger } = await sourceLedger(realisticEvents(2, 0));
    const before = ledger.seq;
    await expect(importLedger(store, source(await good()))).rejects.toThrow(/already holds a ledger \(head #\d+\).*empty store.*export it first/);
    expect((await Ledger.open(store)).seq).toBe(before);
  });

  it('a truncated file (no trailer)', async () => {
    const l = await good();
    expect(await refusal(l.slice(0, -1))).toMatch(new RegExp(`ends at line ${l.length - 1} without its trailer: it is truncated`));
  });

  it('a file cut in the middle of a line', async () => {
    const l = await good();
    const cut = [...l.slice(0, 10), l[10]!.slice(0, 25)];
    expect(await refusal(cut)).toMatch(/^line 11: not JSON/);
  });

  it('reordered lines, a repeated line and a missing line', async () => {
    const l = await good();
    expect(await refusal([l[0]!, l[2]!, l[1]!, ...l.slice(3)])).toMatch(
      /^line 2: event seq 2 where 1 was expected: lines are missing, repeated or out of order/,
    );
    expect(await refusal([...l.slice(0, 5), l[4]!, ...l.slice(5)])).toMatch(/^line 6: event seq 4 where 5 was expected/);
    expect(await refusal([...l.slice(0, 5), ...l.slice(6)])).toMatch(/^line 6: event seq 6 where 5 was expected/);
  });

  it('an edited event (the events digest)', async () => {
    const l = [...(await good())];
    const i = l.findIndex((x) => x.includes('"note"'));
    l[i] = l[i]!.replace('it was the cache', 'it was DNS');
    expect(await refusal(l)).toMatch(new RegExp(`^line ${l.length}: the events' digest does not match the trailer's: an event was changed after the export`));
  });

  it('an edited vote with a recomputed digest (the aggregates of a replay)', async () => {
    const l = [...(await good())];
    // Ann's last vote on its trigger: the one that stands in the aggregates.
    const i = l.findLastIndex((x) => x.includes('"vote":"up"') && x.includes('"user":"ann"'));
    l[i] = l[i]!.replace('"vote":"up"', '"vote":"down"');
    expect(await refusal(redigest(l))).toMatch(
      new RegExp(
        `^line ${l.length}: the aggregates of a replay differ from the trailer's: \\$\\.aggregates\\.(entries|triggers)\\..*\\.(up|down): trailer \\d+, replay \\d+`,
      ),
    );
  });

  it('an edited vote that leaves the aggregates equal (the digest of the replayed state)', async () => {
    const l = [...(await good())];
    // Ann's first vote: a later one on the same trigger replaces it, so only the full state differs.
    const i = l.findIndex((x) => x.includes('"vote":"up"') && x.includes('"user":"ann"'));
    l[i] = l[i]!.replace('"vote":"up"', '"vote":"down"');
    expect(await refusal(redigest(l))).toMatch(new RegExp(`^line ${l.length}: the replayed state's digest differs from the trailer's`));
  });

  it('an edited trailer count or aggregate', async () => {
    const l = await good();
    const trailer = JSON.parse(l.at(-1)!) as { count: number; aggregates: { resolves: number } };
    expect(await refusal([...l.slice(0, -1), JSON.stringify({ ...trailer, count: trailer.count + 1 })])).toMatch(
      /the trailer counts \d+ event\(s\), the file holds \d+/,
    );
    expect(await refusal([...l.slice(0, -1), JSON.stringify({ ...trailer, aggregates: { ...trailer.aggregates, resolves: 999 } })])).toMatch(
      /aggregates of a replay differ.*\$\.aggregates\.resolves: trailer 999/,
    );
  });

  it('an event that is not a valid ledger event, naming the field', async () => {
    const l = [...(await good())];
    const v = JSON.parse(l[1]!) as { event: Record<string, unknown> };
    delete v.event['fingerprint'];
    l[1] = JSON.stringify(v);
    expect(await refusal(l)).toMatch(/^line 2: not a valid event line: event: open event: fingerprint must be a non-empty string/);
    l[1] = JSON.stringify({ ...v, seq: 1, event: { type: 'explode', at: '2026-01-01T00:00:00Z' } });
    expect(await refusal(l)).toMatch(/^line 2: .*unknown event type "explode"/);
  });

  it('garbage, an empty file, a foreign JSON-lines file, a blank line, and lines after the trailer', async () => {
    const l = await good();
    expect(await refusal(['\u0000\u0001binary garbage'])).toMatch(/^line 1: not JSON .*not a reprise ledger export/);
    expect(await refusal([])).toMatch(/the file is empty: not a reprise ledger export/);
    expect(await refusal(['{"level":30,"msg":"listening"}'])).toMatch(/^line 1: expected the export header/);
    expect(await refusal(['{"kind":"header","format":"something-else"}'])).toMatch(/^line 1: format "something-else" is not "reprise-ledger-export"/);
    expect(await refusal([...l.slice(0, 3), '', ...l.slice(3)])).toMatch(/^line 4: an empty line/);
    expect(await refusal([...l, l[1]!])).toMatch(new RegExp(`^line ${l.length + 1}: a line after the trailer`));
    expect(await refusal([...l.slice(0, -1), l[0]!])).toMatch(new RegExp(`^line ${l.length}: a second header`));
  });

  it('a file from a newer reprise (export format or store schema), saying to upgrade', async () => {
    const l = await good();
    const header = JSON.parse(l[0]!) as Record<string, unknown>;
    expect(await refusal([JSON.stringify({ ...header, formatVersion: 2 }), ...l.slice(1)])).toMatch(
      /^line 1: export format version 2 was written by a newer reprise.*upgrade reprise/,
    );
    expect(await refusal([JSON.stringify({ ...header, schemaVersion: 9 }), ...l.slice(1)])).toMatch(
      /^line 1: the events come from a store at schema version 9, newer than this build knows \(2\): upgrade reprise/,
    );
    expect(await refusal([JSON.stringify({ ...header, exportedAt: 'yesterday' }), ...l.slice(1)])).toMatch(/^line 1: the header is malformed: exportedAt/);
  });

  it('a file that changes between the check and the write, and leaves the store empty', async () => {
    const l = await good();
    let reads = 0;
    const changing = () =>
      (async function* () {
        reads += 1;
        for (const [i, x] of l.entries()) yield reads > 1 && i === 3 ? x.replace('"at":"', '"at":"2030') : x;
      })();
    const target = createStore('memory://', '/tmp');
    await expect(importLedger(target, changing, { batch: 2 })).rejects.toThrow(/line 4/);
    expect(reads).toBe(2);
    await assertEmpty(target);
  });

  it('a store that is written to by someone else during the import, and empties it again', async () => {
    const l = await good();
    const target = createStore('memory://', '/tmp');
    let intruded = false;
    const intruding = () =>
      (async function* () {
        for (const [i, x] of l.entries()) {
          // After the first batch went in, another writer appends (the pass that writes).
          if (i === 5 && !intruded && (await target.get(HEAD_KEY)) !== undefined) {
            intruded = true;
            await target.appendLog({ headKey: 'seq', prefix: 'ev:', pad: 12 }, [{ type: 'resolve', fingerprint: 'x', at: '2026-01-01T00:00:00Z' }]);
          }
          yield x;
        }
      })();
    await expect(importLedger(target, intruding, { batch: 2 })).rejects.toThrow(/another process is writing to it/);
    expect(intruded).toBe(true);
    await assertEmpty(target);
  });
});

describe('an import that never finished (kill -9, power cut)', () => {
  it('marks the store while it writes, clears the mark once verified, and every open refuses a store still marked', async () => {
    const { store: src, ledger } = await sourceLedger();
    const lines = await exportLines(src);
    await ledger.close();

    // A store whose import is interrupted between two batches: the mark is there with part of the events.
    const target = createStore('memory://', '/tmp');
    let writes = 0;
    const crashing: KeyValueStore = Object.assign(Object.create(target) as KeyValueStore, {
      appendLog: async (...args: Parameters<NonNullable<KeyValueStore['appendLog']>>) => {
        if (++writes > 1) throw new Error('killed');
        return target.appendLog!(...args);
      },
    });
    // The process "dies": no rollback (stillOwner false stands for a process that is gone).
    await expect(importLedger(crashing, source(lines), { batch: 20, now: NOW, stillOwner: () => false })).rejects.toThrow(/killed/);
    expect(await target.get(IMPORT_MARKER_KEY)).toMatchObject({ events: lines.length - 2 });
    expect(await target.get(HEAD_KEY)).toBeGreaterThan(0);

    const unfinished = /began at .* and never finished.*Empty the store .*reprise ledger import/;
    await expect(Ledger.open(target, { migrate: true })).rejects.toThrow(unfinished);
    await expect(Ledger.open(target)).rejects.toThrow(unfinished);
    await expect(
      (async () => {
        for await (const _ of exportLedger(target, { source: 'memory://', now: NOW })) break;
      })(),
    ).rejects.toThrow(unfinished);
    await expect(importLedger(target, source(lines), { now: NOW })).rejects.toThrow(unfinished);

    // A finished import leaves no mark, and the store opens.
    const fresh = createStore('memory://', '/tmp');
    await importLedger(fresh, source(lines), { now: NOW });
    expect(await fresh.get(IMPORT_MARKER_KEY)).toBeUndefined();
    await expect(Ledger.open(fresh, { migrate: true })).resolves.toBeDefined();
  });
});
