/**
 * The ledger service (SPEC §8): an append-only event log over the `KeyValueStore` port, with
 * the read model kept in memory and snapshotted now and then.
 *
 * Keys: `ev:<seq, 12 digits>` per event (seq starts at 1), `seq` the head (last durable
 * event), `snap` the latest snapshot (its text in parts, `snap:<seq>:<i>`). Numbers are allocated by the store itself
 * (`appendLog`, one transaction per batch), never from a process's memory: two writers can
 * never be handed the same seq, and a failed write leaves nothing behind.
 */
import type { LedgerEvent } from '../ledger-events.js';
import { StaleFenceError, type Fence, type KeyValueStore } from '../../ports/store.js';
import type { Logger } from '../../ports/logger.js';
import { silentLogger } from '../../ports/logger.js';
import { RepriseError } from '../errors.js';
import { ledgerEventProblem } from './ledger-event-problem.js';
import { eventKey, LEDGER_LOG, readHead, readLedgerRecords, replayInto, type CorruptRecord } from './ledger-records.js';
import { LedgerReader } from './ledger-reader.js';
import { load, migrateAsWriter, tipOf, writeSnapshot, type Loaded, type Snapshot } from './ledger-load.js';
import { assertNoUnfinishedImport, checkStoreSchemaForReading, readStoreSchema } from './store-schema.js';

export { eventKey, HEAD_KEY, LEDGER_LOG, readLedgerRecords, SNAPSHOT_KEY, type CorruptRecord, type LedgerRecord } from './ledger-records.js';
export { snapshotState } from './ledger-load.js';
import { DEFAULT_RESOLVE_WINDOW_MS, type AppendResult, type LedgerOptions, type LedgerTx, type TransactionOptions } from './ledger-options.js';
import { applyEvent, assignOutboxSeqs, createLedgerState } from './ledger-state.js';
import type { Episode, LedgerLimits, LedgerState } from './ledger-state.js';

export { DEFAULT_RESOLVE_WINDOW_MS, type AppendResult, type LedgerOptions, type LedgerTx, type TransactionOptions } from './ledger-options.js';

export class Ledger {
  #store: KeyValueStore;
  #state: LedgerState;
  #seq: number;
  #snapshotSeq: number;
  #opts: LedgerOptions;
  #snapshotEvery: number;
  /** Characters of the last snapshot written or loaded: a large read model is snapshotted less often ({@link snapshotDue}). */
  #snapshotChars: number;
  /** The stored snapshot record (its parts are dropped once the next one is written). */
  #stored: Snapshot | undefined;
  #log: Logger;
  /** Transactions and reloads waiting their turn; consecutive transactions commit together. */
  #queue: Job[] = [];
  #pumping: Promise<void> | undefined;
  #closed = false;
  #corrupt: CorruptRecord[];
  #lastWriteError: { at: string; message: string } | undefined;
  /** The store's schema still needs this writer to record or migrate it. */
  #schemaPending: boolean;
  /** The one way to read the ledger (the read model stays private). */
  readonly read: LedgerReader;

  private constructor(store: KeyValueStore, loaded: Loaded, opts: LedgerOptions, schemaPending: boolean) {
    this.#store = store;
    this.#state = loaded.state;
    this.#seq = loaded.seq;
    this.#snapshotSeq = loaded.snapshotSeq;
    this.#snapshotChars = loaded.snapshotChars;
    this.#stored = loaded.snapshot;
    this.#corrupt = loaded.corrupt;
    this.#opts = opts;
    this.#snapshotEvery = opts.snapshotEvery ?? 1000;
    this.#log = opts.logger ?? silentLogger;
    this.#schemaPending = schemaPending;
    this.read = new LedgerReader(() => this.#state, {
      resolveWindowMs: opts.resolveWindowMs ?? DEFAULT_RESOLVE_WINDOW_MS,
      records: (from, to) => readLedgerRecords(this.#store, from, to),
      seq: () => this.#seq,
    });
  }

  /**
   * Load the latest snapshot and replay the events after it. A snapshot of another state
   * version, with other limits, or ahead of the head is ignored (full replay instead). A record
   * that cannot be read is skipped, counted and named by its seq (see {@link corruptRecords}).
   * @throws RepriseError when the store's schema is newer than this build ("upgrade reprise").
   */
  static async open(store: KeyValueStore, opts: LedgerOptions = {}): Promise<Ledger> {
    const log = opts.logger ?? silentLogger;
    let pending = false;
    if (opts.importing) {
      await readStoreSchema(store); // a newer store is refused; the import's own marker is expected
    } else if (opts.migrate) {
      await assertNoUnfinishedImport(store);
      const schema = await readStoreSchema(store);
      pending = !schema.recorded || schema.pending.length > 0;
      const fence = opts.fence?.();
      if (pending && (!opts.fence || fence)) {
        await migrateAsWriter(store, fence, log);
        pending = false;
      }
    } else {
      await checkStoreSchemaForReading(store);
    }
    const loaded = await load(store, opts.limits, log);
    return new Ledger(store, loaded, opts, pending);
  }

  /** Rebuild the state from the first event, ignoring snapshots (verification, migrations). */
  static async replayAll(store: KeyValueStore, limits?: Partial<LedgerLimits>): Promise<LedgerState> {
    const state = createLedgerState(limits);
    await replayInto(store, state, 0, await readHead(store), []);
    return state;
  }

  /** Sequence number of the last durable event (0 when empty). */
  get seq(): number {
    return this.#seq;
  }

  /** Tells the append listener; its failure is logged, never the transaction's. */
  #tellAppended(events: readonly LedgerEvent[]): void {
    try {
      this.#opts.onAppend?.(events);
    } catch (err) {
      this.#log.warn({ err }, 'an append listener failed; the events are durable');
    }
  }

  /** One event of the log, by its seq (what an outbox item says, when it is sent). */
  async eventAt(seq: number): Promise<LedgerEvent | undefined> {
    const v = await this.#store.get<unknown>(eventKey(seq));
    return ledgerEventProblem(v) === undefined ? (v as LedgerEvent) : undefined;
  }

  /** Records skipped while loading (first few; `state.skipped` counts them all). */
  get corruptRecords(): readonly CorruptRecord[] {
    return this.#corrupt;
  }

  /** The last failed write, until a write succeeds again (readiness). */
  get lastWriteError(): { at: string; message: string } | undefined {
    return this.#lastWriteError;
  }

  /** A recall unresolved this long after its open counts as a failure. */
  get resolveWindowMs(): number {
    return this.#opts.resolveWindowMs ?? DEFAULT_RESOLVE_WINDOW_MS;
  }

  /** Append an event durably, then fold it in. Resolves with its sequence number. */
  async append(event: LedgerEvent): Promise<number> {
    return (await this.record(event)).seq;
  }

  /**
   * Like {@link append}, also returning the episode the event closed (a resolve, or an open
   * meeting a buffered resolve) so the caller can reply into its thread.
   */
  async record(event: LedgerEvent): Promise<AppendResult> {
    let closed: Episode | undefined;
    const { first } = await this.transaction(async (tx) => {
      closed = tx.record(event).closed;
    });
    return closed ? { seq: first, closed } : { seq: first };
  }

  /**
   * Runs `fn` with exclusive use of the ledger; every event it stages is applied to the read
   * model at once (so later decisions in `fn` see it) and written in **one** store transaction
   * when `fn` returns. If `fn` throws or the write fails, nothing is written and the read model
   * is reloaded from the store, so memory never holds what the disk does not.
   * Resolves with the first seq written and the number of events (0 when nothing was staged).
   */
  transaction<T>(fn: (tx: LedgerTx) => Promise<T>, opts: TransactionOptions = {}): Promise<{ result: T; first: number; count: number }> {
    if (this.#closed) return Promise.reject(new RepriseError('unavailable', 'ledger is closed'));
    return new Promise((resolve, reject) => {
      this.#enqueue({ kind: 'tx', fn: fn as (tx: LedgerTx) => Promise<unknown>, opts, resolve: resolve as TxJob['resolve'], reject });
    });
  }

  #enqueue(job: Job): void {
    this.#queue.push(job);
    if (!this.#pumping) this.#startPump();
  }

  #startPump(): void {
    this.#pumping = this.#pump().finally(() => {
      this.#pumping = undefined;
      // A job queued after the pump saw the queue empty, but before it ended.
      if (this.#queue.length > 0) this.#startPump();
    });
  }

  /**
   * Runs the queue in order. Consecutive transactions (up to {@link GROUP_MAX}) are decided one
   * after the other and written in **one** store transaction — one fsync for a burst of
   * webhooks instead of one each (group commit); each still resolves only once it is durable.
   */
  async #pump(): Promise<void> {
    while (this.#queue.length > 0) {
      // Let requests already received reach the queue first, so a burst commits together.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const head = this.#queue.shift()!;
      if (head.kind === 'op') {
        await head.run().then(head.resolve, head.reject);
        continue;
      }
      const group: TxJob[] = [head];
      // An idempotent transaction (its id names exactly its events) is written on its own.
      if (head.opts.id === undefined) {
        while (group.length < GROUP_MAX && this.#queue[0]?.kind === 'tx' && this.#queue[0].opts.id === undefined) group.push(this.#queue.shift() as TxJob);
      }
      await this.#transact(group);
    }
  }

  /**
   * Rebuild the read model from the store (snapshot, then the log after it), after pending
   * transactions: a replica taking the lead starts from what the store holds, not from memory.
   */
  reload(why = 'requested'): Promise<void> {
    return new Promise((resolve, reject) => this.#enqueue({ kind: 'op', run: () => this.#reload(why), resolve, reject }));
  }

  /**
   * Decides every transaction of `group` in order against the live read model, then writes all
   * their events in one append. A body that throws fails alone: what the ones before it staged
   * is written first, then the read model is reloaded (dropping what the failed one applied).
   * A failed write fails the whole group, with the read model reloaded from the store.
   */
  async #transact(group: readonly TxJob[]): Promise<void> {
    const staged: LedgerEvent[] = [];
    /** Each decided job with its result and its events' place in `staged`. */
    let decided: Array<{ job: TxJob; result: unknown; from: number; count: number }> = [];
    for (const job of group) {
      const from = staged.length;
      const state = this.#state;
      const tx: LedgerTx = {
        record: (given) => {
          const event = this.#opts.redact ? this.#opts.redact(given) : given;
          const problem = ledgerEventProblem(event);
          if (problem !== undefined) throw new RepriseError('invalid_payload', `ledger event rejected: ${problem}`);
          staged.push(event);
          const closed = applyEvent(state, event);
          return closed ? { closed } : {};
        },
        get size() {
          return staged.length - from;
        },
      };
      try {
        const result = await job.fn(tx);
        decided.push({ job, result, from, count: staged.length - from });
      } catch (err) {
        const failedStaged = staged.length > from;
        staged.length = from;
        // Write what the jobs before it decided, then drop what it applied by reloading.
        if (failedStaged) {
          if (staged.length > 0) await this.#write(staged.splice(0), decided.splice(0), group[0]!.opts);
          else decided = this.#settleEmpty(decided);
          await this.#reload('the transaction failed before writing');
        }
        job.reject(err);
      }
    }
    if (staged.length === 0) {
      this.#settleEmpty(decided);
      return;
    }
    await this.#write(staged, decided, group[0]!.opts);
  }

  /** Resolves jobs that staged nothing (nothing to write); returns an empty list. */
  #settleEmpty(decided: Array<{ job: TxJob; result: unknown; from: number; count: number }>): [] {
    for (const d of decided) d.job.resolve({ result: d.result, first: this.#seq + 1, count: 0 });
    return [];
  }

  /** One durable append of `staged` for the `decided` jobs; resolves or rejects each of them. */
  async #write(
    staged: LedgerEvent[],
    decided: ReadonlyArray<{ job: TxJob; result: unknown; from: number; count: number }>,
    opts: TransactionOptions,
  ): Promise<void> {
    let first: number;
    try {
      first = await this.#append(staged, opts);
    } catch (err) {
      for (const d of decided) d.job.reject(err);
      return;
    }
    for (const d of decided) d.job.resolve({ result: d.result, first: d.count === 0 ? this.#seq + 1 : first + d.from, count: d.count });
  }

  /** Appends `staged` (applied to the read model already) durably; resolves with the first seq. */
  async #append(staged: LedgerEvent[], opts: TransactionOptions): Promise<number> {
    let first: number;
    try {
      let fence: Fence | undefined;
      if (this.#opts.fence) {
        fence = this.#opts.fence();
        if (fence === undefined) throw new StaleFenceError(undefined);
      }
      if (this.#schemaPending) await this.#migrate(fence);
      first = await this.#store.appendLog(LEDGER_LOG, staged, { ...(opts.id !== undefined ? { id: opts.id } : {}), ...(fence ? { fence } : {}) });
    } catch (err) {
      this.#lastWriteError = { at: new Date().toISOString(), message: err instanceof Error ? err.message : String(err) };
      await this.#reload('a write failed');
      throw err;
    }
    this.#lastWriteError = undefined;
    const expected = this.#seq + 1;
    // An idempotent replay (an id already appended) wrote nothing: nothing to tell.
    if (!(first < expected && opts.id !== undefined)) this.#tellAppended(staged);
    this.#seq = first + staged.length - 1;
    if (first !== expected) {
      // Another writer appended in between (a shared Redis), or this id was appended before
      // (a replayed hand-off): fold in the log as stored, which has what really happened.
      await this.#reload(
        first < expected && opts.id !== undefined
          ? `transaction ${opts.id} was recorded before (#${first}); not written again`
          : `the store's head moved from ${expected - 1} to ${first - 1} under us`,
      );
    } else {
      // A reload numbered every event as stored; otherwise number what was just written.
      assignOutboxSeqs(this.#state, staged, first);
    }
    if (snapshotDue(this.#seq - this.#snapshotSeq, this.#snapshotEvery, this.#snapshotChars)) await this.#snapshot();
    return first;
  }

  /** Records or migrates the store's schema (the writer's job, before its first write). */
  async #migrate(fence: Fence | undefined): Promise<void> {
    await migrateAsWriter(this.#store, fence, this.#log);
    this.#schemaPending = false;
  }

  /** Replace the read model with what the store holds (after a failed or raced write, or on taking the lead). */
  async #reload(why: string): Promise<void> {
    try {
      const fence = this.#opts.fence?.();
      // A failed migration leaves the flag set: the next write tries again, and fails loudly.
      if (this.#schemaPending && (!this.#opts.fence || fence))
        await this.#migrate(fence).catch((err: unknown) => this.#log.error({ err }, 'store schema migration failed'));
      const loaded = await load(this.#store, this.#opts.limits, this.#log);
      this.#state = loaded.state;
      this.#seq = loaded.seq;
      this.#snapshotSeq = loaded.snapshotSeq;
      this.#snapshotChars = loaded.snapshotChars;
      this.#stored = loaded.snapshot;
      this.#log.warn({ seq: loaded.seq, why }, 'ledger read model reloaded from the store');
    } catch (err) {
      // The store cannot even be read: keep serving reads from memory; writes keep failing loudly.
      this.#log.error({ err, why }, 'ledger reload failed; the read model may hold events the store does not');
    }
  }

  /** A failed snapshot loses nothing (the events are durable); it is retried at the next chance. */
  async #snapshot(): Promise<void> {
    if (this.#seq === this.#snapshotSeq) return;
    // A replica that no longer leads leaves the snapshot to the one that does.
    if (this.#opts.fence && this.#opts.fence() === undefined) return;
    const seq = this.#seq;
    try {
      const json = JSON.stringify(this.#state);
      this.#stored = await writeSnapshot(this.#store, this.#stored, { seq, json, tip: await tipOf(this.#store, seq) }, this.#opts.snapshotPartChars);
      this.#snapshotSeq = seq;
      this.#snapshotChars = json.length;
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
    while (this.#pumping) await this.#pumping;
    await this.#snapshot();
  }
}

/**
 * Characters of snapshot per event of log its next one may wait for. A snapshot rewrites the
 * whole read model (a 10,000-thread storm's is ~60 MB of JSON, and as much again in transient
 * copies while it is written), so writing one every `snapshotEvery` events whatever its size
 * made a drain of that storm rewrite it forty times; past `snapshotEvery × CHARS_PER_EVENT`
 * characters the interval grows with the model instead (60 MB: every ~15,000 events), which
 * keeps the cost of snapshots per event flat and what a restart replays a bounded fraction of
 * what it loads.
 */
const CHARS_PER_EVENT = 4096;

/** A periodic snapshot is due `since` events after the last one, of `chars` characters (`every` 0: never). */
export function snapshotDue(since: number, every: number, chars: number): boolean {
  return every > 0 && since >= Math.max(every, Math.floor(chars / CHARS_PER_EVENT));
}

/** Most transactions committed together in one store write. */
const GROUP_MAX = 256;

interface TxJob {
  kind: 'tx';
  fn: (tx: LedgerTx) => Promise<unknown>;
  opts: TransactionOptions;
  resolve: (v: { result: unknown; first: number; count: number }) => void;
  reject: (err: unknown) => void;
}
interface OpJob {
  kind: 'op';
  run: () => Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}
type Job = TxJob | OpJob;
