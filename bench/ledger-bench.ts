import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore, KeyvStore } from '../src/adapters/keyv/keyv-store.js';
import type { LedgerEvent } from '../src/core/ledger-events.js';
import { eventKey, HEAD_KEY, Ledger } from '../src/core/ledger/ledger.js';
import { entryStats, replayEvents } from '../src/core/ledger/ledger-state.js';
import { naiveEntryStats } from './naive-entry-stats.js';
import { DEFAULT_EVENT_SHAPE, generateEvents, ledgerEntryId } from './synthetic-events.js';
import { collectGarbage } from './timing.js';

export interface LedgerResult {
  events: number;
  entries: number;
  /** `replayEvents` over the in-memory log. */
  replayMs: number;
  /** CPU time of the same replay (user + system): steadier than wall time on a shared machine. */
  replayCpuMs: number;
  replayEventsPerSec: number;
  /** All entries' reads from the replayed state. */
  readsMs: number;
  /** Naive rescans: measured on `naiveSampled` entries, scaled to all entries. */
  naiveSampled: number;
  naiveMsPerEntry: number;
  naiveTotalMs: number;
  /** Sampled entries whose naive aggregate equals `entryStats` (should be all). */
  naiveAgrees: number;
  store: { events: number; writeMs: number; replayMs: number; replayCpuMs: number; eventsPerSec: number; applied: number };
}

const ms = (from: bigint): number => Number(process.hrtime.bigint() - from) / 1e6;
const cpuMs = (from: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

/** Replay through the real sqlite store: events written in batches (setup), then `Ledger.replayAll` timed. */
async function storeReplay(events: readonly LedgerEvent[]): Promise<LedgerResult['store']> {
  const dir = mkdtempSync(join(tmpdir(), 'reprise-bench-'));
  const store = createStore(`sqlite://${join(dir, 'ledger.sqlite')}`, dir);
  try {
    const t0 = process.hrtime.bigint();
    // Setup only: one transaction per 1000 events instead of an fsync per event.
    for (let i = 0; i < events.length; i += 1000) {
      const batch = events.slice(i, i + 1000).map((value, j) => ({ key: eventKey(i + j + 1), value }));
      if (store instanceof KeyvStore) await store.keyv.setMany(batch);
      else for (const { key, value } of batch) await store.set(key, value);
    }
    await store.set(HEAD_KEY, events.length);
    const writeMs = ms(t0);
    const t1 = process.hrtime.bigint();
    const c1 = process.cpuUsage();
    const state = await Ledger.replayAll(store);
    const replayCpuMs = cpuMs(c1);
    const replayMs = ms(t1);
    return { events: events.length, writeMs, replayMs, replayCpuMs, eventsPerSec: events.length / (replayMs / 1000), applied: state.applied };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ledger replay of `events` generated events against the naive per-read rescan, plus the store path. */
export async function runLedgerBench(opts: { events: number; storeEvents: number; naiveSample: number; log: (line: string) => void }): Promise<LedgerResult> {
  const shape = { ...DEFAULT_EVENT_SHAPE, events: opts.events };
  const events = generateEvents(shape);
  opts.log(`  ledger: generated ${events.length} events`);
  // One untimed pass on a slice warms the reducer up.
  replayEvents(events.slice(0, 50_000));
  collectGarbage();
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const state = replayEvents(events);
  const replayCpuMs = cpuMs(c0);
  const replayMs = ms(t0);
  const t1 = process.hrtime.bigint();
  let sum = 0;
  for (let k = 0; k < shape.entries; k++) sum += entryStats(state, ledgerEntryId(k)).recalls;
  const readsMs = ms(t1);
  opts.log(`  ledger: replay ${replayMs.toFixed(0)} ms (${sum} recalls counted)`);

  const step = Math.max(1, Math.floor(shape.entries / opts.naiveSample));
  const sample = Array.from({ length: Math.min(opts.naiveSample, shape.entries) }, (_, i) => ledgerEntryId(i * step));
  let agrees = 0;
  const t2 = process.hrtime.bigint();
  const naive = sample.map((id) => naiveEntryStats(events, id));
  const naiveMs = ms(t2);
  sample.forEach((id, i) => {
    const a = entryStats(state, id);
    const b = naive[i];
    if (b && a.recalls === b.recalls && a.resolved === b.resolved && a.up === b.up && a.down === b.down && a.confirmations === b.confirmations) agrees++;
  });
  const naiveMsPerEntry = naiveMs / sample.length;
  opts.log(`  ledger: naive rescan ${naiveMsPerEntry.toFixed(0)} ms per entry (${agrees}/${sample.length} agree)`);

  const store = await storeReplay(events.slice(0, opts.storeEvents));
  opts.log(`  ledger: sqlite replayAll of ${store.events} events in ${store.replayMs.toFixed(0)} ms`);
  return {
    events: events.length,
    entries: shape.entries,
    replayMs,
    replayCpuMs,
    replayEventsPerSec: events.length / (replayMs / 1000),
    readsMs,
    naiveSampled: sample.length,
    naiveMsPerEntry,
    naiveTotalMs: naiveMsPerEntry * shape.entries,
    naiveAgrees: agrees,
    store,
  };
}

/** The ledger rows alone (`REPRISE_BENCH_ONLY=ledger`). */
export function renderLedgerBench(l: LedgerResult): string {
  const perSec = (n: number): string => `${Math.round(n).toLocaleString('en-US')} ev/s`;
  return [
    `ledger replayEvents (in memory): ${l.events.toLocaleString('en-US')} events in ${l.replayMs.toFixed(0)} ms, ${l.replayCpuMs.toFixed(0)} ms CPU (${perSec(l.replayEventsPerSec)}); ${l.entries} entry reads in ${l.readsMs.toFixed(1)} ms`,
    `ledger Ledger.replayAll (sqlite): ${l.store.events.toLocaleString('en-US')} events in ${l.store.replayMs.toFixed(0)} ms, ${l.store.replayCpuMs.toFixed(0)} ms CPU (${perSec(l.store.eventsPerSec)}); ${l.store.applied} applied`,
  ].join('\n');
}
