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
 * The stored snapshot. The state travels as JSON text: native JSON.stringify is many times
 * faster than a store's own structured serializer on a state of 50,000 fingerprints, and the
 * event loop pays for it in one piece. The text is stored in parts of at most
 * {@link SNAPSHOT_PART_CHARS} characters under keys of its own seq ({@link snapshotPartKey}),
 * and this record — written last — says how many: a crash half-way leaves the previous snapshot
 * whole, two writers of a shared store never write the same part with different text, and no
 * store write (nor the store's own encoding of it) is a copy of the whole model, 60 MB after a
 * 10,000-thread storm. (`json`: the text in this record itself, as older builds wrote; `state`:
 * the object form before that.)
 */
export interface Snapshot {
  seq: number;
  /** Parts of the text, under `snapshotPartKey(seq, i)`. */
  parts?: number;
  /** Characters of the whole text (a part lost or cut short is noticed). */
  chars?: number;
  json?: string;
  state?: unknown;
  /**
   * Digest of the event stored at `seq` when the snapshot was taken ({@link tipOf}): a log that
   * holds another event there (a store restored or replaced under the snapshot) is not the
   * history the snapshot folded, and the snapshot is discarded. Absent in older snapshots.
   */
  tip?: string;
}

/** Characters of snapshot text per stored part. */
export const SNAPSHOT_PART_CHARS = 1 << 22;

/** Store key of part `i` of the text of the snapshot at `seq`. */
export function snapshotPartKey(seq: number, i: number): string {
  return `snap:${seq}:${i}`;
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

/**
 * The text of a stored snapshot, whichever form it was written in: undefined when it has none
 * (the object form) or a part is missing or of another length (then it is not used).
 */
export async function snapshotText(store: KeyValueStore, snap: Snapshot): Promise<string | undefined> {
  if (typeof snap.json === 'string') return snap.json;
  if (typeof snap.parts !== 'number' || !Number.isSafeInteger(snap.parts) || snap.parts < 0) return undefined;
  const parts = await store.getMany<unknown>(Array.from({ length: snap.parts }, (_, i) => snapshotPartKey(snap.seq, i)));
  if (!parts.every((p): p is string => typeof p === 'string')) return undefined;
  const text = parts.join('');
  return text.length === snap.chars ? text : undefined;
}

/** The state inside a stored snapshot, whichever form it was written in (undefined: unreadable). */
export async function snapshotState(store: KeyValueStore, snap: Snapshot | undefined): Promise<unknown> {
  if (!snap) return undefined;
  if (snap.json === undefined && snap.parts === undefined) return snap.state;
  try {
    const text = await snapshotText(store, snap);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

/**
 * Writes `json` as the snapshot at `seq`: its parts, then the record naming them, then drops the
 * parts of `previous` (the record it replaces). A failure before the record leaves `previous`
 * the snapshot, whole, and removes the parts it wrote; a crash there leaves them (one set, never
 * read: the record names another seq).
 */
export async function writeSnapshot(
  store: KeyValueStore,
  previous: Snapshot | undefined,
  next: { seq: number; json: string; tip: string },
  partChars = SNAPSHOT_PART_CHARS,
): Promise<Snapshot> {
  const parts = Math.ceil(next.json.length / partChars);
  const record: Snapshot = { seq: next.seq, parts, chars: next.json.length, tip: next.tip };
  try {
    for (let i = 0; i < parts; i++) await store.set(snapshotPartKey(next.seq, i), next.json.slice(i * partChars, (i + 1) * partChars));
    await store.set(SNAPSHOT_KEY, record);
  } catch (err) {
    // A full disk must not keep a 60 MB orphan per attempt: what was written of it goes (unless it is the one in use).
    if (previous?.seq !== next.seq) await deleteParts(store, record).catch(() => undefined);
    throw err;
  }
  if (previous && previous.seq !== next.seq) await deleteParts(store, previous).catch(() => undefined);
  return record;
}

async function deleteParts(store: KeyValueStore, snap: Snapshot): Promise<void> {
  for (let i = 0; i < (snap.parts ?? 0); i++) await store.delete(snapshotPartKey(snap.seq, i));
}

/** Deletes the stored snapshot and its parts. */
export async function deleteSnapshot(store: KeyValueStore): Promise<void> {
  const snap = await store.get<Snapshot>(SNAPSHOT_KEY).catch(() => undefined);
  await store.delete(SNAPSHOT_KEY);
  if (snap) await deleteParts(store, snap);
}

export interface Loaded {
  state: LedgerState;
  seq: number;
  snapshotSeq: number;
  /** Characters of the snapshot the state was restored from (0: replayed from the first event). */
  snapshotChars: number;
  /** The stored snapshot record (the next snapshot drops its parts once it is written). */
  snapshot: Snapshot | undefined;
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
  const raw = snap && typeof snap.seq === 'number' ? await snapshotState(store, snap) : undefined;
  const restored = raw === undefined ? undefined : restoreLedgerState(raw);
  if (snap && raw === undefined && snap.parts !== undefined) {
    log.warn({ seq: snap.seq, parts: snap.parts }, `the ledger snapshot at #${snap.seq} has a part missing or cut short; replaying the whole log`);
  } else if (restored && snap && snap.seq <= head && JSON.stringify(restored.limits) === JSON.stringify(fresh.limits)) {
    if (typeof snap.tip === 'string' && snap.tip !== (await tipOf(store, snap.seq))) {
      log.warn({ seq: snap.seq, head }, `the ledger snapshot at #${snap.seq} does not match the event stored there; replaying the whole log`);
    } else {
      state = restored;
      from = snap.seq;
      chars = snap.chars ?? snap.json?.length ?? 0;
    }
  } else if (snap) {
    log.info({ seq: snap.seq, head }, 'the ledger snapshot is of another version, other limits or ahead of the log; replaying the whole log');
  }
  const corrupt: CorruptRecord[] = [];
  await replayInto(store, state, from, head, corrupt);
  for (const c of corrupt) log.error({ seq: c.seq, reason: c.reason }, `ledger record #${c.seq} skipped: ${c.reason}`);
  return { state, seq: head, snapshotSeq: from, snapshotChars: chars, snapshot: snap, corrupt };
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
