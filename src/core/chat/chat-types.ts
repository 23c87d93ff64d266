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

/** Who did something, and through which surface (`slack`, `matrix`, `console`, `cli`). */
export interface Actor {
  /** The surface's stable id (Slack `U…`, Matrix `@u:hs`, the CLI's user name). */
  id: string;
  /** A display name, when the surface gave one (never trusted as markup). */
  name?: string;
  via: TransportName;
}

/**
 * What a vote, silence or note points at: a message the bot sent (and, on a Slack card, the
 * card's `controlsId` its control carried), or a trigger key (the CLI). The bot finds the thread.
 */
export interface Target {
  message?: MessageRef;
  controlsId?: string;
  triggerKey?: string;
  /** An alert by its fingerprint (a PagerDuty incident's webhook): the thread it fired. */
  fingerprint?: string;
}

/** How to answer a command or a button click privately, later. */
export type ResponseTarget =
  { kind: 'response_url'; url: string } | { kind: 'ephemeral'; channel: string; user: string; thread?: string } | { kind: 'thread'; ref: MessageRef };

/**
 * What a person meant in chat (SPEC §9), as each surface's adapter translates it — once, in
 * the adapter: no emoji names, button ids or SDK shapes reach the bot. Every intent carries the
 * surface's id for the event it came from (`eventId`): Slack retries, Matrix re-reads and double
 * clicks are recognised by it.
 */
export type ChatIntent =
  | { type: 'vote'; eventId: string; actor: Actor; vote: 'up' | 'down' | 'clear'; target: Target; replyTo?: ResponseTarget }
  | {
      type: 'silence';
      eventId: string;
      actor: Actor;
      /** `1h`, `4h`, `24h`… (checked by the bot). */
      duration: string;
      /** Silence the alert in Alertmanager too. */
      alertmanager?: boolean;
      target: Target;
      replyTo?: ResponseTarget;
    }
  | { type: 'note'; eventId: string; actor: Actor; text: string; target: Target }
  /** What fixed it (`fixed: …`): an Incident entry draft for the catalog (issue 21 item 4). */
  | { type: 'fixed'; eventId: string; actor: Actor; text: string; target: Target }
  /** A mention in an incident thread that is no verb: a question, answered in the thread (issue 21 item 3). */
  | { type: 'question'; eventId: string; actor: Actor; text: string; target: Target }
  /** `postmortem` in an incident thread: a postmortem draft of it (issue 21 item 5). */
  | { type: 'postmortem'; eventId: string; actor: Actor; target: Target }
  /** "I'm on it" (👀, the card's On it button, `ack` in the thread): never a silence, never a vote. */
  | { type: 'ack'; eventId: string; actor: Actor; target: Target; replyTo?: ResponseTarget }
  | {
      type: 'command';
      eventId: string;
      actor: Actor;
      /** The command word, lower-case (`recall`, `status`…); the bot says when it knows no such command. */
      name: string;
      /** Everything after it, trimmed. */
      args: string;
      channel: string;
      /** The thread the command was typed in, when the surface knows. */
      thread?: MessageRef;
      replyTo: ResponseTarget;
    };

/** Where a transport hands what people meant; resolves once the bot has recorded what it must. */
export type IntentSink = (intent: ChatIntent) => Promise<void>;

/**
 * A delivery that failed. `retryable` with `retryAfterMs` when the surface said when to come
 * back (HTTP 429 `Retry-After`, Matrix `M_LIMIT_EXCEEDED` `retry_after_ms`); not retryable when
 * retrying cannot help (an unknown channel, a revoked token): the outbox gives up at once.
 */
export class DeliveryError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  /**
   * The surface may have acted on the request anyway (a timeout, a reset connection, a 5xx):
   * a send that is not idempotent is looked up before it is made again.
   */
  readonly outcomeUnknown: boolean;
  constructor(message: string, opts: { retryable: boolean; retryAfterMs?: number; outcomeUnknown?: boolean; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DeliveryError';
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
    this.outcomeUnknown = opts.outcomeUnknown ?? false;
  }
}
