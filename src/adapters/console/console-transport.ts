import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ChatIntent, Destination, IntentSink, MessageRef, ResponseTarget } from '../../core/chat/chat-types.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../../core/chat/thread-view.js';
import { escapeLine } from '../../core/render/escape-text.js';
import type { Answer } from '../../core/types.js';
import type { ChatTransport, DeliveryOptions } from '../../ports/chat-transport.js';
import { renderConsoleEphemeral, renderConsoleReply, renderConsoleThread, renderConsoleCard } from './render-console.js';

export interface ConsoleTransportOptions {
  /** Where the human-readable thread goes (stdout in `serve`). */
  write: (text: string) => void;
  /** `REPRISE_TRANSCRIPT`: every outbound message appended as one JSON line. */
  transcriptFile?: string;
  /**
   * Distinguishes this process's threads from earlier runs' (ids are stored in the ledger and
   * replied into after a restart). Default: the start time in base 36.
   */
  runId?: string;
}

/** One line of the transcript file, the console transport's machine-readable output. */
export interface TranscriptLine {
  threadId: string;
  /** `rca` (a thread root), `detail`, a notice's topic (`resolved`, `silenced`, `note`, …), `update`, `ephemeral`. */
  kind: string;
  triggerKey: string;
  answer: Answer | null;
  text: string;
}

function answerOf(card: CardView): Answer | null {
  const h = card.headline;
  if (h.answer === 'none' || h.entry === undefined) return null;
  return { kind: h.answer === 'instant' ? 'incident' : 'runbook', entry: h.entry, confidence: h.confidence ?? 0 };
}

/**
 * Local chat surface: a thread root is printed as a boxed block holding the card and the whole
 * analysis; replies, card updates and private answers are indented under their thread id. The
 * transcript is appended synchronously so a test that reads it right after delivery sees it.
 * Inbound, {@link inject} hands the bot what a person meant, as a chat surface would (tests; the
 * CLI has its own control socket).
 */
export class ConsoleTransport implements ChatTransport {
  readonly name = 'console';
  readonly inlineDetail = true;
  #seq = 0;
  readonly #opts: ConsoleTransportOptions;
  readonly #runId: string;
  readonly #triggers = new Map<string, string>();
  #sink: IntentSink | undefined;

  constructor(opts: ConsoleTransportOptions) {
    this.#opts = opts;
    this.#runId = opts.runId ?? Date.now().toString(36);
    if (opts.transcriptFile) mkdirSync(dirname(opts.transcriptFile), { recursive: true });
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
    this.#triggers.set(threadId, card.triggerKey);
    this.#record({ threadId, kind: 'rca', triggerKey: card.triggerKey, answer: answerOf(card), text });
    return { transport: this.name, channel: to.channel, id: threadId };
  }

  async reply(root: MessageRef, view: ReplyView, _opts: DeliveryOptions): Promise<MessageRef> {
    const text = renderConsoleReply(view);
    this.#opts.write(`  ↳ [${escapeLine(root.id)}] ${text.replace(/\n/g, '\n    ')}\n`);
    const kind = view.kind === 'notice' ? view.topic : 'detail';
    this.#record({ threadId: root.id, kind, triggerKey: this.#triggers.get(root.id) ?? (view.kind === 'detail' ? view.triggerKey : ''), answer: null, text });
    return { transport: this.name, channel: root.channel, id: `${root.id}.${++this.#seq}`, thread: root.id };
  }

  async update(ref: MessageRef, card: CardView, _opts: DeliveryOptions): Promise<void> {
    const text = renderConsoleCard(card).join('\n');
    this.#opts.write(`  ↳ [${escapeLine(ref.id)}] card now: ${text.replace(/\n/g, '\n    ')}\n`);
    this.#record({ threadId: ref.id, kind: 'update', triggerKey: card.triggerKey, answer: answerOf(card), text });
  }

  async ephemeral(to: ResponseTarget, view: EphemeralView, _opts: DeliveryOptions): Promise<void> {
    const who = to.kind === 'ephemeral' ? to.user : to.kind === 'thread' ? to.ref.id : 'requester';
    const text = renderConsoleEphemeral(view);
    this.#opts.write(`  ↳ (only for ${escapeLine(who)}) ${text.replace(/\n/g, '\n    ')}\n`);
    this.#record({ threadId: to.kind === 'thread' ? to.ref.id : '', kind: 'ephemeral', triggerKey: '', answer: null, text });
  }

  async close(): Promise<void> {}

  #record(line: TranscriptLine): void {
    if (!this.#opts.transcriptFile) return;
    // The transcript holds alert text and notes: created owner-only, whatever the umask.
    appendFileSync(this.#opts.transcriptFile, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  }
}

function prefix(text: string, p: string): string {
  return text
    .split('\n')
    .map((l) => p + l)
    .join('\n');
}
