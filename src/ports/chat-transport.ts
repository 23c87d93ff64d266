import type { Destination, IntentSink, MessageRef, ResponseTarget, TransportName } from '../core/chat/chat-types.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../core/chat/thread-view.js';

/** What one delivery carries besides the message: the outbox id, for idempotent retries. */
export interface DeliveryOptions {
  /**
   * Stable across retries of the same outbox item: Matrix uses it as the transaction id, so a
   * retried send is not a second message. Surfaces without idempotent sends may ignore it.
   */
  idempotencyKey: string;
}

/**
 * A chat surface (Slack, Matrix, console) behind one interface, with both halves: `start`
 * hands what people mean (from reactions, thread replies, commands, button clicks) to the bot's sink;
 * the rest sends. Sends throw {@link DeliveryError} (core/chat/chat-types) when they fail, saying
 * whether and when a retry may help; the outbox does the retrying.
 */
export interface ChatTransport {
  readonly name: TransportName;
  /**
   * True when the surface shows the whole analysis in the root message (the console): `post`
   * then receives the detail too, and no separate detail reply is sent.
   */
  readonly inlineDetail: boolean;
  /**
   * Begin receiving. Inbound events are translated — once, here — into what the person meant
   * (votes, silences, notes, commands), handed to `sink`, and acknowledged to the surface.
   */
  start(sink: IntentSink): Promise<void>;
  /** Post a thread root (the card; with `detail` when {@link inlineDetail}) in `to.channel`. */
  post(to: Destination, card: CardView, detail: DetailView | undefined, opts: DeliveryOptions): Promise<MessageRef>;
  /** Reply inside the thread of `root`. */
  reply(root: MessageRef, view: ReplyView, opts: DeliveryOptions): Promise<MessageRef>;
  /** Rewrite a card the bot posted (its state changed). */
  update(ref: MessageRef, card: CardView, opts: DeliveryOptions): Promise<void>;
  /**
   * What this bot sent in a channel (or in one thread of it) since `since`, by the idempotency
   * key each message carried (oldest first: a key can show more than once when two processes
   * sent the same item): how the outbox settles a post or reply whose outcome it never
   * learnt (a timeout, a reset, a crash or a failover between the send and its record) before
   * sending it again. Absent when the surface's sends are idempotent by themselves (Matrix
   * transaction ids) or it keeps no history (the console).
   */
  find?(where: { channel: string; thread?: string }, since: Date): Promise<ReadonlyMap<string, readonly MessageRef[]>>;
  /**
   * Take back a message this bot posted (a duplicate of one the ledger records: a send that
   * went out after its process lost the lead). A message already gone is not an error.
   * Absent where {@link find} is (nothing to take back).
   */
  remove?(ref: MessageRef): Promise<void>;
  /**
   * A link a person can open to the message `ref` names (a thread root), for the memory view:
   * Slack's `chat.getPermalink`, a Matrix `matrix.to` link. Undefined when the surface cannot
   * say; absent where it has no links (the console).
   */
  permalink?(ref: { channel: string; id: string }): Promise<string | undefined>;
  /** Answer one user privately (a command's answer, a click's acknowledgement); the outbox delivers it. */
  ephemeral(to: ResponseTarget, view: EphemeralView, opts: DeliveryOptions): Promise<void>;
  close(): Promise<void>;
}
