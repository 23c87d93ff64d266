import type { LegacyChatTransport as ChatTransport, OutboundMessage } from '../../../src/ports/chat-transport.js';

export interface RecordedMessage {
  threadId: string;
  message: OutboundMessage;
}

export interface RecordingTransportOptions {
  /** Throw on every `post` (a chat API that is down). */
  failPost?: boolean;
  /** Throw on every `reply`. */
  failReply?: boolean;
  /** Hold the Nth post (1-based) this long, to expose reordering. */
  slowPost?: { nth: number; ms: number };
}

/**
 * A ChatTransport that records what the bot sent, in order, instead of talking to a chat
 * service. Thread ids are `t-1`, `t-2`, … in post order.
 */
export class RecordingTransport implements ChatTransport {
  readonly posts: RecordedMessage[] = [];
  readonly replies: RecordedMessage[] = [];
  /** Every call, including failed ones, in arrival order. */
  readonly calls: Array<{ op: 'post' | 'reply'; message: OutboundMessage }> = [];
  closed = false;
  #n = 0;

  constructor(private readonly opts: RecordingTransportOptions = {}) {}

  async post(message: OutboundMessage): Promise<{ threadId: string }> {
    this.calls.push({ op: 'post', message });
    const n = ++this.#n;
    if (this.opts.slowPost?.nth === n) await new Promise((r) => setTimeout(r, this.opts.slowPost?.ms));
    if (this.opts.failPost) throw new Error('chat API unavailable (post)');
    const threadId = `t-${n}`;
    this.posts.push({ threadId, message });
    return { threadId };
  }

  async reply(threadId: string, message: OutboundMessage): Promise<void> {
    this.calls.push({ op: 'reply', message });
    if (this.opts.failReply) throw new Error('chat API unavailable (reply)');
    this.replies.push({ threadId, message });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
