/**
 * Hands translated Slack payloads to the bot's sink within Slack's 3-second window: the sink
 * is awaited up to `ackTimeoutMs`, then Slack is answered anyway (and the sink's late failure
 * logged). A double click — the same user, control, value and card within `doubleClickMs` —
 * is acknowledged and dropped here; every event still carries Slack's id for the bot's own
 * duplicate check (Slack retries, replays after a restart).
 */
import type { ChatIntent, IntentSink } from '../../core/chat/chat-types.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { Translation } from './to-intent.js';

export type Outcome = { kind: 'taken' } | { kind: 'late' } | { kind: 'skipped'; reason: string } | { kind: 'failed'; err: unknown };

export interface InboundOptions {
  log: Logger;
  clock: Clock;
  ackTimeoutMs: number;
  doubleClickMs: number;
}

/** Remembered clicks beyond this are pruned (a window of seconds never needs more). */
const MAX_CLICKS = 1000;

export class Inbound {
  sink: IntentSink | undefined;
  readonly #opts: InboundOptions;
  readonly #clicks = new Map<string, number>();

  constructor(opts: InboundOptions) {
    this.#opts = opts;
  }

  async take(t: Translation, context: Record<string, unknown>, opts: { debounce?: boolean } = {}): Promise<Outcome> {
    const log = typeof context['requestId'] === 'string' ? this.#opts.log.child({ requestId: context['requestId'] }) : this.#opts.log;
    if ('skip' in t) {
      log.debug({ reason: t.skip }, 'slack payload is not for the bot');
      return { kind: 'skipped', reason: t.skip };
    }
    const ev = t.intent;
    const fields = { eventId: ev.eventId, type: ev.type, user: ev.actor.id };
    if (opts.debounce && this.#doubleClick(ev)) {
      log.info(fields, 'double click: acknowledged, counted once');
      return { kind: 'skipped', reason: 'double click' };
    }
    const sink = this.sink;
    if (!sink) return { kind: 'failed', err: new Error('the Slack transport has no sink: start() was not called') };

    const taking = sink(ev);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.#opts.ackTimeoutMs);
    });
    try {
      const r = await Promise.race([taking.then(() => 'taken' as const), late]);
      if (r === 'late') {
        log.warn(fields, `the bot took longer than ${this.#opts.ackTimeoutMs} ms; acknowledged to Slack anyway`);
        taking.catch((err: unknown) => log.error({ ...fields, err }, 'the bot failed a Slack event after it was acknowledged'));
        return { kind: 'late' };
      }
      log.debug(fields, 'slack event taken');
      return { kind: 'taken' };
    } catch (err) {
      log.error({ ...fields, err }, 'the bot could not take a Slack event');
      return { kind: 'failed', err };
    } finally {
      clearTimeout(timer);
    }
  }

  /** A click is a vote or silence from the card's controls (answered through its `response_url`). */
  #doubleClick(ev: ChatIntent): boolean {
    if ((ev.type !== 'vote' && ev.type !== 'silence') || ev.replyTo?.kind !== 'response_url') return false;
    const what = ev.type === 'vote' ? ev.vote : `${ev.duration}${ev.alertmanager ? '+am' : ''}`;
    const key = `${ev.actor.id}|${ev.target.message?.channel ?? ''}|${ev.target.message?.id ?? ''}|${ev.type}|${what}`;
    const now = this.#opts.clock.now().getTime();
    const last = this.#clicks.get(key);
    this.#clicks.set(key, now);
    if (this.#clicks.size > MAX_CLICKS) {
      for (const [k, at] of this.#clicks) if (now - at > this.#opts.doubleClickMs) this.#clicks.delete(k);
    }
    return last !== undefined && now - last < this.#opts.doubleClickMs;
  }
}
