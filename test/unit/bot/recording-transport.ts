import { DeliveryError, type ChatIntent, type IntentSink, type Destination, type MessageRef, type ResponseTarget } from '../../../src/core/chat/chat-types.js';
import { commandIntent, parseSilenceChoice, threadReplyIntent } from '../../../src/core/chat/thread-text.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../../../src/core/chat/thread-view.js';
import type { ChatTransport, DeliveryOptions } from '../../../src/ports/chat-transport.js';

export interface RecordingTransportOptions {
  name?: string;
  inlineDetail?: boolean;
  /** Throw on every `post` (a chat API that is down); `retryable` false makes it a permanent refusal. */
  failPost?: boolean | { retryable: boolean; retryAfterMs?: number };
  /** Throw on every `reply`. */
  failReply?: boolean;
  /** Hold the Nth post (1-based), to expose reordering: until `gate` settles (the test releases it). */
  slowPost?: { nth: number; gate: Promise<unknown> };
}

export interface Recorded {
  op: 'post' | 'reply' | 'update' | 'ephemeral';
  ref?: MessageRef;
  to?: Destination | ResponseTarget;
  view: CardView | ReplyView | EphemeralView;
  detail?: DetailView;
  key?: string;
}

/**
 * A ChatTransport that records what the bot sent, in order, instead of talking to a chat
 * service. Thread roots are `t-1`, `t-2`, … in post order. Failure modes are switchable.
 */
export class RecordingTransport implements ChatTransport {
  readonly name: string;
  readonly inlineDetail: boolean;
  /** Successful deliveries, in order. */
  readonly sent: Recorded[] = [];
  /** Every call, including failed ones. */
  readonly calls: Array<{ op: Recorded['op']; key?: string }> = [];
  sink: IntentSink | undefined;
  closed = false;
  #n = 0;

  constructor(public opts: RecordingTransportOptions = {}) {
    this.name = opts.name ?? 'rec';
    this.inlineDetail = opts.inlineDetail ?? false;
  }

  get posts(): Recorded[] {
    return this.sent.filter((s) => s.op === 'post');
  }
  get replies(): Recorded[] {
    return this.sent.filter((s) => s.op === 'reply');
  }
  get updates(): Recorded[] {
    return this.sent.filter((s) => s.op === 'update');
  }
  get ephemerals(): Recorded[] {
    return this.sent.filter((s) => s.op === 'ephemeral');
  }

  async start(sink: IntentSink): Promise<void> {
    this.sink = sink;
  }

  /** A user of this surface did something: translated as an adapter would, then handed to the bot. */
  async inject(e: TestChatEvent): Promise<void> {
    const intent = testIntent(e);
    if (intent) await this.sink!(intent);
  }

  async post(to: Destination, card: CardView, detail: DetailView | undefined, o: DeliveryOptions): Promise<MessageRef> {
    this.calls.push({ op: 'post', key: o.idempotencyKey });
    const n = ++this.#n;
    const slow = this.opts.slowPost;
    if (slow?.nth === n) await slow.gate;
    const fail = this.opts.failPost;
    if (fail) throw new DeliveryError('chat API unavailable (post)', typeof fail === 'object' ? fail : { retryable: true });
    const ref = { transport: this.name, channel: to.channel, id: `t-${n}` };
    this.sent.push({ op: 'post', ref, to, view: card, ...(detail ? { detail } : {}), key: o.idempotencyKey });
    return ref;
  }

  async reply(root: MessageRef, view: ReplyView, o: DeliveryOptions): Promise<MessageRef> {
    this.calls.push({ op: 'reply', key: o.idempotencyKey });
    if (this.opts.failReply) throw new DeliveryError('chat API unavailable (reply)', { retryable: true });
    const ref = { transport: this.name, channel: root.channel, id: `${root.id}.r${++this.#n}`, thread: root.id };
    this.sent.push({ op: 'reply', ref: root, view, key: o.idempotencyKey });
    return ref;
  }

  async update(ref: MessageRef, card: CardView, o: DeliveryOptions): Promise<void> {
    this.calls.push({ op: 'update', key: o.idempotencyKey });
    this.sent.push({ op: 'update', ref, view: card, key: o.idempotencyKey });
  }

  async ephemeral(to: ResponseTarget, view: EphemeralView, _opts?: DeliveryOptions): Promise<void> {
    this.calls.push({ op: 'ephemeral' });
    this.sent.push({ op: 'ephemeral', to, view });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/**
 * What this test surface's users do, in its own words (as a real surface's payloads would be):
 * `+1` / `-1` / `no_bell` reactions, thread messages, commands, clicks on the card's controls.
 * {@link RecordingTransport.inject} translates them into intents the way every adapter does,
 * with the shared helpers (core/chat/thread-text), then hands them to the bot.
 */
export type TestChatEvent =
  | { type: 'reaction'; eventId: string; transport: string; user: { id: string; name?: string }; target: MessageRef; reaction: string; removed: boolean }
  | {
      type: 'message';
      eventId: string;
      transport: string;
      user: { id: string; name?: string };
      thread?: MessageRef;
      channel: string;
      text: string;
      addressed: boolean;
    }
  | {
      type: 'command';
      eventId: string;
      transport: string;
      user: { id: string; name?: string };
      channel: string;
      thread?: MessageRef;
      text: string;
      respond: ResponseTarget;
    }
  | {
      type: 'action';
      eventId: string;
      transport: string;
      user: { id: string; name?: string };
      action: 'vote_up' | 'vote_down' | 'silence';
      target: MessageRef;
      controlsId?: string;
      value?: string;
      respond: ResponseTarget;
    };

/** The test surface's one translation: its events as intents (undefined: means nothing to the bot). */
export function testIntent(e: TestChatEvent): ChatIntent | undefined {
  const actor = { id: e.user.id, ...(e.user.name ? { name: e.user.name } : {}), via: e.transport };
  switch (e.type) {
    case 'reaction': {
      const target = { message: e.target };
      if (e.reaction === '+1' || e.reaction === '-1')
        return { type: 'vote', eventId: e.eventId, actor, vote: e.removed ? 'clear' : e.reaction === '+1' ? 'up' : 'down', target };
      if (e.reaction === 'no_bell' && !e.removed) return { type: 'silence', eventId: e.eventId, actor, duration: '4h', target };
      return undefined;
    }
    case 'message':
      return e.addressed && e.thread ? threadReplyIntent(e.text, { eventId: e.eventId, actor, thread: e.thread }) : undefined;
    case 'command':
      return commandIntent(e.text, { eventId: e.eventId, actor, channel: e.channel, ...(e.thread ? { thread: e.thread } : {}), replyTo: e.respond });
    case 'action': {
      const target = { message: e.target, ...(e.controlsId ? { controlsId: e.controlsId } : {}) };
      if (e.action !== 'silence') return { type: 'vote', eventId: e.eventId, actor, vote: e.action === 'vote_up' ? 'up' : 'down', target, replyTo: e.respond };
      const choice = parseSilenceChoice(e.value ?? '4h');
      return {
        type: 'silence',
        eventId: e.eventId,
        actor,
        duration: choice.duration,
        ...(choice.alertmanager ? { alertmanager: true } : {}),
        target,
        replyTo: e.respond,
      };
    }
  }
}
