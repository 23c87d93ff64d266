/**
 * The inbox of a store several replicas share (Redis; SPEC §8). Every replica records what it
 * accepts in the shared log before it answers; exactly one — the holder of the leader lease —
 * runs the loop: it reloads the ledger when it takes the lead, works through the log in order
 * (each item's ledger transaction named by the item's id, so an item handled again after a
 * crash records nothing twice), and leaves each outcome for the replica that waits for it.
 * Losing the lease stops all of that at once; the replica keeps taking pushes as a follower.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, Timer } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { StaleFenceError, type Fence, type KeyValueStore } from '../../ports/store.js';
import type { Intent } from '../bot/intent.js';
import { errorMessage, intakeOf, type Inbox, type Intake, type LoopOwner, type PushOptions, type WriteError } from '../inbox/inbox.js';
import { InboxLog, itemIntents, replyKey, type InboxItem } from './inbox-log.js';
import { Leadership } from './leadership.js';

/** How often the leader looks for items other replicas recorded. */
const POLL_MS = 100;
/** How often a follower looks for the outcome the leader left for it. */
const REPLY_POLL_MS = 50;
/** How long an outcome waits for its sender to read it. */
const REPLY_TTL_MS = 5 * 60_000;

/**
 * What time and the leader's own work bring (a tick, Alertmanager's list, a resume) is decided
 * by the leader that made it: it never crosses replicas, so it is never written to the log.
 */
const LEADER_OWN = new Set<Intent['type']>(['tick', 'reconcile', 'resume']);

export interface SharedInboxOptions {
  store: KeyValueStore;
  clock: Clock;
  logger: Logger;
  /** This replica, as lease owner and in the items it records. */
  id: string;
  leaseTtlMs: number;
  /** How long a follower waits for the leader's outcome before saying `queued` (default: the lease TTL, what a failover takes). */
  replyWaitMs?: number;
}

interface Waiter {
  resolve(intake: Intake[]): void;
  reject(err: unknown): void;
}

export class SharedInbox implements Inbox {
  readonly id: string;
  readonly #o: SharedInboxOptions;
  readonly #log: Logger;
  readonly #items: InboxLog;
  readonly #leadership: Leadership;
  /** Senders in this process waiting for an item's outcome, by item id. */
  readonly #waiters = new Map<string, Waiter>();
  #owner: LoopOwner | undefined;
  #draining: Promise<void> | undefined;
  #again = false;
  #poll: Timer | undefined;
  #handled = 0;
  #stopped = false;
  #lastWriteError: WriteError | undefined;

  constructor(o: SharedInboxOptions) {
    this.#o = o;
    this.id = o.id;
    this.#log = o.logger.child({ component: 'replicas', replica: o.id });
    this.#items = new InboxLog(o.store, this.#log);
    const lease = o.store.leaderLease?.(o.id, o.leaseTtlMs);
    if (!lease) throw new Error('this store has no leader lease: more than one replica needs Redis (store.url redis://…)');
    this.#leadership = new Leadership({
      lease,
      ttlMs: o.leaseTtlMs,
      logger: this.#log,
      onGain: async () => {
        const owner = this.#ownerOrThrow();
        await owner.reload('this replica took the lead');
        await this.#drainNow();
        owner.lead();
      },
      onLose: async () => {
        await this.#owner?.follow();
      },
    });
  }

  get isLeader(): boolean {
    return this.#leadership.isLeader;
  }

  mayDeliver(): boolean {
    return this.#leadership.mayAct();
  }

  /** The fence the ledger's writes carry (undefined while following: writes refused). */
  readonly fence = (): Fence | undefined => this.#leadership.fence();

  get lastWriteError(): WriteError | undefined {
    return this.#lastWriteError;
  }

  status(): Record<string, unknown> {
    return { replica: this.id, role: this.#leadership.state, handled: this.#handled };
  }

  attach(owner: LoopOwner): void {
    this.#owner = owner;
  }

  async start(): Promise<void> {
    this.#ownerOrThrow();
    await this.#leadership.start();
    this.#poll = this.#o.clock.setInterval(() => this.kick(), POLL_MS).unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#o.clock.clearInterval(this.#poll);
    await this.#draining;
    await this.#leadership.stop();
    for (const [id, w] of this.#waiters) {
      this.#waiters.delete(id);
      w.resolve([]);
    }
  }

  async push(intents: readonly Intent[], opts: PushOptions = {}): Promise<Intake[]> {
    if (intents.length > 0 && intents.every((i) => LEADER_OWN.has(i.type))) {
      const owner = this.#ownerOrThrow();
      // From the moment the lease is ours (the resume of taking the lead comes before it counts as leading).
      if (this.fence() === undefined) throw new StaleFenceError(undefined);
      return (await owner.handle(intents, {})).map(intakeOf);
    }
    const decided = (opts.until ?? 'decided') === 'decided';
    const item: InboxItem = {
      id: itemId(intents),
      kind: 'intents',
      intents: [...intents],
      at: this.#o.clock.now().toISOString(),
      from: this.id,
      ...(decided ? { reply: true } : {}),
    };
    // Waiting before the item is written: a leader in this process may handle it at once.
    const outcome = decided ? this.#waitFor(item.id) : undefined;
    try {
      await this.#items.put(item);
      this.#lastWriteError = undefined;
    } catch (err) {
      this.#waiters.delete(item.id);
      this.#lastWriteError = { at: this.#o.clock.now().toISOString(), message: errorMessage(err) };
      throw err;
    }
    this.kick();
    if (!outcome) return intents.map(() => ({ status: 'queued' }));
    const intake = await outcome;
    return intake.length === intents.length ? intake : intents.map(() => ({ status: 'queued' }));
  }

  /** Leader only: work through the log soon. */
  kick(): void {
    if (!this.#leadership.isLeader || this.#stopped) return;
    this.#again = true;
    if (this.#draining) return;
    this.#draining = (async () => {
      while (this.#again && this.#leadership.isLeader) {
        this.#again = false;
        await this.#drainNow();
      }
    })()
      .catch((err: unknown) => {
        if (err instanceof StaleFenceError) this.#log.warn({ err: err.message }, 'stopped draining the inbox: no longer the leader');
        else this.#log.error({ err }, 'draining the inbox failed; retrying at the next poll');
      })
      .finally(() => {
        this.#draining = undefined;
      });
  }

  #ownerOrThrow(): LoopOwner {
    if (!this.#owner) throw new Error('the loop is not built yet: nothing was recorded');
    return this.#owner;
  }

  async #drainNow(): Promise<void> {
    this.#handled += await this.#items.drain(
      (item) => this.#handle(item),
      this.fence,
      // Given up on (it failed every attempt): its sender here hears why, instead of waiting on.
      (item, err) => this.#waiters.get(item.id)?.reject(err),
    );
  }

  async #handle(item: InboxItem): Promise<void> {
    const owner = this.#ownerOrThrow();
    const intake = (await owner.handle(itemIntents(item), { txId: `handle:${item.id}` })).map(intakeOf);
    const waiter = this.#waiters.get(item.id);
    if (waiter) {
      this.#waiters.delete(item.id);
      waiter.resolve(intake);
    } else if (item.kind === 'intents' && item.reply === true && item.from !== this.id) {
      // Not waited for: the sender finds it, or it expires.
      void this.#o.store.setExpiring?.(replyKey(item.id), intake, REPLY_TTL_MS).catch((err: unknown) => {
        this.#log.warn({ err, item: item.id }, 'could not leave an outcome for the replica that recorded the item; it answers `queued`');
      });
    }
  }

  /**
   * The outcome of item `id`: handed over by this process's own drain, or left in the store by
   * the leader elsewhere; `[]` (read as `queued`) when neither came within the wait.
   */
  #waitFor(id: string): Promise<Intake[]> {
    const { clock, store } = this.#o;
    const waitMs = this.#o.replyWaitMs ?? this.#o.leaseTtlMs;
    return new Promise<Intake[]>((resolve, reject) => {
      const deadline = clock.now().getTime() + waitMs;
      let timer: Timer | undefined;
      const done = (intake: Intake[]): void => {
        clock.clearTimeout(timer);
        this.#waiters.delete(id);
        resolve(intake);
      };
      this.#waiters.set(id, {
        resolve: done,
        reject: (err) => {
          clock.clearTimeout(timer);
          this.#waiters.delete(id);
          reject(err);
        },
      });
      const look = (): void => {
        if (!this.#waiters.has(id)) return;
        void store.get<Intake[]>(replyKey(id)).then((left) => {
          if (!this.#waiters.has(id)) return;
          if (Array.isArray(left)) {
            void store.delete(replyKey(id)).catch(() => undefined);
            done(left);
          } else later();
        }, later);
      };
      // The leader in this process hands the outcome over however long it takes; a follower waits a failover's time.
      const later = (): void => {
        if (!this.isLeader && clock.now().getTime() >= deadline) done([]);
        else timer = clock.setTimeout(look, REPLY_POLL_MS).unref();
      };
      timer = clock.setTimeout(look, REPLY_POLL_MS).unref();
    });
  }
}

/**
 * An item's id: a chat event's own id (every replica syncing Matrix records the same event as
 * one item), else a fresh one.
 */
function itemId(intents: readonly Intent[]): string {
  const [only] = intents;
  if (intents.length === 1 && only && 'eventId' in only && typeof only.eventId === 'string' && 'actor' in only) return `chat:${only.actor.via}:${only.eventId}`;
  return randomUUID();
}
