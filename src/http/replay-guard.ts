/**
 * Replay protection for signed webhooks (SPEC §11, issue 20 item 4): a signature proves who sent
 * a body, not that it is the first time we see it. A captured signed PagerDuty trigger replayed
 * after its resolve would open a new thread every time; here each delivery is claimed by its id
 * in the store before it is handled, so a replay is acknowledged and ignored.
 *
 * Two phases, so a failed delivery can be delivered again and a success never twice:
 * 1. `claim` marks the id *pending* (set-if-absent, atomic across replicas on Redis) with a
 *    short expiry; a second attempt meanwhile is told to come back (503), so two concurrent
 *    deliveries can never both be handled;
 * 2. once the alert is durably recorded, `accepted` marks it *done* for the replay window;
 *    when handling failed, `failed` drops the claim, so the sender's redelivery of a failed
 *    delivery is handled (once).
 * The memory lives in the store (the embedded file or Redis), so it survives a restart and is
 * shared by replicas. When the store cannot be read or written the request is refused with 503
 * — fail closed: nothing is acknowledged, the sender retries, no alert is lost.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';
import { EdgeError } from './http-app.js';

/** The part of the store the guard needs (the embedded store and Redis have it). */
export type ReplayStore = Required<Pick<KeyValueStore, 'setIfAbsent' | 'setExpiring' | 'get' | 'delete'>>;

/**
 * How long a pending claim holds: longer than any one request is handled (the 30 s request
 * deadline plus the durable record), short enough that a redelivery after a crash mid-request
 * gets through on the sender's next retry.
 */
export const PENDING_CLAIM_MS = 60_000;
/** Seconds a sender whose delivery is being handled by another attempt is asked to wait. */
const IN_FLIGHT_RETRY_S = 10;

interface ClaimRecord {
  state: 'pending' | 'done';
  at: string;
}

export type ReplayClaim =
  | {
      kind: 'new';
      /** The delivery was recorded: remember it as done for `keepMs`. Never throws (a failure is logged). */
      accepted(): Promise<void>;
      /** Handling failed: forget the claim so a redelivery is handled. Never throws. */
      failed(): Promise<void>;
    }
  | { kind: 'seen'; at: string };

/** True when `store` can hold expiring keys (every store `createStore` builds). */
export function isReplayStore(store: Partial<KeyValueStore>): store is ReplayStore {
  return typeof store.setIfAbsent === 'function' && typeof store.setExpiring === 'function';
}

export class ReplayGuard {
  readonly #store: ReplayStore;
  readonly #now: () => Date;
  readonly #log: Logger;

  constructor(store: ReplayStore, opts: { now: () => Date; logger: Logger }) {
    this.#store = store;
    this.#now = opts.now;
    this.#log = opts.logger.child({ component: 'replay' });
  }

  /**
   * Claims the delivery `id` of `scope` (a source). `seen` when it was accepted before;
   * throws a 503 while another attempt holds it, or when the store fails (fail closed).
   */
  async claim(scope: string, id: string, keepMs: number): Promise<ReplayClaim> {
    const key = `replay:${scope}:${createHash('sha256').update(id).digest('base64url')}`;
    const pending: ClaimRecord = { state: 'pending', at: this.#now().toISOString() };
    let claimed: boolean;
    let current: ClaimRecord | undefined;
    try {
      claimed = await this.#store.setIfAbsent(key, pending, PENDING_CLAIM_MS);
      // Expired between the two calls: the next claim decides.
      current = claimed ? undefined : await this.#store.get<ClaimRecord>(key);
      if (!claimed && current === undefined) claimed = await this.#store.setIfAbsent(key, pending, PENDING_CLAIM_MS);
    } catch (err) {
      this.#log.error({ err, scope }, 'replay memory unavailable; refusing the signed webhook with 503 so its sender retries');
      throw new EdgeError('unavailable', `the replay memory cannot be read or written (store unavailable); retry later`, { retryAfterS: 5 });
    }
    if (!claimed) {
      if (current?.state === 'done') return { kind: 'seen', at: current.at };
      throw new EdgeError('unavailable', `delivery ${id.slice(0, 100)} is being handled by another attempt; retry in ${IN_FLIGHT_RETRY_S} s`, {
        retryAfterS: IN_FLIGHT_RETRY_S,
      });
    }
    return {
      kind: 'new',
      accepted: async () => {
        try {
          await this.#store.setExpiring(key, { state: 'done', at: this.#now().toISOString() } satisfies ClaimRecord, keepMs);
        } catch (err) {
          // The alert is recorded; only the memory of it is short (the pending claim still holds a while).
          this.#log.error({ err, scope }, 'a signed webhook was recorded but could not be remembered as seen; a replay soon after may be handled again');
        }
      },
      failed: async () => {
        try {
          await this.#store.delete(key);
        } catch (err) {
          this.#log.warn(
            { err, scope },
            `could not drop the claim of a failed delivery; its redelivery is handled once the claim expires (${PENDING_CLAIM_MS / 1000} s)`,
          );
        }
      },
    };
  }
}

/** A replay memory in this process only (tests and servers built without a store). */
export function memoryReplayStore(now: () => number = Date.now): ReplayStore {
  const map = new Map<string, { value: unknown; expires: number }>();
  const live = (key: string) => {
    const e = map.get(key);
    if (e && e.expires <= now()) map.delete(key);
    return map.get(key);
  };
  return {
    setIfAbsent: async (key, value, ttlMs) => {
      if (live(key)) return false;
      map.set(key, { value, expires: now() + ttlMs });
      return true;
    },
    setExpiring: async (key, value, ttlMs) => {
      map.set(key, { value, expires: now() + ttlMs });
    },
    get: async <T>(key: string) => live(key)?.value as T | undefined,
    delete: async (key) => {
      map.delete(key);
    },
  };
}
