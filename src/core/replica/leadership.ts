/**
 * Which replica runs the loop (SPEC §8): a lease in the shared store, renewed every third of
 * its TTL, with the fencing token drawn when it was taken. Exactly one replica leads while the
 * lease holds; a replica that cannot renew in time steps down on its own (before the lease
 * can expire under it), and its token goes stale the moment another replica takes the lease,
 * so even a paused ex-leader cannot write.
 */
import type { Logger } from '../../ports/logger.js';
import type { Fence, LeaderLease } from '../../ports/store.js';

export type LeaderState = 'follower' | 'gaining' | 'leader';

export interface LeadershipOptions {
  lease: LeaderLease;
  ttlMs: number;
  logger: Logger;
  /** Runs after the lease is taken, before the replica counts as leader (replay, drain). */
  onGain: (token: number) => Promise<void>;
  /** Runs after the replica stopped counting as leader (stop the outbox, cancel jobs). */
  onLose: (reason: string) => Promise<void>;
  /** Wall-clock milliseconds (tests move it); default Date.now. */
  now?: () => number;
}

export class Leadership {
  readonly #o: LeadershipOptions;
  readonly #now: () => number;
  #state: LeaderState = 'follower';
  #token: number | undefined;
  /** When the last successful take or renewal was asked (the lease runs from then, at the latest). */
  #lastRenewed = 0;
  /** The last renewal attempt failed: nothing is sent until one succeeds. */
  #renewFailing = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #tick: Promise<void> = Promise.resolve();
  #changes = 0;

  constructor(opts: LeadershipOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
  }

  get state(): LeaderState {
    return this.#state;
  }
  get isLeader(): boolean {
    return this.#state === 'leader';
  }
  /** How many times this replica gained the lead (metrics, logs). */
  get terms(): number {
    return this.#changes;
  }

  /**
   * The fence ledger writes carry: present from the moment the lease is ours (the replay and
   * drain in `onGain` write with it) until it is given up or lost.
   */
  fence(): Fence | undefined {
    return this.#token === undefined || this.#state === 'follower' ? undefined : { key: this.#o.lease.fenceKey, token: this.#token };
  }

  /**
   * May this replica act outside the store now (send to chat)? Only while the lease is its own
   * with margin: renewed within two thirds of the TTL, the last renewal not failed. A fenced
   * ledger write is refused by the store; a chat send cannot be, so it is checked here, right
   * before each one — a paused leader that wakes after its lease ran out sends nothing.
   */
  mayAct(): boolean {
    if (this.#state === 'follower' || this.#token === undefined || this.#renewFailing) return false;
    return this.#now() - this.#lastRenewed < (this.#o.ttlMs * 2) / 3;
  }

  /** Makes the first attempt (awaited), then keeps trying / renewing on a timer. */
  async start(): Promise<void> {
    await this.#run();
  }

  /** One renewal or acquisition attempt now (tests; also what the timer does). */
  check(): Promise<void> {
    return this.#run();
  }

  /** Stops the timer, steps down and releases the lease so another replica leads at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#tick;
    const token = this.#token;
    if (this.#state !== 'follower') await this.#lose('shutting down');
    if (token !== undefined) {
      await this.#o.lease.release(token).catch((err: unknown) => this.#o.logger.warn({ err }, 'could not release the leader lease; it expires on its own'));
    }
  }

  #run(): Promise<void> {
    const run = this.#tick.then(() => this.#step());
    this.#tick = run.catch(() => undefined);
    return run;
  }

  async #step(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#stopped) return;
    try {
      if (this.#state === 'follower') await this.#tryAcquire();
      else await this.#renew();
    } finally {
      if (!this.#stopped) {
        // A leader renews at a third of the TTL; a follower looks a little more often, so a
        // lost leader is replaced soon after its lease runs out.
        const every = this.#state === 'follower' ? this.#o.ttlMs / 4 : this.#o.ttlMs / 3;
        this.#timer = setTimeout(() => void this.#run(), Math.max(10, Math.round(every)));
        this.#timer.unref();
      }
    }
  }

  async #tryAcquire(): Promise<void> {
    let token: number | undefined;
    const asked = this.#now();
    try {
      token = await this.#o.lease.acquire();
    } catch (err) {
      this.#o.logger.warn({ err }, 'cannot reach the store to take the leader lease; staying a follower');
      return;
    }
    if (token === undefined) return;
    this.#token = token;
    this.#lastRenewed = asked;
    this.#renewFailing = false;
    this.#state = 'gaining';
    this.#o.logger.info({ token }, 'took the leader lease; replaying the ledger and draining the inbox');
    // A take-over can outlast a third of the TTL (replaying a big ledger): keep the lease alive
    // meanwhile, or another replica would take it and this one's first writes be refused.
    const keepAlive = setInterval(
      () => {
        const at = this.#now();
        void this.#o.lease.renew(token).then(
          (ok) => {
            if (ok) this.#lastRenewed = at;
          },
          () => undefined,
        );
      },
      Math.max(10, Math.round(this.#o.ttlMs / 3)),
    );
    keepAlive.unref();
    try {
      await this.#o.onGain(token);
    } catch (err) {
      clearInterval(keepAlive);
      this.#o.logger.error({ err, token }, 'could not take over as leader; giving the lease up');
      await this.#lose('taking over failed');
      await this.#o.lease.release(token).catch(() => undefined);
      return;
    }
    clearInterval(keepAlive);
    if (this.#state !== 'gaining' || this.#token !== token) return;
    this.#state = 'leader';
    this.#changes += 1;
    this.#o.logger.info({ token }, 'leading: this replica runs the loop');
  }

  async #renew(): Promise<void> {
    const token = this.#token!;
    let ok: boolean;
    const asked = this.#now();
    try {
      ok = await this.#o.lease.renew(token);
    } catch (err) {
      this.#renewFailing = true;
      // The lease may still hold in the store; give up before it could expire under us.
      if (this.#now() - this.#lastRenewed >= (this.#o.ttlMs * 2) / 3) await this.#lose(`cannot renew the lease: ${(err as Error).message}`);
      else this.#o.logger.warn({ err }, 'leader lease renewal failed; retrying');
      return;
    }
    if (ok) {
      this.#lastRenewed = asked;
      this.#renewFailing = false;
    } else await this.#lose('the lease is held by another replica');
  }

  async #lose(reason: string): Promise<void> {
    if (this.#state === 'follower') return;
    this.#state = 'follower';
    const token = this.#token;
    this.#token = undefined;
    this.#o.logger.warn({ token, reason }, `stepped down as leader: ${reason}`);
    try {
      await this.#o.onLose(reason);
    } catch (err) {
      this.#o.logger.error({ err }, 'stopping the loop after losing the lead failed');
    }
  }
}
