/**
 * The ledger service (SPEC §8): an append-only event log over the `KeyValueStore` port, with
 * the read model kept in memory and snapshotted now and then.
 *
 * Keys: `ev:<seq, 12 digits>` per event (seq starts at 1), `seq` the head (last durable
 * event), `snap` the latest snapshot `{seq, state}`. An event counts once the head says so: a
 * crash after the event write but before the head write leaves an unacknowledged record that
 * the next append overwrites.
 */
import type { AnswerKind } from '../types.js';
import type { LedgerEvent } from '../ledger-events.js';
import type { KeyValueStore } from '../../ports/store.js';
import type { Logger } from '../../ports/logger.js';
import { silentLogger } from '../../ports/logger.js';
import { RepriseError } from '../errors.js';
import { ledgerEventProblem } from './ledger-event-problem.js';
import {
  applyEvent,
  createLedgerState,
  dupStats,
  entryStats,
  occurrences,
  openEpisodes,
  recentEpisodes,
  resolveChannelLive,
  restoreLedgerState,
  silenceState,
  trackRecord,
} from './ledger-state.js';
import type {
  DupStats,
  EntryStats,
  EntryTrackRecord,
  Episode,
  LedgerLimits,
  LedgerState,
  Occurrences,
  SilenceState,
} from './ledger-state.js';

export const HEAD_KEY = 'seq';
export const SNAPSHOT_KEY = 'snap';
/** Events fetched per store round-trip while replaying. */
const REPLAY_BATCH = 500;

/** Store key of event number `seq`: zero-padded so keys sort in log order. */
export function eventKey(seq: number): string {
  return `ev:${String(seq).padStart(12, '0')}`;
}

export interface LedgerOptions {
  /** Write a snapshot every this many events (default 1000); 0 disables periodic snapshots. */
  snapshotEvery?: number;
  /** Bounds of the read model (part of the state; changing them invalidates older snapshots). */
  limits?: Partial<LedgerLimits>;
  logger?: Logger;
}

interface Snapshot {
  seq: number;
  state: unknown;
}

/** What one append produced: its sequence number and the episode it closed, if any. */
export interface AppendResult {
  seq: number;
  closed?: Episode;
}

export class Ledger {
  #store: KeyValueStore;
  #state: LedgerState;
  #seq: number;
  #snapshotSeq: number;
  #snapshotEvery: number;
  #log: Logger;
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(store: KeyValueStore, state: LedgerState, seq: number, snapshotSeq: number, opts: LedgerOptions) {
    this.#store = store;
    this.#state = state;
    this.#seq = seq;
    this.#snapshotSeq = snapshotSeq;
    this.#snapshotEvery = opts.snapshotEvery ?? 1000;
    this.#log = opts.logger ?? silentLogger;
  }

  /**
   * Load the latest snapshot and replay the events after it. A snapshot of another state
   * version, with other limits, or ahead of the head is ignored (full replay instead).
   */
  static async open(store: KeyValueStore, opts: LedgerOptions = {}): Promise<Ledger> {
    const head = await readHead(store);
    const fresh = createLedgerState(opts.limits);
    const snap = await store.get<Snapshot>(SNAPSHOT_KEY);
    let state = fresh;
    let from = 0;
    const restored = snap && typeof snap.seq === 'number' ? restoreLedgerState(snap.state) : undefined;
    if (restored && snap && snap.seq <= head && JSON.stringify(restored.limits) === JSON.stringify(fresh.limits)) {
      state = restored;
      from = snap.seq;
    }
    await replayInto(store, state, from, head);
    return new Ledger(store, state, head, from, opts);
  }

  /** Rebuild the state from the first event, ignoring snapshots (verification, migrations). */
  static async replayAll(store: KeyValueStore, limits?: Partial<LedgerLimits>): Promise<LedgerState> {
    const state = createLedgerState(limits);
    await replayInto(store, state, 0, await readHead(store));
    return state;
  }

  /** Sequence number of the last durable event (0 when empty). */
  get seq(): number {
    return this.#seq;
  }

  /** The live read model. Treat as read-only. */
  get state(): LedgerState {
    return this.#state;
  }

  /** Append an event durably, then fold it in. Resolves with its sequence number. */
  async append(event: LedgerEvent): Promise<number> {
    return (await this.record(event)).seq;
  }

  /**
   * Like {@link append}, also returning the episode the event closed (a resolve, or an open
   * meeting a buffered resolve) so the caller can reply into its thread. Appends are
   * serialised: sequence numbers are never reused, whatever the concurrency.
   */
  record(event: LedgerEvent): Promise<AppendResult> {
    const problem = ledgerEventProblem(event);
    if (problem !== undefined) {
      return Promise.reject(new RepriseError('invalid_payload', `ledger event rejected: ${problem}`));
    }
    if (this.#closed) return Promise.reject(new RepriseError('unavailable', 'ledger is closed'));
    const run = this.#chain.then(() => this.#write(event));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #write(event: LedgerEvent): Promise<AppendResult> {
    const seq = this.#seq + 1;
    await this.#store.set(eventKey(seq), event);
    await this.#store.set(HEAD_KEY, seq);
    this.#seq = seq;
    const closed = applyEvent(this.#state, event);
    if (this.#snapshotEvery > 0 && seq - this.#snapshotSeq >= this.#snapshotEvery) await this.#snapshot();
    return closed ? { seq, closed } : { seq };
  }

  /** A failed snapshot loses nothing (the events are durable); it is retried at the next chance. */
  async #snapshot(): Promise<void> {
    if (this.#seq === this.#snapshotSeq) return;
    const seq = this.#seq;
    try {
      await this.#store.set(SNAPSHOT_KEY, { seq, state: this.#state } satisfies Snapshot);
      this.#snapshotSeq = seq;
    } catch (err) {
      this.#log.warn({ err, seq }, 'ledger snapshot failed; the tail will be replayed on restart');
    }
  }

  /**
   * Wait for pending appends and write a final snapshot. Further appends are refused. The
   * store belongs to whoever created it and is not closed here.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#chain;
    await this.#snapshot();
  }

  entryStats(entry: string): EntryStats {
    return entryStats(this.#state, entry);
  }
  trackRecord(entry: string, answerKind: AnswerKind): EntryTrackRecord {
    return trackRecord(this.#state, entry, answerKind);
  }
  occurrences(triggerKey: string): Occurrences {
    return occurrences(this.#state, triggerKey);
  }
  resolveChannelLive(): boolean {
    return resolveChannelLive(this.#state);
  }
  /** Time of the newest resolve, if any. */
  lastResolveAt(): string | undefined {
    return this.#state.lastResolveAt;
  }
  silenceState(triggerKey: string, now: Date): SilenceState {
    return silenceState(this.#state, triggerKey, now);
  }
  openEpisodes(fingerprint: string): Episode[] {
    return openEpisodes(this.#state, fingerprint);
  }
  recentEpisodes(triggerKey?: string): Episode[] {
    return recentEpisodes(this.#state, triggerKey);
  }
  dupStats(dupFingerprint: string): DupStats {
    return dupStats(this.#state, dupFingerprint);
  }
}

async function readHead(store: KeyValueStore): Promise<number> {
  const head = await store.get<unknown>(HEAD_KEY);
  if (head === undefined) return 0;
  if (typeof head !== 'number' || !Number.isSafeInteger(head) || head < 0) {
    throw new RepriseError('internal', `ledger head "${HEAD_KEY}" is corrupt: ${JSON.stringify(head)}`);
  }
  return head;
}

/** Fold events `from+1 … to` into `state`; a missing or malformed record is counted as skipped. */
async function replayInto(store: KeyValueStore, state: LedgerState, from: number, to: number): Promise<void> {
  for (let start = from + 1; start <= to; start += REPLAY_BATCH) {
    const keys: string[] = [];
    for (let s = start; s <= Math.min(to, start + REPLAY_BATCH - 1); s++) keys.push(eventKey(s));
    for (const event of await store.getMany<unknown>(keys)) applyEvent(state, event);
  }
}
