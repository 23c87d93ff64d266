/**
 * The hand-off between replicas (SPEC §8): every replica records what it accepts — the intents
 * of a webhook, a chat event, a CLI request — in one shared log before it answers; the leader
 * works through the log in order (see `SharedInbox`). The cursor (the last item handled) is written with the leader's fence, so a
 * replica that lost the lead cannot move it; an item handled again after a crash is recognised
 * by its id (the ledger transaction carries it), so nothing is counted twice.
 */
import { incidentIntents, type Intent } from '../bot/intent.js';
import type { ChatIntent } from '../chat/chat-types.js';
import type { Incident } from '../types.js';
import type { Logger } from '../../ports/logger.js';
import { CorruptRecordError, logKey, StaleFenceError, type Fence, type KeyValueStore, type LogKeys } from '../../ports/store.js';

export const INBOX_LOG: LogKeys = { headKey: 'inbox:head', prefix: 'inbox:item:', pad: 12 };
export const INBOX_CURSOR = 'inbox:cursor';

interface ItemBase {
  /** Unique; the idempotency key of the item and of the ledger transaction that handles it. */
  id: string;
  /** When the replica accepted it. */
  at: string;
  /** The replica that accepted it. */
  from: string;
}
export type InboxItem =
  /** `reply`: the sender waits for the outcome, which the leader leaves for it under {@link replyKey}. */
  | (ItemBase & { kind: 'intents'; intents: Intent[]; reply?: boolean })
  /** What builds before the one inbox wrote (a rolling upgrade): still read. */
  | (ItemBase & { kind: 'alertmanager'; incidents: Incident[]; route: { channel?: string; room?: string } })
  | (ItemBase & { kind: 'chat'; intent: ChatIntent });

/** The intents an item carries, whichever build wrote it. */
export function itemIntents(item: InboxItem): Intent[] {
  if (item.kind === 'intents') return item.intents;
  if (item.kind === 'alertmanager') return incidentIntents(item.incidents, item.route);
  return [item.intent];
}

/** Where the leader leaves the outcome of an item whose sender (another replica) waits for it. */
export function replyKey(id: string): string {
  return `inbox:reply:${id}`;
}

/** Items read per store round-trip while draining. */
const BATCH = 100;
/** A handler failing this often on one item skips it (logged): one bad item never blocks the rest. */
const MAX_ATTEMPTS = 3;

export class InboxLog {
  readonly #store: KeyValueStore;
  readonly #log: Logger;
  readonly #attempts = new Map<number, number>();

  constructor(store: KeyValueStore, logger: Logger) {
    this.#store = store;
    this.#log = logger;
  }

  /** Records `item` durably; resolves once it is (the caller answers after). Idempotent by id. */
  put(item: InboxItem): Promise<number> {
    return this.#store.appendLog(INBOX_LOG, [item], { id: `inbox-put:${item.id}` });
  }

  /** Items recorded and not yet handled (readiness detail, metrics). */
  async lag(): Promise<number> {
    const [head, cursor] = await this.#store.getMany<number>([INBOX_LOG.headKey, INBOX_CURSOR]);
    return Math.max(0, (head ?? 0) - (cursor ?? 0));
  }

  /**
   * Hands every item after the cursor to `handle`, in order, moving the cursor after each; an
   * item that fails every attempt is skipped (logged, and told to `onSkipped`).
   * Stops (rethrowing) when the fence goes stale or the store fails: the next leader, or the
   * next drain, carries on from the cursor. Resolves with how many items were handled.
   */
  async drain(
    handle: (item: InboxItem) => Promise<void>,
    fence: () => Fence | undefined,
    onSkipped?: (item: InboxItem, err: unknown) => void,
  ): Promise<number> {
    const [head, cursor] = await this.#store.getMany<number>([INBOX_LOG.headKey, INBOX_CURSOR]);
    let at = cursor ?? 0;
    const last = head ?? 0;
    let handled = 0;
    while (at < last) {
      const seqs: number[] = [];
      for (let s = at + 1; s <= Math.min(last, at + BATCH); s++) seqs.push(s);
      const items = await this.#read(seqs);
      let done = at;
      try {
        for (let i = 0; i < seqs.length; i++) {
          const seq = seqs[i]!;
          const item = items[i];
          if (item === undefined) this.#log.error({ seq }, `inbox item #${seq} is missing or unreadable; skipped`);
          else {
            try {
              await handle(item);
              handled += 1;
            } catch (err) {
              if (err instanceof StaleFenceError) throw err;
              const tries = (this.#attempts.get(seq) ?? 0) + 1;
              if (tries < MAX_ATTEMPTS) {
                this.#attempts.set(seq, tries);
                throw err;
              }
              this.#log.error({ err, seq, id: item.id }, `inbox item #${seq} failed ${tries} times; skipped`);
              onSkipped?.(item, err);
            }
            this.#attempts.delete(seq);
          }
          done = seq;
        }
      } finally {
        // The cursor moves once per batch: an item handled again after a crash is recognised
        // by its id, so this only bounds the repeat work, never what is counted.
        if (done > at) await this.#advance(at, done, fence);
      }
      at = done;
    }
    return handled;
  }

  /** Moves the cursor from `from` to `to` with the fence, then drops the items it passed. */
  async #advance(from: number, to: number, fence: () => Fence | undefined): Promise<void> {
    const f = fence();
    if (!f) throw new StaleFenceError(undefined);
    await (this.#store.setFenced ? this.#store.setFenced(INBOX_CURSOR, to, f) : this.#store.set(INBOX_CURSOR, to));
    // Handled and past the cursor: nobody reads them again (not waited for: only space).
    for (let s = from + 1; s <= to; s++) void this.#store.delete(logKey(INBOX_LOG, s)).catch(() => undefined);
  }

  async #read(seqs: readonly number[]): Promise<Array<InboxItem | undefined>> {
    const keys = seqs.map((s) => logKey(INBOX_LOG, s));
    try {
      return (await this.#store.getMany<InboxItem>(keys)).map((v) => (isItem(v) ? v : undefined));
    } catch (err) {
      if (!(err instanceof CorruptRecordError)) throw err;
      const out: Array<InboxItem | undefined> = [];
      for (const k of keys)
        out.push(
          await this.#store.get<InboxItem>(k).then(
            (v) => (isItem(v) ? v : undefined),
            () => undefined,
          ),
        );
      return out;
    }
  }
}

function isItem(v: unknown): v is InboxItem {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  if (typeof o['id'] !== 'string') return false;
  if (o['kind'] === 'intents') return Array.isArray(o['intents']);
  if (o['kind'] === 'alertmanager') return Array.isArray(o['incidents']);
  // An item an older build wrote (`event`, a raw chat event) is not an intent: skipped like any unreadable item.
  if (o['kind'] === 'chat') return typeof o['intent'] === 'object' && o['intent'] !== null;
  return false;
}
