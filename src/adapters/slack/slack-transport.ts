/**
 * Slack as a {@link ChatTransport}, on a Bolt `App`: HTTP mode (events, interactivity and
 * slash commands on the bot's own port, through {@link HonoReceiver}) or Socket Mode when an
 * app-level token is given (no public ingress). Inbound payloads become intents (what the person meant) for
 * the bot's sink; sends go through the App's Web API client and fail as DeliveryErrors.
 * Over 450 lines on purpose: it is the one adapter between the Slack API and the ChatTransport
 * port — receiver, sends, edits, lookups for exactly-once, permalinks and user names — and each
 * part is small; split it when a part grows its own state.
 */
import { LRUCache } from 'lru-cache';
import { App, SocketModeReceiver, type webApi } from '@slack/bolt';
import type { Destination, IntentSink, MessageRef, ResponseTarget } from '../../core/chat/chat-types.js';
import { DeliveryError } from '../../core/chat/chat-types.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../../core/chat/thread-view.js';
import type { HttpApp } from '../../http/create-server.js';
import type { ChatTransport, DeliveryOptions } from '../../ports/chat-transport.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { boltLogger } from './bolt-logger.js';
import { responseUrlError, toDeliveryError } from './delivery-error.js';
import { HonoReceiver } from './hono-receiver.js';
import { renderCard, renderEphemeral, renderReply } from './render-slack.js';
import { ACTION_IDS } from './slack-controls.js';
import { fromBlockAction, fromCommand, fromMention, fromMessage, fromReaction, TRANSPORT, type SlackSelf, type Translation } from './to-intent.js';
import { Inbound, type Outcome } from './inbound.js';

export interface SlackTransportOptions {
  /** `SLACK_BOT_TOKEN` (xoxb-…). */
  botToken: string;
  /** `SLACK_SIGNING_SECRET`: HTTP mode, requests on `POST <path>` of the bot's port. */
  signingSecret?: string;
  /** `SLACK_APP_TOKEN` (xapp-…): Socket Mode, no public ingress. Wins over the signing secret. */
  appToken?: string;
  /** `SLACK_API_URL`: the Web API base. Default `https://slack.com/api/`. */
  apiUrl?: string;
  /** `SLACK_CHANNEL`: where a destination without a channel goes. */
  defaultChannel: string;
  logger: Logger;
  /** Time for signature checks and double-click detection. */
  clock?: Clock;
  /**
   * Retries of one Web API call inside the client. Default 0: a post is not idempotent, and the
   * outbox retries across calls — looking the message up first when an attempt's outcome is unknown.
   */
  retries?: number;
  /** How many pages of 200 messages a lookup reads back (a Slack outage longer than that may show a card twice). Default 5. */
  lookupPages?: number;
  /**
   * Checked right before each request that posts or changes a message (a replica: its lease is
   * held with margin) — as late as a send can be stopped; refused, the outbox tries again later.
   */
  mayDeliver?: () => boolean;
  /** Deadline of one Web API or `response_url` call. Default 10 s. */
  requestTimeoutMs?: number;
  /** How long Slack's answer waits for the bot's sink before acknowledging anyway. Default 2 s (Slack allows 3). */
  ackTimeoutMs?: number;
  /** The same user clicking the same control on the same card within this window counts once. Default 1.5 s. */
  doubleClickMs?: number;
  /** Slash command name. Default `/reprise`. */
  command?: string;
  /** HTTP mode route. Default `/slack/events`. */
  path?: string;
  /** Largest request body accepted on the route. Default 1 MiB. */
  bodyLimitBytes?: number;
  /** Socket Mode reconnects after a failed start every this many ms. Default 10 s. */
  reconnectMs?: number;
}

export interface SlackTransportHandle {
  transport: SlackTransport;
  /** HTTP mode only: adds the Slack route to the bot's hono app (`HttpServerOptions.mount`). */
  mount?: (app: HttpApp) => void;
}

export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

/** The message metadata every post carries: its outbox id, so a send of unknown outcome can be found. */
export const DELIVERY_EVENT_TYPE = 'reprise_delivery';
const LOOKUP_SKEW_MS = 2 * 60_000;

function deliveryMetadata(outboxId: string): { event_type: string; event_payload: { outbox_id: string } } {
  return { event_type: DELIVERY_EVENT_TYPE, event_payload: { outbox_id: outboxId } };
}

/** The outbox id a message's metadata carries, if it is one of ours. */
function outboxIdOf(metadata: unknown): string | undefined {
  const m = metadata as { event_type?: unknown; event_payload?: { outbox_id?: unknown } } | undefined;
  return m?.event_type === DELIVERY_EVENT_TYPE && typeof m.event_payload?.outbox_id === 'string' ? m.event_payload.outbox_id : undefined;
}
/**
 * Web API methods that post or change what a channel shows. Not `chat.delete`: a replica that
 * lost the lead takes back its own late duplicates (see the outbox's duplicate watch).
 */
const SENDS = /\/(chat\.postMessage|chat\.update|chat\.postEphemeral)$/;

/** `fetch` that refuses a send the moment the guard says no: the last check before the request leaves. */
function guardedFetch(mayDeliver: () => boolean): typeof fetch {
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (SENDS.test(new URL(url).pathname) && !mayDeliver()) {
      return Promise.reject(new DeliveryError('not sent: this replica no longer holds the leader lease with margin', { retryable: true }));
    }
    return fetch(input, init);
  };
}

/** Events the transport handles: what the app manifest must subscribe to. */
/** How long a failed permalink lookup is remembered before it is asked again. */
const PERMALINK_RETRY_MS = 5 * 60_000;

export const SLACK_EVENTS = ['reaction_added', 'reaction_removed', 'message', 'app_mention'] as const;

export class SlackTransport implements ChatTransport {
  readonly name = TRANSPORT;
  readonly inlineDetail = false;
  readonly defaultChannel: string;
  readonly mode: 'http' | 'socket';
  readonly #app: App;
  readonly #opts: SlackTransportOptions;
  readonly #log: Logger;
  readonly #inbound: Inbound;
  readonly #http: HonoReceiver | undefined;
  #self: Promise<SlackSelf> | undefined;
  readonly #permalinks = new LRUCache<string, Promise<string | undefined>>({ max: 5000, ttlAutopurge: false });
  #running = false;
  #reconnect: NodeJS.Timeout | undefined;

  constructor(opts: SlackTransportOptions) {
    if (!opts.botToken) throw new Error('Slack needs a bot token: set SLACK_BOT_TOKEN to the app\'s "Bot User OAuth Token" (xoxb-…)');
    if (!opts.appToken && !opts.signingSecret) {
      throw new Error('Slack needs SLACK_SIGNING_SECRET (HTTP mode: Slack posts to /slack/events) or SLACK_APP_TOKEN (Socket Mode: no public URL needed)');
    }
    this.#opts = opts;
    this.defaultChannel = opts.defaultChannel;
    this.#log = opts.logger.child({ component: 'slack' });
    const clock = opts.clock ?? systemClock;
    const slackLog = boltLogger(this.#log);
    const clientOptions: webApi.WebClientOptions = {
      slackApiUrl: opts.apiUrl ?? DEFAULT_SLACK_API_URL,
      retryConfig: { retries: opts.retries ?? 0, factor: 2, minTimeout: 500, maxTimeout: 5000 },
      // 429s go back to the outbox with their Retry-After instead of parking a delivery here.
      rejectRateLimitedCalls: true,
      timeout: opts.requestTimeoutMs ?? 10_000,
      ...(opts.mayDeliver ? { fetch: guardedFetch(opts.mayDeliver) } : {}),
    };
    this.#inbound = new Inbound({ log: this.#log, clock, ackTimeoutMs: opts.ackTimeoutMs ?? 2000, doubleClickMs: opts.doubleClickMs ?? 1500 });

    let receiver: HonoReceiver | SocketModeReceiver;
    if (opts.appToken) {
      this.mode = 'socket';
      this.#http = undefined;
      receiver = new SocketModeReceiver({
        appToken: opts.appToken,
        logger: slackLog,
        installerOptions: { clientOptions: { ...clientOptions, retryConfig: { retries: opts.retries ?? 10, factor: 1.5 } } },
      });
    } else {
      this.mode = 'http';
      this.#http = new HonoReceiver({
        signingSecret: opts.signingSecret!,
        clock,
        path: opts.path ?? '/slack/events',
        responseDeadlineMs: (opts.ackTimeoutMs ?? 2000) + 500,
        bodyLimitBytes: opts.bodyLimitBytes ?? 1024 * 1024,
        accepting: () => this.#running,
      });
      receiver = this.#http;
    }
    this.#app = new App({
      receiver,
      authorize: async () => {
        const self = await this.#identify();
        return { botToken: opts.botToken, botUserId: self.userId, ...(self.botId ? { botId: self.botId } : {}) };
      },
      logger: slackLog,
      clientOptions,
      // Our own filters decide what is the bot's (tested in one place, see to-intent.ts).
      ignoreSelf: false,
      convoStore: false,
    });
    // Failures are logged where they happen (Inbound, the HTTP error handler); Bolt's default
    // handler would log each twice. Rethrown so the receiver can answer 500 / not ack.
    this.#app.error(async (err) => {
      throw err;
    });
    this.#listen();
  }

  /** HTTP mode: the route to add to the bot's hono app. */
  mount(app: HttpApp): void {
    if (!this.#http) throw new Error('the Slack transport runs in Socket Mode: it has no HTTP route to mount');
    this.#http.mount(app);
  }

  async start(sink: IntentSink): Promise<void> {
    this.#inbound.sink = sink;
    try {
      const self = await this.#identify();
      this.#log.info({ botUserId: self.userId, mode: this.mode }, 'slack transport started');
    } catch (err) {
      const e = toDeliveryError('auth.test', err);
      if (!e.retryable) throw new Error(`Slack rejected SLACK_BOT_TOKEN (${e.message}): reinstall the app and copy its "Bot User OAuth Token"`, { cause: err });
      // Slack unreachable: start anyway; who the bot is is learnt on the first event.
      this.#log.warn({ err: e.message }, 'slack unreachable at start; will identify the bot on the first event');
    }
    this.#running = true;
    if (this.mode === 'socket') await this.#connect();
  }

  async post(to: Destination, card: CardView, _detail: DetailView | undefined, opts: DeliveryOptions): Promise<MessageRef> {
    const m = renderCard(card);
    const channel = to.channel || this.defaultChannel;
    const res = await this.#call('chat.postMessage', () =>
      this.#app.client.chat.postMessage({
        token: this.#opts.botToken,
        channel,
        text: m.text,
        blocks: m.blocks,
        unfurl_links: false,
        unfurl_media: false,
        metadata: deliveryMetadata(opts.idempotencyKey),
      }),
    );
    if (!res.ts) throw new DeliveryError('slack chat.postMessage: no ts in the answer', { retryable: false });
    return { transport: TRANSPORT, channel: res.channel ?? channel, id: res.ts };
  }

  async reply(root: MessageRef, view: ReplyView, opts: DeliveryOptions): Promise<MessageRef> {
    const m = renderReply(view);
    const thread = root.thread ?? root.id;
    const res = await this.#call('chat.postMessage', () =>
      this.#app.client.chat.postMessage({
        token: this.#opts.botToken,
        channel: root.channel,
        thread_ts: thread,
        text: m.text,
        blocks: m.blocks,
        unfurl_links: false,
        unfurl_media: false,
        metadata: deliveryMetadata(opts.idempotencyKey),
      }),
    );
    if (!res.ts) throw new DeliveryError('slack chat.postMessage: no ts in the answer', { retryable: false });
    return { transport: TRANSPORT, channel: res.channel ?? root.channel, id: res.ts, thread };
  }

  /**
   * The bot's messages in a channel (`conversations.history`) or a thread
   * (`conversations.replies`) since `since`, read with their metadata: each post carries its
   * outbox id there. Reads back at most `lookupPages` pages of 200.
   */
  async find(where: { channel: string; thread?: string }, since: Date): Promise<ReadonlyMap<string, readonly MessageRef[]>> {
    const out = new Map<string, MessageRef[]>();
    const channel = where.channel || this.defaultChannel;
    // A little before the record: the send cannot be older than it, clocks can disagree.
    const oldest = (Math.max(0, since.getTime() - LOOKUP_SKEW_MS) / 1000).toFixed(6);
    const self = await this.#identify();
    let cursor: string | undefined;
    for (let page = 0; page < (this.#opts.lookupPages ?? 5); page++) {
      const args = { token: this.#opts.botToken, channel, oldest, include_all_metadata: true, limit: 200, ...(cursor ? { cursor } : {}) };
      const res = where.thread
        ? await this.#call('conversations.replies', () => this.#app.client.conversations.replies({ ...args, ts: where.thread! }))
        : await this.#call('conversations.history', () => this.#app.client.conversations.history(args));
      for (const m of res.messages ?? []) {
        const id = outboxIdOf(m.metadata);
        const mine = m.user === self.userId || (self.botId !== undefined && m.bot_id === self.botId);
        if (id === undefined || !mine || !m.ts) continue;
        const ref: MessageRef = { transport: TRANSPORT, channel, id: m.ts, ...(where.thread ? { thread: where.thread } : {}) };
        const refs = out.get(id);
        if (refs) refs.push(ref);
        else out.set(id, [ref]);
      }
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!cursor) break;
    }
    // History pages come newest first: oldest first per key, whatever the order read.
    for (const refs of out.values()) refs.sort((a, b) => Number(a.id) - Number(b.id));
    return out;
  }

  /**
   * Deletes a message the bot posted (`chat.delete`: a bot token may always delete the bot's
   * own messages with `chat:write`). One already gone (`message_not_found`) counts as deleted.
   */
  async remove(ref: MessageRef): Promise<void> {
    try {
      await this.#app.client.chat.delete({ token: this.#opts.botToken, channel: ref.channel, ts: ref.id });
    } catch (err) {
      if ((err as { data?: { error?: unknown } } | undefined)?.data?.error === 'message_not_found') return;
      throw toDeliveryError('chat.delete', err);
    }
  }

  async update(ref: MessageRef, card: CardView, _opts: DeliveryOptions): Promise<void> {
    const m = renderCard(card);
    await this.#call('chat.update', () =>
      this.#app.client.chat.update({ token: this.#opts.botToken, channel: ref.channel, ts: ref.id, text: m.text, blocks: m.blocks }),
    );
  }

  async ephemeral(to: ResponseTarget, view: EphemeralView, _opts: DeliveryOptions): Promise<void> {
    const m = renderEphemeral(view);
    if (to.kind === 'response_url') return this.#respond(to.url, { response_type: 'ephemeral', replace_original: false, text: m.text, blocks: m.blocks });
    if (to.kind === 'ephemeral') {
      await this.#call('chat.postEphemeral', () =>
        this.#app.client.chat.postEphemeral({
          token: this.#opts.botToken,
          channel: to.channel,
          user: to.user,
          text: m.text,
          blocks: m.blocks,
          ...(to.thread ? { thread_ts: to.thread } : {}),
        }),
      );
      return;
    }
    await this.#call('chat.postMessage', () =>
      this.#app.client.chat.postMessage({
        token: this.#opts.botToken,
        channel: to.ref.channel,
        thread_ts: to.ref.thread ?? to.ref.id,
        text: m.text,
        blocks: m.blocks,
        unfurl_links: false,
        unfurl_media: false,
      }),
    );
  }

  /**
   * The message's permalink (`chat.getPermalink`), asked once per message and kept: a link does
   * not change. A failure is remembered for a few minutes (a page view is not a retry loop).
   */
  permalink(ref: { channel: string; id: string }): Promise<string | undefined> {
    const key = `${ref.channel}|${ref.id}`;
    const known = this.#permalinks.get(key);
    if (known) return known;
    const asked = this.#call('chat.getPermalink', () =>
      this.#app.client.chat.getPermalink({ token: this.#opts.botToken, channel: ref.channel, message_ts: ref.id }),
    ).then(
      (r) => (typeof r.permalink === 'string' && /^https:\/\//.test(r.permalink) ? r.permalink : undefined),
      (err: unknown) => {
        this.#log.debug({ err, channel: ref.channel }, 'chat.getPermalink failed');
        this.#permalinks.set(key, Promise.resolve(undefined), { ttl: PERMALINK_RETRY_MS });
        return undefined;
      },
    );
    this.#permalinks.set(key, asked);
    return asked;
  }

  /**
   * A workspace member's user id by email (`users.lookupByEmail`, scope `users:read.email`), for
   * the person on call (issue 32); undefined when no member has it. Rejects when Slack could not be asked.
   */
  async userIdByEmail(email: string): Promise<string | undefined> {
    try {
      const r = await this.#app.client.users.lookupByEmail({ token: this.#opts.botToken, email });
      return typeof r.user?.id === 'string' ? r.user.id : undefined;
    } catch (err) {
      if ((err as { data?: { error?: string } }).data?.error === 'users_not_found') return undefined;
      throw err;
    }
  }

  async close(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#reconnect);
    this.#reconnect = undefined;
    await this.#app.stop();
  }

  /**
   * A person's display name (`users.info`, scope `users:read`): their profile's display name,
   * else their real name, else their handle; undefined when Slack knows no such user. Any other
   * failure throws a DeliveryError (a rate limit carries its Retry-After).
   */
  async displayName(userId: string): Promise<string | undefined> {
    try {
      const r = await this.#app.client.users.info({ token: this.#opts.botToken, user: userId });
      const u = r.user;
      const pick = [u?.profile?.display_name, u?.profile?.real_name, u?.real_name, u?.name].find((n) => typeof n === 'string' && n.trim() !== '');
      return pick;
    } catch (err) {
      const code = (err as { data?: { error?: unknown } } | undefined)?.data?.error;
      if (code === 'user_not_found' || code === 'user_not_visible') return undefined;
      throw toDeliveryError('users.info', err);
    }
  }

  /** The bot's user and bot ids (`auth.test`), asked once; a failure is asked again next time. */
  #identify(): Promise<SlackSelf> {
    this.#self ??= this.#app.client.auth.test({ token: this.#opts.botToken }).then(
      (r) => {
        if (!r.user_id) throw new Error('auth.test returned no user_id');
        return r.bot_id ? { userId: r.user_id, botId: r.bot_id } : { userId: r.user_id };
      },
      (err: unknown) => {
        this.#self = undefined;
        throw err;
      },
    );
    return this.#self;
  }

  /**
   * Socket Mode: open the WebSocket; if Slack cannot be reached, keep trying in the background.
   * A rejected app token fails `start` (first attempt) or is logged (later attempts).
   */
  async #connect(first = true): Promise<void> {
    try {
      await this.#app.start();
      this.#log.info('slack socket mode connected');
    } catch (err) {
      if (!this.#running) return;
      const e = toDeliveryError('apps.connections.open', err);
      if (!e.retryable) {
        const message = `Slack rejected SLACK_APP_TOKEN (${e.message}): create an app-level token with the connections:write scope`;
        if (first) throw new Error(message, { cause: err });
        this.#log.error({ err: e.message }, message);
        return;
      }
      this.#log.warn({ err: e.message }, 'slack socket mode could not connect; retrying');
      this.#reconnect = setTimeout(() => void this.#connect(false), this.#opts.reconnectMs ?? 10_000);
      this.#reconnect.unref();
    }
  }

  async #call<T>(method: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toDeliveryError(method, err);
    }
  }

  async #respond(url: string, payload: Record<string, unknown>): Promise<void> {
    if (!/^https?:\/\//.test(url)) throw new DeliveryError('slack response_url: not an http(s) URL', { retryable: false });
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(this.#opts.requestTimeoutMs ?? 10_000),
        redirect: 'error',
      });
    } catch (err) {
      throw new DeliveryError(`slack response_url: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, cause: err });
    }
    const body = await res.text().catch(() => '');
    const failure = responseUrlError(res.status, body, res.headers.get('retry-after'));
    if (failure) throw failure;
  }

  /** Bolt listeners: each payload translated, handed to the sink, acknowledged in time. */
  #listen(): void {
    const self = (context: Record<string, unknown>): SlackSelf => ({
      userId: String(context['botUserId'] ?? ''),
      ...(typeof context['botId'] === 'string' ? { botId: context['botId'] } : {}),
    });
    const onEvent =
      (translate: (body: Record<string, unknown>, me: SlackSelf) => Translation) =>
      async ({ body, context }: { body: unknown; context: Record<string, unknown> }): Promise<void> => {
        const outcome = await this.#inbound.take(translate(body as Record<string, unknown>, self(context)), context);
        // A failed event is answered 500 (HTTP mode) so Slack delivers it again.
        if (outcome.kind === 'failed') throw outcome.err;
      };
    this.#app.event(
      'reaction_added',
      onEvent((b, me) => fromReaction(b, false, me)),
    );
    this.#app.event(
      'reaction_removed',
      onEvent((b, me) => fromReaction(b, true, me)),
    );
    this.#app.event('message', onEvent(fromMessage));
    this.#app.event('app_mention', onEvent(fromMention));

    this.#app.command(this.#opts.command ?? '/reprise', async ({ body, ack, context }) => {
      const outcome: Outcome = await this.#inbound.take(fromCommand(body as unknown as Record<string, unknown>), context);
      if (outcome.kind === 'skipped') return ack({ response_type: 'ephemeral', text: 'Reprise could not read that command.' });
      if (outcome.kind === 'failed')
        return ack({
          response_type: 'ephemeral',
          text: `⚠️ Reprise could not take that command right now (ref ${String(context['requestId'] ?? 'none')}); try again in a moment.`,
        });
      return ack();
    });

    for (const actionId of Object.values(ACTION_IDS)) {
      this.#app.action(actionId, async ({ body, ack, context }) => {
        const outcome = await this.#inbound.take(fromBlockAction(body as unknown as Record<string, unknown>), context, { debounce: true });
        // No ack on failure: Slack shows the user the click did not work.
        if (outcome.kind === 'failed') throw outcome.err;
        await ack();
      });
    }
  }
}

/** Builds the Slack transport; in HTTP mode also the `mount` the HTTP server takes. */
export function createSlackTransport(opts: SlackTransportOptions): SlackTransportHandle {
  const transport = new SlackTransport(opts);
  return transport.mode === 'http' ? { transport, mount: (app) => transport.mount(app) } : { transport };
}
