/**
 * Wrong UI tokens, per peer address (issue 29 item 6): the first `freeAttempts` wrong tokens are
 * answered as wrong; after that each further try must wait — 1 s, doubling with every wrong one,
 * up to `maxBackoffMs` — and a try inside the wait is refused unread (429, Retry-After). A right
 * token clears the address. The addresses are kept in a bounded LRU, so a spray of peers costs
 * memory once, not forever.
 */
import { LRUCache } from 'lru-cache';

export interface SignInLimits {
  freeAttempts: number;
  maxBackoffMs: number;
}

interface PeerState {
  failures: number;
  /** No try is taken before this time (ms since the epoch). */
  until: number;
}

const FIRST_WAIT_MS = 1000;

export class SignInLimiter {
  readonly #o: SignInLimits;
  readonly #peers = new LRUCache<string, PeerState>({ max: 10_000 });

  constructor(opts: SignInLimits) {
    this.#o = opts;
  }

  /** How long this peer must still wait before a try is taken (0 = now). */
  waitMs(peer: string | undefined, now: Date): number {
    const s = this.#peers.get(peer ?? '?');
    return s ? Math.max(0, s.until - now.getTime()) : 0;
  }

  /** Records a wrong token; resolves with the failures so far and the wait before the next try. */
  failed(peer: string | undefined, now: Date): { failures: number; waitMs: number } {
    const key = peer ?? '?';
    const failures = (this.#peers.get(key)?.failures ?? 0) + 1;
    const over = failures - this.#o.freeAttempts;
    const waitMs = over <= 0 ? 0 : Math.min(this.#o.maxBackoffMs, FIRST_WAIT_MS * 2 ** Math.min(over - 1, 30));
    this.#peers.set(key, { failures, until: now.getTime() + waitMs });
    return { failures, waitMs };
  }

  /** A right token: the peer starts afresh. */
  succeeded(peer: string | undefined): void {
    this.#peers.delete(peer ?? '?');
  }
}
