/**
 * The one way into the loop (issue 30): every entrance — a webhook, a PagerDuty action, a chat
 * surface, the control socket, the offline CLI, a timer — pushes intents into the inbox, and the
 * process that runs the loop drains them into `handle(intents, { txId })`. Two implementations,
 * chosen once where the store is opened: {@link LocalInbox} (the embedded store, one process,
 * which always runs the loop) and `SharedInbox` (Redis: every replica records what it accepts in
 * a shared log, the leader drains it). Senders read the same answer from both.
 */
import type { BotOutcome } from '../bot/decide.js';
import type { Intent } from '../bot/intent.js';
import type { Fence } from '../../ports/store.js';

/** A posted firing as its sender reads it: the recall trace stays in the ledger and the logs. */
export type PostedSummary = Pick<Extract<BotOutcome, { status: 'posted' }>, 'status' | 'triggerKey' | 'answer'>;

/**
 * What became of one pushed intent: the loop's outcome, or `queued` — recorded in the shared
 * inbox, and decided by the leader later than its sender waited (no replica led meanwhile).
 */
export type Intake = Exclude<BotOutcome, { status: 'posted' }> | PostedSummary | { status: 'queued' };

/** The loop's entrance as the inbox drains into it. */
export type HandleIntents = (intents: readonly Intent[], opts: { txId?: string }) => Promise<BotOutcome[]>;

/** What the process that runs the loop does when it starts and stops running it. */
export interface LoopOwner {
  handle: HandleIntents;
  /** Reloads the ledger's read model from the store (a replica taking the lead starts from what the store holds). */
  reload(why: string): Promise<void>;
  /** This process runs the loop now: the outbox, the timers, forge work. */
  lead(): void;
  /** It stopped running it (the lead was lost): stop all of that. */
  follow(): Promise<void>;
}

export interface PushOptions {
  /**
   * `decided` (default): resolve with each intent's outcome once the loop decided it (a
   * follower waits a while for the leader, then says `queued`). `recorded`: resolve once the
   * intents are durable (a chat surface, which answers nobody with the outcome).
   */
  until?: 'decided' | 'recorded';
}

/** A write that failed, as readiness reports it. */
export interface WriteError {
  at: string;
  message: string;
}

export interface Inbox {
  /**
   * Hands `intents` to the loop, in order. Resolves once they are durable (in the ledger, or
   * in the shared inbox); rejects when nothing could be recorded, so the sender may retry.
   */
  push(intents: readonly Intent[], opts?: PushOptions): Promise<Intake[]>;
  /** The loop pushes are decided by, once it is built (a push before is refused). */
  attach(owner: LoopOwner): void;
  /** Runs the loop here — or, on a shared store, competes for the lead and drains while leading. */
  start(): Promise<void>;
  /** Stops draining; on a shared store, steps down and gives the lead up at once. */
  stop(): Promise<void>;
  /** Whether this process runs the loop now. */
  readonly isLeader: boolean;
  /** May this process send to chat now (a leader whose lease holds with margin)? */
  mayDeliver(): boolean;
  /**
   * On a shared store, the fencing token every ledger write carries (undefined while following:
   * writes refused). Absent where one process owns the store and its writes need no fence.
   */
  readonly fence?: () => Fence | undefined;
  /** The last push that could not be recorded, cleared by the next one that was: readiness reports it. */
  readonly lastWriteError: WriteError | undefined;
  /** Who runs the loop, for `/readyz` and `status`. */
  status(): Record<string, unknown>;
}

/** An outcome as the inbox hands it back: a posted firing without its recall trace. */
export function intakeOf(o: BotOutcome): Intake {
  if (o.status === 'posted') return { status: o.status, triggerKey: o.triggerKey, answer: o.answer };
  return o;
}

/** Message of a failure, for {@link WriteError}. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
