import type { ChatIntent, Destination, IntentSink, MessageRef, ResponseTarget } from '../../core/chat/chat-types.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../../core/chat/thread-view.js';
import { escapeLine } from '../../core/render/escape-text.js';
import type { ChatTransport, DeliveryOptions } from '../../ports/chat-transport.js';
import { renderConsoleEphemeral, renderConsoleReply, renderConsoleThread, renderConsoleCard } from './render-console.js';

export interface ConsoleTransportOptions {
  /** Where the human-readable thread goes (stdout in `serve`). */
  write: (text: string) => void;
  /**
   * Distinguishes this process's threads from earlier runs' (ids are stored in the ledger and
   * replied into after a restart). Default: the start time in base 36.
   */
  runId?: string;
}

/**
 * Local chat surface: a thread root is printed as a boxed block holding the card and the whole
 * analysis; replies, card updates and private answers are indented under their thread id (the
 * transcript of every surface is the outbox's: adapters/console/transcript-file.ts).
 * Inbound, {@link inject} hands the bot what a person meant, as a chat surface would (tests; the
 * CLI has its own control socket).
 */
export class ConsoleTransport implements ChatTransport {
  readonly name = 'console';
  readonly inlineDetail = true;
  #seq = 0;
  readonly #opts: ConsoleTransportOptions;
  readonly #runId: string;
  #sink: IntentSink | undefined;

  constructor(opts: ConsoleTransportOptions) {
    this.#opts = opts;
    this.#runId = opts.runId ?? Date.now().toString(36);
  }

  async start(sink: IntentSink): Promise<void> {
    this.#sink = sink;
  }

  /** Hands an intent to the bot as a chat surface would. */
  async inject(intent: ChatIntent): Promise<void> {
    if (!this.#sink) throw new Error('console transport not started');
    await this.#sink(intent);
  }

  async post(to: Destination, card: CardView, detail: DetailView | undefined, _opts: DeliveryOptions): Promise<MessageRef> {
    const threadId = `console-${this.#runId}-${++this.#seq}`;
    const bar = '─'.repeat(72);
    const text = renderConsoleThread(card, detail);
    this.#opts.write(`\n┌${bar}\n│ thread ${threadId}\n${prefix(text, '│ ')}\n└${bar}\n`);
    return { transport: this.name, channel: to.channel, id: threadId };
  }

  async reply(root: MessageRef, view: ReplyView, _opts: DeliveryOptions): Promise<MessageRef> {
    const text = renderConsoleReply(view);
    this.#opts.write(`  ↳ [${escapeLine(root.id)}] ${text.replace(/\n/g, '\n    ')}\n`);
    return { transport: this.name, channel: root.channel, id: `${root.id}.${++this.#seq}`, thread: root.id };
  }

  async update(ref: MessageRef, card: CardView, _opts: DeliveryOptions): Promise<void> {
    const text = renderConsoleCard(card).join('\n');
    this.#opts.write(`  ↳ [${escapeLine(ref.id)}] card now: ${text.replace(/\n/g, '\n    ')}\n`);
  }

  async ephemeral(to: ResponseTarget, view: EphemeralView, _opts: DeliveryOptions): Promise<void> {
    const who = to.kind === 'ephemeral' ? to.user : to.kind === 'thread' ? to.ref.id : 'requester';
    const text = renderConsoleEphemeral(view);
    this.#opts.write(`  ↳ (only for ${escapeLine(who)}) ${text.replace(/\n/g, '\n    ')}\n`);
  }

  async close(): Promise<void> {}
}

function prefix(text: string, p: string): string {
  return text
    .split('\n')
    .map((l) => p + l)
    .join('\n');
}
