/**
 * The inbox of a store one process owns (the embedded store, under its file lock): that process
 * always runs the loop, and the ledger transaction that decides a push is its durable record,
 * so a push is handed to the loop at once — in order, since the ledger runs transactions in
 * the order they were asked for (and commits a burst together).
 */
import type { Clock } from '../../ports/clock.js';
import type { Intent } from '../bot/intent.js';
import { errorMessage, intakeOf, type Inbox, type Intake, type LoopOwner, type WriteError } from './inbox.js';

export class LocalInbox implements Inbox {
  readonly #clock: Clock;
  #owner: LoopOwner | undefined;
  #stopped = false;
  #lastWriteError: WriteError | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  async push(intents: readonly Intent[]): Promise<Intake[]> {
    const owner = this.#owner;
    if (!owner || this.#stopped)
      throw new Error(this.#stopped ? 'the loop is stopping: nothing was recorded' : 'the loop is not built yet: nothing was recorded');
    try {
      const outcomes = await owner.handle(intents, {});
      this.#lastWriteError = undefined;
      return outcomes.map(intakeOf);
    } catch (err) {
      this.#lastWriteError = { at: this.#clock.now().toISOString(), message: errorMessage(err) };
      throw err;
    }
  }

  attach(owner: LoopOwner): void {
    this.#owner = owner;
  }

  /** One process owns the store: it runs the loop from the start, on what it just opened. */
  async start(): Promise<void> {
    this.#owner?.lead();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
  }

  readonly isLeader = true;

  mayDeliver(): boolean {
    return true;
  }

  get lastWriteError(): WriteError | undefined {
    return this.#lastWriteError;
  }

  status(): Record<string, unknown> {
    return { role: 'leader', store: 'embedded (one writer)' };
  }
}
