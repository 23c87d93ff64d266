import type { Answer } from '../core/types.js';

/** What the bot says, independent of any chat SDK. */
export interface OutboundMessage {
  /** `rca` opens a thread; `resolved`, `note`, `status` are replies in it. */
  kind: 'rca' | 'resolved' | 'note' | 'status' | 'silenced';
  triggerKey: string;
  answer: Answer | null;
  /** Plain text / markdown rendering of the message. */
  text: string;
}

/** A chat surface (Slack, Matrix, console) behind one interface. */
export interface ChatTransport {
  /** Start a thread; resolves with its id. */
  post(message: OutboundMessage): Promise<{ threadId: string }>;
  /** Reply inside an existing thread. */
  reply(threadId: string, message: OutboundMessage): Promise<void>;
  close(): Promise<void>;
}
