/**
 * `serve` on a store several replicas share (Redis; SPEC §8). Every replica accepts webhooks
 * and chat events and records each in the shared inbox before answering; exactly one — the
 * holder of the leader lease — runs the loop: it replays the ledger when it takes the lead,
 * works through the inbox in order, delivers the outbox and runs investigations. Losing the
 * lease stops all of that at once; the replica keeps taking webhooks as a follower.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { incidentIntents } from '../core/bot/intent.js';
import type { RepriseBot } from '../core/bot/reprise-bot.js';
import type { ChatIntent, IntentSink } from '../core/chat/chat-types.js';
import type { Ledger } from '../core/ledger/ledger.js';
import type { OutboxWorker } from '../core/outbox/outbox-worker.js';
import { Inbox, type InboxItem } from '../core/replica/inbox.js';
import { Leadership } from '../core/replica/leadership.js';
import type { Incident } from '../core/types.js';
import type { AlertmanagerHandlerResult, WebhookRoute } from '../http/create-server.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { StaleFenceError, type Fence, type KeyValueStore } from '../ports/store.js';

/** How often the leader looks for items other replicas recorded. */
const POLL_MS = 100;

/** This process, as a lease owner and in inbox items. */
export function replicaId(): string {
  return `${hostname().replace(/\|/g, '_')}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

export interface ReplicasDeps {
  store: KeyValueStore;
  ledger: Ledger;
  outbox: OutboxWorker;
  clock: Clock;
  logger: Logger;
  leaseTtlMs: number;
  /** Filled in once the bot exists (it needs the fence through the ledger first). */
  bot: () => RepriseBot;
  /** Stops queued and running investigations (the model's jobs), when there are any. */
  stopJobs: () => Promise<void>;
  /** Counted per handled incident, like the embedded path. */
  onOutcomes?: (outcomes: Awaited<ReturnType<RepriseBot['handle']>>) => void;
  /** Starts the rest of the leader's work (timers, forge work) once this replica leads. */
  onLead?: () => void;
  /** Stops it when the lead is lost. */
  onFollow?: () => Promise<void>;
}

export class Replicas {
  readonly id = replicaId();
  readonly leadership: Leadership;
  readonly inbox: Inbox;
  readonly #d: ReplicasDeps;
  readonly #log: Logger;
  #draining: Promise<void> | undefined;
  #again = false;
  #poll: NodeJS.Timeout | undefined;
  #handled = 0;

  constructor(deps: ReplicasDeps) {
    this.#d = deps;
    this.#log = deps.logger.child({ component: 'replicas', replica: this.id });
    this.inbox = new Inbox(deps.store, this.#log);
    const lease = deps.store.leaderLease?.(this.id, deps.leaseTtlMs);
    if (!lease) throw new Error('this store has no leader lease: more than one replica needs Redis (store.url redis://…)');
    this.leadership = new Leadership({
      lease,
      ttlMs: deps.leaseTtlMs,
      logger: this.#log,
      onGain: async () => {
        await deps.ledger.reload('this replica took the lead');
        await this.#drainNow();
        deps.outbox.start();
        deps.onLead?.();
      },
      onLose: async () => {
        await deps.outbox.stop();
        await deps.onFollow?.();
        await deps.stopJobs();
      },
    });
  }

  /** The fence the ledger's writes carry (undefined while following: writes refused). */
  fence = (): Fence | undefined => this.leadership.fence();

  get isLeader(): boolean {
    return this.leadership.isLeader;
  }

  async start(): Promise<void> {
    await this.leadership.start();
    this.#poll = setInterval(() => this.kick(), POLL_MS);
    this.#poll.unref();
  }

  async stop(): Promise<void> {
    if (this.#poll) clearInterval(this.#poll);
    await this.#draining;
    await this.leadership.stop();
  }

  status(): Record<string, unknown> {
    return { replica: this.id, role: this.leadership.state, handled: this.#handled };
  }

  /** The webhook: record durably in the inbox, then answer; the leader handles it. */
  readonly webhook = async (incidents: Incident[], route: WebhookRoute): Promise<AlertmanagerHandlerResult> => {
    await this.inbox.put({ id: randomUUID(), kind: 'alertmanager', incidents, route: { ...route }, at: this.#d.clock.now().toISOString(), from: this.id });
    this.kick();
    return { accepted: incidents.length };
  };

  /** The chat sink: the same hand-off; a replayed chat event (every replica syncing Matrix) is one item. */
  readonly chat: IntentSink = async (intent: ChatIntent): Promise<void> => {
    await this.inbox.put({ id: `chat:${intent.actor.via}:${intent.eventId}`, kind: 'chat', intent, at: this.#d.clock.now().toISOString(), from: this.id });
    this.kick();
  };

  /** Leader only: work through the inbox soon. */
  kick(): void {
    if (!this.leadership.isLeader) return;
    this.#again = true;
    if (this.#draining) return;
    this.#draining = (async () => {
      while (this.#again && this.leadership.isLeader) {
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

  async #drainNow(): Promise<void> {
    this.#handled += await this.inbox.drain((item) => this.#handle(item), this.fence);
  }

  async #handle(item: InboxItem): Promise<void> {
    const bot = this.#d.bot();
    // The item's id names its ledger transaction: handled again after a crash, it records nothing twice.
    const txId = `handle:${item.id}`;
    if (item.kind === 'alertmanager') {
      const outcomes = await bot.handle(incidentIntents(item.incidents, item.route), { txId });
      this.#d.onOutcomes?.(outcomes);
    } else {
      await bot.handle(item.intent, { txId });
    }
  }
}
