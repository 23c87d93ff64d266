/**
 * Who may hold the public port's request slots (issue 20 item 5): nobody — signed or not — can
 * starve the senders that matter.
 *
 * - **Per route** (each webhook source, `/slack/events`): past `server.max_pending_webhooks`
 *   requests in progress, a request is answered 503 + `Retry-After` at once, before its body is
 *   read, and nothing is recorded — it was never acknowledged, so nothing is lost; the sender
 *   re-sends it. One source's trickling senders cannot take another source's slots.
 * - **Per peer**: one address holds at most `server.max_pending_per_peer` requests in progress
 *   across every route.
 * - **The verify pool** ({@link VerifyPool}): a source that must read the body before it can
 *   check its signature (PagerDuty, HMAC generic sources, Slack) reads it inside a pool of
 *   `server.verify_pool_slots`. When the pool is full, a newcomer takes the slot of the sender
 *   there furthest from done (the most bytes still to come at its pace so far), which is
 *   answered 503 and disconnected. A signed webhook arrives whole with its headers and is read
 *   at once, so an unauthenticated sender trickling a body cannot hold a slot against it, and
 *   the memory of bodies being read is bounded by slots × `server.body_limit_bytes`.
 * Health, readiness and metrics are never shed.
 */
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../ports/logger.js';
import { EdgeError, remoteAddress, type HttpEnv } from './http-app.js';
import type { SHED_REASONS } from './metrics.js';

/** Seconds a shed sender is asked to wait. */
export const SHED_RETRY_AFTER_S = 5;

export type ShedReason = (typeof SHED_REASONS)[number];

export interface AdmissionOptions {
  maxPerRoute: number;
  maxPerPeer: number;
  /** The route a request counts against (`alertmanager`, `pagerduty`, `generic`, `slack`…), or undefined to admit it uncounted. */
  routeOf: (method: string, path: string) => string | undefined;
  onShed: (route: string, reason: ShedReason) => void;
  logger: Logger;
  /** Milliseconds clock for the log throttle. */
  now: () => number;
}

/** A log line per 10 s at most, with the count since the last one: a storm must not flood the log. */
function throttledWarn(log: Logger, now: () => number): (fields: Record<string, unknown>, msg: (n: number) => string) => void {
  let since = 0;
  let last = Number.NEGATIVE_INFINITY;
  return (fields, msg) => {
    since += 1;
    const t = now();
    if (t - last < 10_000) return;
    log.warn({ ...fields, shed: since }, msg(since));
    last = t;
    since = 0;
  };
}

/** Per-route and per-peer caps on requests in progress (see the module doc). */
export function admission(opts: AdmissionOptions): MiddlewareHandler<HttpEnv> {
  const byRoute = new Map<string, number>();
  const byPeer = new Map<string, number>();
  const warn = throttledWarn(opts.logger, opts.now);
  const dec = (m: Map<string, number>, k: string): void => {
    const n = (m.get(k) ?? 1) - 1;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
  };
  return async (c, next) => {
    const route = opts.routeOf(c.req.method, c.req.path);
    if (route === undefined) return next();
    c.set('routeLabel', ROUTE_LABELS[route]);
    const peer = normalizePeer(remoteAddress(c));
    const pending = byRoute.get(route) ?? 0;
    if (pending >= opts.maxPerRoute) {
      opts.onShed(route, 'route_busy');
      warn(
        { route, pending, maxPending: opts.maxPerRoute },
        (n) => `busy: ${n} request(s) answered 503 (server.max_pending_webhooks = ${opts.maxPerRoute} in progress for ${route}); senders retry`,
      );
      throw new EdgeError('unavailable', `busy: ${pending} webhooks in progress (server.max_pending_webhooks); retry in ${SHED_RETRY_AFTER_S} s`, {
        retryAfterS: SHED_RETRY_AFTER_S,
        closeConnection: true,
      });
    }
    const fromPeer = peer === undefined ? 0 : (byPeer.get(peer) ?? 0);
    if (peer !== undefined && fromPeer >= opts.maxPerPeer) {
      opts.onShed(route, 'peer_busy');
      warn(
        { route, peer, pending: fromPeer, maxPerPeer: opts.maxPerPeer },
        (n) => `busy: ${n} request(s) answered 503 (server.max_pending_per_peer = ${opts.maxPerPeer} in progress from ${peer}); senders retry`,
      );
      throw new EdgeError(
        'unavailable',
        `busy: ${fromPeer} requests in progress from your address (server.max_pending_per_peer); retry in ${SHED_RETRY_AFTER_S} s`,
        { retryAfterS: SHED_RETRY_AFTER_S, closeConnection: true },
      );
    }
    byRoute.set(route, pending + 1);
    if (peer !== undefined) byPeer.set(peer, fromPeer + 1);
    try {
      await next();
    } finally {
      dec(byRoute, route);
      if (peer !== undefined) dec(byPeer, peer);
    }
    return undefined;
  };
}

/** The metrics label of a request shed before its route matched (a fixed set: no cardinality from paths). */
const ROUTE_LABELS: Record<string, string> = {
  alertmanager: '/webhook/alertmanager',
  grafana: '/webhook/grafana',
  pagerduty: '/webhook/pagerduty',
  generic: '/webhook/generic/:name',
  slack: '/slack/*',
};

/** `::ffff:10.0.0.1` and `10.0.0.1` are one peer. */
function normalizePeer(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

export interface VerifyPoolOptions {
  slots: number;
  /** Milliseconds clock: the pace of a sender is bytes over time in the pool. */
  now: () => number;
  onShed: (route: string, reason: ShedReason) => void;
  /** Told the number of bodies being read whenever it changes. */
  onSize?: (n: number) => void;
  logger: Logger;
}

/** A slot in the pool: read the body with its signal and count its chunks, then leave. */
export interface PoolTicket {
  /** Aborted when the pool sheds this sender. */
  readonly signal: AbortSignal;
  chunk(bytes: number): void;
  leave(): void;
}

interface Member {
  route: string;
  since: number;
  bytes: number;
  /** What the body will weigh (its Content-Length, else the limit). */
  expected: number;
  /** Had its chance: a chunk arrived, or the event loop turned once since it came in. */
  ready: boolean;
  abort: AbortController;
}

/**
 * Bodies read before they can be verified; when full, the sender furthest from done makes room
 * (see the module doc).
 *
 * Who is shed: among members that have had their chance to send (a chunk arrived, or one turn
 * of the event loop passed — a signed webhook's body arrives with its headers and is read in
 * that turn), the one with the longest expected time to finish (bytes still to come over its
 * pace so far), the oldest on a tie. No time-based grace: a flood of senders reconnecting
 * faster than any grace could never hold the pool young, and a real webhook, read at once,
 * never waits in it.
 */
export class VerifyPool {
  readonly #opts: VerifyPoolOptions;
  readonly #members = new Set<Member>();
  readonly #warn: ReturnType<typeof throttledWarn>;

  constructor(opts: VerifyPoolOptions) {
    this.#opts = opts;
    this.#warn = throttledWarn(opts.logger, opts.now);
  }

  /** Bodies being read now. */
  get size(): number {
    return this.#members.size;
  }

  /**
   * A slot for a request of `route` whose body should weigh `expectedBytes`, shedding the sender
   * furthest from done when full.
   * @throws EdgeError `unavailable` (503) when every member is still within its first turn.
   */
  enter(route: string, expectedBytes: number): PoolTicket {
    const now = this.#opts.now();
    if (this.#members.size >= this.#opts.slots) {
      const victim = this.#furthestFromDone(now);
      if (!victim) {
        this.#opts.onShed(route, 'pool_full');
        this.#warn(
          { route, slots: this.#opts.slots },
          (n) => `busy: ${n} signed-source request(s) answered 503: all ${this.#opts.slots} verify slots (server.verify_pool_slots) are reading new bodies`,
        );
        throw new EdgeError(
          'unavailable',
          `busy: ${this.#opts.slots} request bodies are being read for verification (server.verify_pool_slots); retry in ${SHED_RETRY_AFTER_S} s`,
          { retryAfterS: SHED_RETRY_AFTER_S, closeConnection: true },
        );
      }
      this.#members.delete(victim);
      this.#opts.onSize?.(this.#members.size);
      this.#opts.onShed(victim.route, 'slowest');
      const rate = Math.round((victim.bytes * 1000) / Math.max(1, now - victim.since));
      this.#warn(
        { route: victim.route, bytesPerSecond: rate, slots: this.#opts.slots },
        (n) => `shed ${n} slow sender(s) to make room in the verify pool (server.verify_pool_slots = ${this.#opts.slots} full)`,
      );
      victim.abort.abort(
        new EdgeError(
          'unavailable',
          `shed: the slowest of ${this.#opts.slots} request bodies being read (${victim.bytes} of ${victim.expected} bytes, ${rate} bytes/s); send it faster, retry in ${SHED_RETRY_AFTER_S} s`,
          { retryAfterS: SHED_RETRY_AFTER_S, closeConnection: true },
        ),
      );
    }
    const member: Member = { route, since: now, bytes: 0, expected: Math.max(1, expectedBytes), ready: false, abort: new AbortController() };
    this.#members.add(member);
    this.#opts.onSize?.(this.#members.size);
    setImmediate(() => {
      member.ready = true;
    });
    return {
      signal: member.abort.signal,
      chunk: (bytes) => {
        member.bytes += bytes;
        member.ready = true;
      },
      leave: () => {
        if (this.#members.delete(member)) this.#opts.onSize?.(this.#members.size);
      },
    };
  }

  /** The ready member with the longest expected time to finish; the oldest on a tie. */
  #furthestFromDone(now: number): Member | undefined {
    let best: Member | undefined;
    let bestEta = Number.NEGATIVE_INFINITY;
    for (const m of this.#members) {
      if (!m.ready) continue;
      const rate = m.bytes / Math.max(1, now - m.since);
      const remaining = Math.max(0, m.expected - m.bytes);
      const eta = rate > 0 ? remaining / rate : Number.POSITIVE_INFINITY;
      if (eta > bestEta || (eta === bestEta && best !== undefined && m.since < best.since)) {
        best = m;
        bestEta = eta;
      }
    }
    return best;
  }
}
