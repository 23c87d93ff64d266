/**
 * What flows between the bot and a chat surface, independent of any SDK (SPEC §9). Transports
 * translate their wire formats to and from these types; nothing here knows Slack or Matrix.
 */

/** A chat surface's name: `console`, `slack`, `matrix`. */
export type TransportName = string;

/** Where a message goes: a channel (Slack channel id, Matrix room id, `console`). */
export interface Destination {
  transport: TransportName;
  channel: string;
}

/**
 * A message the bot sent (or a thread root), as the surface names it: Slack `{channel, ts}`,
 * Matrix `{room, event_id}`, the console's thread id. `thread` is the root it belongs to when
 * the message is itself a reply.
 */
export interface MessageRef {
  transport: TransportName;
  channel: string;
  id: string;
  thread?: string;
}

/** Who did something in chat. `id` is the surface's stable id (Slack `U…`, Matrix `@u:hs`). */
export interface ChatUser {
  id: string;
  /** A display name when the surface gave one (never trusted as markup). */
  name?: string;
}

/** How to answer a command or a button click privately, later. */
export type ResponseTarget =
  { kind: 'response_url'; url: string } | { kind: 'ephemeral'; channel: string; user: string; thread?: string } | { kind: 'thread'; ref: MessageRef };

/** The bot's own control buttons (Slack) and reactions (Matrix) mean one of these. */
export type ControlAction = 'vote_up' | 'vote_down' | 'silence';

/**
 * Everything a transport hands the bot. Every event carries the surface's id for it
 * (`eventId`): Slack retries, Matrix replays and double clicks are recognised by it.
 */
export type ChatEvent =
  | {
      type: 'reaction';
      eventId: string;
      transport: TransportName;
      user: ChatUser;
      /** The message reacted to (only the bot's own messages count). */
      target: MessageRef;
      /** Normalised: 👍 `+1`, 👎 `-1`, 🔕 `no_bell`; anything else is passed as the surface named it. */
      reaction: string;
      removed: boolean;
    }
  | {
      type: 'message';
      eventId: string;
      transport: TransportName;
      user: ChatUser;
      /** The thread root the message replied to (absent for a top-level message). */
      thread?: MessageRef;
      channel: string;
      /** Plain text, mentions of the bot stripped (never rendered back raw). */
      text: string;
      /** True when the bot was addressed (a mention, or `!reprise` on Matrix). */
      addressed: boolean;
    }
  | {
      type: 'command';
      eventId: string;
      transport: TransportName;
      user: ChatUser;
      channel: string;
      /** The thread the command was typed in, when the surface knows. */
      thread?: MessageRef;
      /** Everything after `/reprise` (or `!reprise`). */
      text: string;
      respond: ResponseTarget;
    }
  | {
      type: 'action';
      eventId: string;
      transport: TransportName;
      user: ChatUser;
      action: ControlAction;
      /** The card the control sits on. */
      target: MessageRef;
      /** The card's `controlsId`, as the control carried it (button value / block id). */
      controlsId?: string;
      /** Silence duration (`1h`, `4h`, `24h`) for `silence`. */
      value?: string;
      respond: ResponseTarget;
    };

/** Where a transport hands inbound events; resolves once the bot has recorded what it must. */
export type ChatEventSink = (event: ChatEvent) => Promise<void>;

/**
 * A delivery that failed. `retryable` with `retryAfterMs` when the surface said when to come
 * back (HTTP 429 `Retry-After`, Matrix `M_LIMIT_EXCEEDED` `retry_after_ms`); not retryable when
 * retrying cannot help (an unknown channel, a revoked token): the outbox gives up at once.
 */
export class DeliveryError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, opts: { retryable: boolean; retryAfterMs?: number; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DeliveryError';
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
  }
}
