/**
 * Budgets (SPEC §7): each a number the operator reads back, each breach a recorded reason.
 */
import PQueue from 'p-queue';
import type { Clock } from '../../ports/clock.js';
import type { TokenUsage } from '../../ports/model.js';

export interface BudgetLimits {
  /** Most model turns. */
  maxSteps: number;
  /** Most tokens in + out. */
  maxTokens: number;
  wallTimeMs: number;
}

export type BreachReason = 'max_steps' | 'max_tokens' | 'wall_time' | 'daily_budget';

export interface Breach {
  reason: BreachReason;
  detail: string;
}

/** One investigation's spend against its limits. */
export class RunBudget {
  turns = 0;
  input = 0;
  output = 0;
  readonly #limits: BudgetLimits;
  readonly #clock: Clock;
  readonly #start: number;
  /** Tokens the day may still spend (Infinity without a daily budget). */
  readonly #dailyLeft: number;

  constructor(limits: BudgetLimits, clock: Clock, dailyLeft = Number.POSITIVE_INFINITY) {
    this.#limits = limits;
    this.#clock = clock;
    this.#start = clock.now().getTime();
    this.#dailyLeft = dailyLeft;
  }

  get tokens(): number {
    return this.input + this.output;
  }

  elapsedMs(): number {
    return this.#clock.now().getTime() - this.#start;
  }

  add(u: TokenUsage): void {
    this.input += u.input;
    this.output += u.output;
  }

  /** Tokens a next turn may still spend. */
  remainingTokens(): number {
    return Math.max(0, Math.min(this.#limits.maxTokens - this.tokens, this.#dailyLeft - this.tokens));
  }

  /** The first limit reached, checked before each turn and each tool call. */
  breach(): Breach | null {
    const l = this.#limits;
    if (this.elapsedMs() >= l.wallTimeMs) return { reason: 'wall_time', detail: `wall time ${this.elapsedMs()} ms reached the ${l.wallTimeMs} ms budget` };
    if (this.tokens >= l.maxTokens) return { reason: 'max_tokens', detail: `${this.tokens} tokens reached the ${l.maxTokens}-token budget` };
    if (this.tokens >= this.#dailyLeft)
      return { reason: 'daily_budget', detail: `the daily token budget ran out during the run (${this.tokens} tokens spent)` };
    if (this.turns >= l.maxSteps) return { reason: 'max_steps', detail: `${this.turns} model turns reached the ${l.maxSteps}-step budget` };
    return null;
  }
}

/**
 * Max concurrent investigations: a FIFO of waiters, never dropped, leaving the queue on abort.
 * A slot is a p-queue task that runs until its holder releases it, so ordering and abort-while-
 * waiting are p-queue's. The caller's signal only applies while waiting: once a slot is held, a
 * cancelled run keeps it until it has wound down and released it (p-queue would free it at once).
 */
export class Semaphore {
  readonly #queue: PQueue;
  /** Slots handed out and not yet released (p-queue frees its own a few microtasks after a release). */
  #held = 0;
  constructor(size: number) {
    this.#queue = new PQueue({ concurrency: Math.max(1, size) });
  }

  /** Slots free now. */
  get free(): number {
    return this.#queue.concurrency - this.#held;
  }

  /** Number waiting now. */
  get waiting(): number {
    return this.#queue.size;
  }

  /** Resolves with a release function once a slot is free; rejects with the signal's reason if aborted first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    const waiting = new AbortController();
    const onAbort = (): void => waiting.abort(signal?.reason ?? new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise((resolve, reject) => {
      this.#queue
        .add(
          () =>
            new Promise<void>((release) => {
              signal?.removeEventListener('abort', onAbort);
              this.#held++;
              resolve(
                once(() => {
                  this.#held--;
                  release();
                }),
              );
            }),
          { signal: waiting.signal },
        )
        .catch((err: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err as Error);
        });
    });
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      fn();
    }
  };
}

/** `YYYY-MM-DD` of a time in UTC: the daily budget resets at UTC midnight. */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}
