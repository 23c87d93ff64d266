/**
 * The ledger's log as stored (SPEC §8): where each event lives, and reading records back in
 * order — in batches, degrading around an undecodable record instead of stopping the read.
 */
import { applyEvent } from './ledger-state.js';
import type { LedgerState } from './ledger-state.js';
import type { LedgerEvent } from '../ledger-events.js';
import { CorruptRecordError, logKey, type KeyValueStore, type LogKeys } from '../../ports/store.js';
import { RepriseError } from '../errors.js';
import { ledgerEventProblem } from './ledger-event-problem.js';

export const HEAD_KEY = 'seq';
/** The latest snapshot of the read model: `{seq, json}`. */
export const SNAPSHOT_KEY = 'snap';
/** The event log's keys in the store. */
export const LEDGER_LOG: LogKeys = { headKey: HEAD_KEY, prefix: 'ev:', pad: 12 };
/** Events fetched per store round-trip while replaying. */
const REPLAY_BATCH = 500;
/** Corrupt records remembered for `/readyz` detail (all of them are counted). */
const CORRUPT_KEPT = 20;

/** Store key of event number `seq`: zero-padded so keys sort in log order. */
export function eventKey(seq: number): string {
  return logKey(LEDGER_LOG, seq);
}

/** A record replay could not use: missing, undecodable or not a valid event. */
export interface CorruptRecord {
  seq: number;
  reason: string;
}

export async function readHead(store: KeyValueStore): Promise<number> {
  const head = await store.get<unknown>(HEAD_KEY);
  if (head === undefined) return 0;
  if (typeof head !== 'number' || !Number.isSafeInteger(head) || head < 0) {
    throw new RepriseError('internal', `ledger head "${HEAD_KEY}" is corrupt: ${JSON.stringify(head)}`);
  }
  return head;
}

/** One stored record as read back: the event, or why it could not be used. */
export type LedgerRecord = { seq: number; event: LedgerEvent } | { seq: number; corrupt: string };

/**
 * Reads records `from+1 … to` in order, in batches; a record that is missing, cannot be
 * decoded or is not a valid event comes back as `{seq, corrupt}` instead of stopping the read.
 */
export async function* readLedgerRecords(store: KeyValueStore, from = 0, to?: number): AsyncGenerator<LedgerRecord> {
  const last = to ?? (await readHead(store));
  for (let start = from + 1; start <= last; start += REPLAY_BATCH) {
    const seqs: number[] = [];
    for (let s = start; s <= Math.min(last, start + REPLAY_BATCH - 1); s++) seqs.push(s);
    const values = await readBatch(store, seqs);
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i]!;
      const v = values[i];
      if (v instanceof CorruptRecordError) yield { seq, corrupt: v.message };
      else if (v === undefined) yield { seq, corrupt: 'record is missing' };
      else {
        const problem = ledgerEventProblem(v);
        yield problem === undefined ? { seq, event: v as LedgerEvent } : { seq, corrupt: problem };
      }
    }
  }
}

/** A batch read that degrades to one key at a time around an undecodable record. */
async function readBatch(store: KeyValueStore, seqs: readonly number[]): Promise<unknown[]> {
  try {
    return await store.getMany<unknown>(seqs.map(eventKey));
  } catch (err) {
    if (!(err instanceof CorruptRecordError)) throw err;
    const out: unknown[] = [];
    for (const s of seqs) {
      try {
        out.push(await store.get<unknown>(eventKey(s)));
      } catch (e) {
        if (!(e instanceof CorruptRecordError)) throw e;
        out.push(e);
      }
    }
    return out;
  }
}

/** Fold events `from+1 … to` into `state`; a missing or malformed record is counted as skipped. */
export async function replayInto(store: KeyValueStore, state: LedgerState, from: number, to: number, corrupt: CorruptRecord[]): Promise<void> {
  for await (const r of readLedgerRecords(store, from, to)) {
    if ('event' in r) applyEvent(state, r.event, r.seq);
    else {
      state.skipped += 1;
      if (corrupt.length < CORRUPT_KEPT) corrupt.push({ seq: r.seq, reason: r.corrupt });
    }
  }
}
