/**
 * Delivery lanes: which pending outbox items go in a pass, and which are given up.
 *
 * Items of one thread on one surface go in the order they were recorded (a lane); only a lane's
 * head may go, and a reply or an update waits for its thread's root, so a resolve that arrived
 * before its thread was delivered is delivered after it. A head still failing waits for its
 * attempt's backoff (core/backoff.ts; a surface's `Retry-After` wins); one too old is expired,
 * and one whose thread's root will never be delivered is orphaned — both recorded as given up.
 */
import type { DeliveryEnd } from '../../ports/loop-observer.js';
import { backoffDelay, type BackoffPolicy } from '../backoff.js';
import type { LedgerEvent } from '../ledger-events.js';
import type { LedgerReader } from '../ledger/ledger-reader.js';
import { laneOf, rootOf, type OutboxItem, type OutboxOptions } from './outbox-types.js';

/** How failed attempts spread: ±20% of the backoff, so many items failing together do not retry together. */
const RETRY_JITTER = 0.2;

interface Attempt {
  n: number;
  nextAt: number;
  lastError?: string;
}

/** Failed attempts of the items still pending, and when each may go again. */
export class Attempts {
  readonly #byId = new Map<string, Attempt>();
  readonly #policy: BackoffPolicy;

  constructor(opts: Pick<OutboxOptions, 'baseDelayMs' | 'maxDelayMs'>) {
    this.#policy = { baseMs: opts.baseDelayMs, maxMs: opts.maxDelayMs, jitter: RETRY_JITTER };
  }

  /**
   * An attempt failed and will be retried: the wait before the next one (the surface's own
   * `retryAfterMs` when it named one) and how many attempts failed in a row.
   */
  failed(id: string, now: number, error: string, retryAfterMs?: number): { n: number; waitMs: number } {
    const n = (this.#byId.get(id)?.n ?? 0) + 1;
    const waitMs = backoffDelay(this.#policy, n, { serverWaitMs: retryAfterMs, floorMs: 0 });
    this.#byId.set(id, { n, nextAt: now + waitMs, lastError: error.slice(0, 300) });
    return { n, waitMs };
  }

  /** The item is done (delivered or given up). */
  clear(id: string): void {
    this.#byId.delete(id);
  }

  /** When the item may go again, if it is waiting. */
  nextAt(id: string): number | undefined {
    return this.#byId.get(id)?.nextAt;
  }

  lastError(id: string): string | undefined {
    return this.#byId.get(id)?.lastError;
  }

  /** Items whose last attempt failed. */
  retrying(): number {
    let n = 0;
    for (const a of this.#byId.values()) if (a.n > 0) n++;
    return n;
  }
}

/** What one pass over the outbox found. */
export interface LanePlan {
  /** Heads to send now, first messages of threads first. */
  ready: Array<{ item: OutboxItem; lane: string }>;
  /** `outbox_failed` events for the heads given up (expired or orphaned). */
  given: LedgerEvent[];
  /** What the loop observer is told once those are recorded. */
  gaveUp: DeliveryEnd[];
  /** The earliest time a waiting head may go (Infinity: none waits). */
  nextWake: number;
}

/**
 * Picks the heads of the lanes that may go now. `room` is how many lanes may start; four times
 * as many heads are chosen from, so first messages can go before later ones.
 */
export function planLanes(args: {
  pending: Iterable<OutboxItem>;
  read: Pick<LedgerReader, 'thread'>;
  running: ReadonlySet<string>;
  attempts: Attempts;
  opts: Pick<OutboxOptions, 'maxAgeMs' | 'answerMaxAgeMs'>;
  now: number;
  room: number;
}): LanePlan {
  const { now, attempts, opts } = args;
  const seenLanes = new Set<string>();
  const plan: LanePlan = { ready: [], given: [], gaveUp: [], nextWake: Number.POSITIVE_INFINITY };
  const at = new Date(now).toISOString();
  for (const item of args.pending) {
    // Recorded by a transaction that has not committed yet: its turn comes after the commit.
    if (item.seq === undefined) continue;
    const lane = laneOf(item);
    if (seenLanes.has(lane)) continue; // only the head of a lane may go
    seenLanes.add(lane);
    if (args.running.has(lane)) continue;
    const age = now - Date.parse(item.at);
    if (Number.isFinite(age) && age > (item.op === 'answer' ? opts.answerMaxAgeMs : opts.maxAgeMs)) {
      const lastError = attempts.lastError(item.id);
      plan.given.push({
        type: 'outbox_failed',
        id: item.id,
        reason: `undelivered after ${Math.round(age / 60_000)} min${lastError ? `: ${lastError}` : ''}`,
        at,
      });
      plan.gaveUp.push({ transport: item.transport, op: item.op, outcome: 'failed', reason: 'expired' });
      continue;
    }
    const nextAt = attempts.nextAt(item.id);
    if (nextAt !== undefined && nextAt > now) {
      plan.nextWake = Math.min(plan.nextWake, nextAt);
      continue;
    }
    if (item.op !== 'post' && item.op !== 'answer' && rootOf(args.read, item.openId!, item.transport) === undefined) {
      // Its thread's root is neither delivered nor pending on this lane: it never will be.
      plan.given.push({ type: 'outbox_failed', id: item.id, reason: `its thread was never delivered on ${item.transport}`, at });
      plan.gaveUp.push({ transport: item.transport, op: item.op, outcome: 'failed', reason: 'orphaned' });
      continue;
    }
    plan.ready.push({ item, lane });
    // Enough heads to choose from; the rest wait for the next pass.
    if (plan.ready.length >= 4 * args.room) break;
  }
  // A thread's first message goes before other threads' later ones (stable: otherwise in
  // recorded order): in an alert storm every incident shows up before the analyses fill in.
  plan.ready.sort((a, b) => Number(b.item.op === 'post') - Number(a.item.op === 'post'));
  return plan;
}
