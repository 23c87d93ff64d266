/**
 * Checking a stored ledger against itself (`reprise ledger verify`, and after an import): a
 * replay of the whole log compared with the stored snapshot the bot loads at start.
 */
import type { KeyValueStore } from '../../ports/store.js';
import { snapshotState, type Snapshot } from './ledger-load.js';
import { readLedgerRecords, SNAPSHOT_KEY } from './ledger-records.js';
import { applyEvent, createLedgerState, restoreLedgerState } from './ledger-state.js';
import type { LedgerState } from './ledger-types.js';

export interface LedgerVerification {
  /** Last seq replayed (the head when the replay started). */
  total: number;
  /** `#seq: reason` of each record that could not be read. */
  corrupt: string[];
  /**
   * `none`: no snapshot yet; `old_format`: one of another state version (ignored at load);
   * `past_end`: it claims a seq beyond the log; `match` / `mismatch` with the replay.
   */
  snapshot: 'none' | 'old_format' | 'past_end' | 'match' | 'mismatch';
  snapshotSeq?: number;
  /** Where the stored aggregates and the replay first differ. */
  mismatch?: string;
  /** The replay of the whole log (with the snapshot's limits when it has any). */
  replay: LedgerState;
}

/** Replays the whole log and compares the stored snapshot with the replay at the snapshot's seq. */
export async function verifyLedger(store: KeyValueStore): Promise<LedgerVerification> {
  const snap = await store.get<Snapshot>(SNAPSHOT_KEY).catch(() => undefined);
  const stored = snap ? restoreLedgerState(await snapshotState(store, snap)) : undefined;
  const replay = createLedgerState(stored?.limits);
  let total = 0;
  let checked = false;
  let mismatch: string | undefined;
  const corrupt: string[] = [];
  for await (const r of readLedgerRecords(store)) {
    total = r.seq;
    if ('event' in r) applyEvent(replay, r.event, r.seq);
    else {
      replay.skipped += 1;
      corrupt.push(`#${r.seq}: ${r.corrupt}`);
    }
    if (stored && snap && r.seq === snap.seq) {
      mismatch = firstDifference(JSON.parse(JSON.stringify(stored)), JSON.parse(JSON.stringify(replay)));
      checked = true;
    }
  }
  const out: LedgerVerification = { total, corrupt, snapshot: 'none', replay };
  if (snap) out.snapshotSeq = snap.seq;
  if (!snap) out.snapshot = 'none';
  else if (!stored) out.snapshot = 'old_format';
  else if (!checked) out.snapshot = 'past_end';
  else if (mismatch !== undefined) {
    out.snapshot = 'mismatch';
    out.mismatch = mismatch;
  } else out.snapshot = 'match';
  return out;
}

/** First path where two JSON values differ, for a mismatch message (`left` / `right` name the sides). */
export function firstDifference(a: unknown, b: unknown, path = '$', left = 'stored', right = 'replay'): string | undefined {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return JSON.stringify(a) === JSON.stringify(b)
      ? undefined
      : `${path}: ${left} ${JSON.stringify(a)?.slice(0, 120)}, ${right} ${JSON.stringify(b)?.slice(0, 120)}`;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`, left, right);
    if (d) return d;
  }
  return undefined;
}
