import { DeliveryError, type ChatEventSink, type Destination, type MessageRef, type ResponseTarget } from '../../../src/core/chat/chat-types.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../../../src/core/chat/thread-view.js';
import type { ChatTransport, DeliveryOptions } from '../../../src/ports/chat-transport.js';

export interface RecordingTransportOptions {
  name?: string;
  inlineDetail?: boolean;
  /** Throw on every `post` (a chat API that is down); `retryable` false makes it a permanent refusal. */
  failPost?: boolean | { retryable: boolean; retryAfterMs?: number };
  /** Throw on every `reply`. */
  failReply?: boolean;
  /** Hold the Nth post (1-based) this long, to expose reordering. */
  slowPost?: { nth: number; ms: number };
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
  sink: ChatEventSink | undefined;
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

  async start(sink: ChatEventSink): Promise<void> {
    this.sink = sink;
  }

  async post(to: Destination, card: CardView, detail: DetailView | undefined, o: DeliveryOptions): Promise<MessageRef> {
    this.calls.push({ op: 'post', key: o.idempotencyKey });
    const n = ++this.#n;
    if (this.opts.slowPost?.nth === n) await new Promise((r) => setTimeout(r, this.opts.slowPost?.ms));
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

  async ephemeral(to: ResponseTarget, view: EphemeralView): Promise<void> {
    this.calls.push({ op: 'ephemeral' });
    this.sent.push({ op: 'ephemeral', to, view });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
