import type { MessageRef } from '../core/chat/chat-types.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../core/chat/thread-view.js';
import type { OutboxOp } from '../core/ledger-events.js';

/** One message a surface took, as sent (people's names filled in). */
export interface SentMessage {
  transport: string;
  op: OutboxOp;
  /** The thread root on that surface (for a post: the message it became). */
  root?: MessageRef;
  triggerKey?: string;
  /** A post's or an update's card, a reply's view, an answer's private view. */
  view: CardView | ReplyView | EphemeralView;
  /** A post's detail, where the surface shows it with the card. */
  detail?: DetailView;
}

/**
 * `REPRISE_TRANSCRIPT`: every message any surface took, recorded right after the surface
 * accepted it (before the outbox records it delivered). An implementation must not throw.
 */
export interface Transcript {
  record(m: SentMessage): void;
}
