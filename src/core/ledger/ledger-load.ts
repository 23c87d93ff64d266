/**
 * Opening a stored ledger: the store's schema (refused when newer, migrated by the writer) and
 * the read model (the latest snapshot, then the log after it).
 */
import { createHash } from 'node:crypto';
import type { Fence, KeyValueStore } from '../../ports/store.js';
import type { Logger } from '../../ports/logger.js';
import { eventKey, readHead, replayInto, SNAPSHOT_KEY, type CorruptRecord } from './ledger-records.js';
import { createLedgerState, restoreLedgerState } from './ledger-state.js';
import type { LedgerLimits, LedgerState } from './ledger-types.js';
import { migrateStoreSchema } from './store-schema.js';

/**
 * The stored snapshot. The state travels as one JSON string: native JSON.stringify is many
 * times faster than a store's own structured serializer on a state of 50,000 fingerprints, and
 * the event loop pays for it in one piece. (`state`: the object form older builds wrote.)
 */
export interface Snapshot {
  seq: number;
  json?: string;
  state?: unknown;
  /**
   * Digest of the event stored at `seq` when the snapshot was taken ({@link tipOf}): a log that
   * holds another event there (a store restored or replaced under the snapshot) is not the
   * history the snapshot folded, and the snapshot is discarded. Absent in older snapshots.
   */
  tip?: string;
}

/** A short digest of the record stored at `seq` ('' for seq 0 or a record that cannot be read). */
export async function tipOf(store: KeyValueStore, seq: number): Promise<string> {
  if (seq <= 0) return '';
  let v: unknown;
  try {
    v = await store.get<unknown>(eventKey(seq));
  } catch {
    return '';
  }
  return v === undefined ? '' : createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 32);
}

/** The state inside a stored snapshot, whichever form it was written in. */
export function snapshotState(snap: Snapshot | undefined): unknown {
  if (!snap) return undefined;
  if (typeof snap.json === 'string') {
    try {
      return JSON.parse(snap.json) as unknown;
    } catch {
      return undefined;
    }
  }
  return snap.state;
}

export interface Loaded {
  state: LedgerState;
  seq: number;
  snapshotSeq: number;
  /** Characters of the snapshot the state was restored from (0: replayed from the first event). */
  snapshotChars: number;
  corrupt: CorruptRecord[];
}

/**
 * Load the latest snapshot and replay only the events after its seq. A snapshot of another
 * state version, with other limits, ahead of the head, or taken over another event at its seq
 * than the log holds now is discarded (full replay instead, said in the log).
 */
export async function load(store: KeyValueStore, limits: Partial<LedgerLimits> | undefined, log: Logger): Promise<Loaded> {
  const head = await readHead(store);
  const fresh = createLedgerState(limits);
  let snap: Snapshot | undefined;
  try {
    snap = await store.get<Snapshot>(SNAPSHOT_KEY);
  } catch (err) {
    log.warn({ err }, 'ledger snapshot unreadable; replaying the whole log');
  }
  let state = fresh;
  let from = 0;
  let chars = 0;
  const restored = snap && typeof snap.seq === 'number' ? restoreLedgerState(snapshotState(snap)) : undefined;
  if (restored && snap && snap.seq <= head && JSON.stringify(restored.limits) === JSON.stringify(fresh.limits)) {
    if (typeof snap.tip === 'string' && snap.tip !== (await tipOf(store, snap.seq))) {
      log.warn({ seq: snap.seq, head }, `the ledger snapshot at #${snap.seq} does not match the event stored there; replaying the whole log`);
    } else {
      state = restored;
      from = snap.seq;
      chars = snap.json?.length ?? 0;
    }
  } else if (snap) {
    log.info({ seq: snap.seq, head }, 'the ledger snapshot is of another version, other limits or ahead of the log; replaying the whole log');
  }
  const corrupt: CorruptRecord[] = [];
  await replayInto(store, state, from, head, corrupt);
  for (const c of corrupt) log.error({ seq: c.seq, reason: c.reason }, `ledger record #${c.seq} skipped: ${c.reason}`);
  return { state, seq: head, snapshotSeq: from, snapshotChars: chars, corrupt };
}

/**
 * Brings the store's schema up to this build's, as its writer (fenced on a shared store).
 * @throws when the store is newer than this build, or a step fails.
 */
export async function migrateAsWriter(store: KeyValueStore, fence: Fence | undefined, log: Logger): Promise<void> {
  const write = (key: string, value: unknown): Promise<void> => (fence && store.setFenced ? store.setFenced(key, value, fence) : store.set(key, value));
  const steps = await migrateStoreSchema({ store, write });
  for (const s of steps) log.info({ from: s.from, to: s.to }, `store schema migrated from version ${s.from} to ${s.to}: ${s.description}`);
}
