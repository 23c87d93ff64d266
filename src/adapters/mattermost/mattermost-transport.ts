/**
 * Reprise on Mattermost (SPEC §9, issue 32 item 1): REST v4 for sends (mattermost-api), the
 * WebSocket for events (mattermost-socket), zero ingress.
 *
 * Out: the card is a root post, the analysis and notices are replies in its thread (`root_id`),
 * state changes patch the card in place; private answers are ephemeral posts. Every post carries
 * its outbox id in `props` (and `disable_group_highlight`, so no `@channel` ever notifies), so a
 * send whose outcome is unknown is looked up (`find`) before it is made again. In: reactions,
 * acknowledgements, mentions and thread replies in the configured channels (mattermost-inbound),
 * each once (mattermost-receiver), with missed events caught up after every reconnection.
 */
import type { Destination, IntentSink, MessageRef, ResponseTarget } from '../../core/chat/chat-types.js';
import { backoffDelay } from '../../core/backoff.js';
import { DeliveryError } from '../../core/chat/chat-types.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../../core/chat/thread-view.js';
import type { HttpApp } from '../../http/create-server.js';
import type { ChatTransport, DeliveryOptions } from '../../ports/chat-transport.js';
import type { Logger } from '../../ports/logger.js';
import type { KeyValueStore } from '../../ports/store.js';
import { asDeliveryError, MattermostApi, MATTERMOST_ID, type MmPost, type MmUser, type NewPost } from './mattermost-api.js';
import { TRANSPORT } from './mattermost-inbound.js';
import { MattermostIngress } from './mattermost-ingress.js';
import { MattermostReceiver } from './mattermost-receiver.js';
import { MattermostSocket } from './mattermost-socket.js';
import { MattermostStore } from './mattermost-store.js';
import { renderCard, renderEphemeral, renderReply } from './render-mattermost.js';

export interface MattermostTransportOptions {
  /** `MATTERMOST_URL`: the server's base URL. */
  url: string;
  /** `MATTERMOST_TOKEN`: the bot account's access token. */
  token: string;
  /** Channels the bot serves, each an id or `team/channel-name`; the first is the default. */
  channels: string[];
  store: KeyValueStore;
  logger: Logger;
  /** Checked right before each send (replicas). */
  mayDeliver?: () => boolean;
  /** Deadline of one REST call. Default 10 s. */
  requestTimeoutMs?: number;
  /** WebSocket reconnects: doubling from `initialMs` to `maxMs`. Default 1 s → 60 s. */
  backoff?: { initialMs: number; maxMs: number };
  /** A WebSocket silent this long is made again. Default 60 s. */
  idleMs?: number;
  /**
   * When the bot is reachable (`server.public_url`): buttons on the card, and the `/reprise`
   * slash command when its token is given. Absent: no ingress at all.
   */
  ingress?: { publicUrl: string; slashToken?: string; bodyLimitBytes: number };
}

/** The `props` key that carries a post's outbox id. */
export const OUTBOX_PROP = 'reprise_outbox_id';
const LOOKUP_SKEW_MS = 2 * 60_000;

export class MattermostTransport implements ChatTransport {
  readonly name = TRANSPORT;
  readonly inlineDetail = false;
  readonly #opts: MattermostTransportOptions;
  readonly #log: Logger;
  readonly #api: MattermostApi;
  readonly #store: MattermostStore;
  readonly #receiver: MattermostReceiver;
  readonly #socket: MattermostSocket;
  readonly #ingress: MattermostIngress | undefined;
  /** Configured name (`team/name`) → channel id, once resolved. */
  readonly #ids = new Map<string, string>();
  readonly #names = new Map<string, string>();
  readonly #served = new Set<string>();
  #me: MmUser | undefined;
  #started = false;
  #closed = false;
  #resolveRetry: NodeJS.Timeout | undefined;
  readonly #backoff: { initialMs: number; maxMs: number };

  constructor(opts: MattermostTransportOptions) {
    if (opts.channels.length === 0) throw new Error('mattermost: no channel configured (set MATTERMOST_CHANNEL)');
    this.#opts = opts;
    this.#log = opts.logger.child({ component: 'mattermost' });
    this.#backoff = opts.backoff ?? { initialMs: 1_000, maxMs: 60_000 };
    this.#api = new MattermostApi({
      baseUrl: opts.url,
      token: opts.token,
      ...(opts.requestTimeoutMs ? { timeoutMs: opts.requestTimeoutMs } : {}),
      ...(opts.mayDeliver ? { mayDeliver: opts.mayDeliver } : {}),
    });
    this.#store = new MattermostStore(opts.store);
    this.#receiver = new MattermostReceiver({ api: this.#api, store: this.#store, log: this.#log, retryMs: opts.backoff?.initialMs ?? 1_000 });
    this.#socket = new MattermostSocket({
      url: this.#api.websocketUrl,
      token: opts.token,
      logger: this.#log,
      backoff: this.#backoff,
      ...(opts.idleMs ? { idleMs: opts.idleMs } : {}),
      onEvent: (e) => this.#receiver.onEvent(e),
      onConnected: () => this.#receiver.catchUp(),
    });
    for (const c of opts.channels) if (MATTERMOST_ID.test(c)) this.#served.add(c);
    this.#ingress = opts.ingress
      ? new MattermostIngress({
          ...opts.ingress,
          serverUrl: opts.url,
          botToken: opts.token,
          logger: this.#log,
          channelName: (id) => this.#names.get(id) ?? id,
          sink: () => this.#receiver.sink,
        })
      : undefined;
  }

  /** With ingress: the button (and slash command) routes for the bot's HTTP port. */
  mount(app: HttpApp): void {
    if (!this.#ingress) throw new Error('the Mattermost transport has no ingress: set server.public_url');
    this.#ingress.mount(app);
  }

  get hasIngress(): boolean {
    return this.#ingress !== undefined;
  }

  /** WebSocket events handled so far (a frame carries no answer: this is how far the bot has read). */
  get eventsHandled(): number {
    return this.#receiver.handled;
  }

  /**
   * Checks the token (`users/me`: a refused token fails the start), resolves channel names,
   * and connects the WebSocket; a server that cannot be reached is retried in the background.
   */
  async start(sink: IntentSink): Promise<void> {
    if (this.#started) throw new Error('mattermost transport already started');
    this.#started = true;
    this.#receiver.sink = sink;
    await this.#setup(1);
  }

  async #setup(failures: number): Promise<void> {
    try {
      this.#me = await this.#api.me();
    } catch (err) {
      const d = asDeliveryError(err, 'users/me');
      if (!d.retryable) throw new Error(`mattermost: the server refused MATTERMOST_TOKEN (${d.message}); use a bot account's access token`, { cause: err });
      const wait = backoffDelay({ baseMs: this.#backoff.initialMs, maxMs: this.#backoff.maxMs }, failures, { serverWaitMs: d.retryAfterMs });
      this.#log.warn({ err: d.message, retryInMs: wait }, `mattermost: cannot reach ${this.#opts.url} at start; retrying in the background`);
      this.#resolveRetry = setTimeout(() => {
        this.#setup(failures + 1).catch((e: unknown) => this.#log.error({ err: e instanceof Error ? e.message : String(e) }, 'mattermost: giving up starting'));
      }, wait);
      this.#resolveRetry.unref();
      return;
    }
    if (this.#closed) return;
    this.#store.bind(this.#me.id);
    // First start: events from now on (history is not replayed).
    if ((await this.#store.cursor()) === undefined) await this.#store.advance(Date.now());
    await this.#resolve();
    this.#receiver.identify({
      botUserId: this.#me.id,
      botUsername: this.#me.username,
      channels: this.#served,
      channelName: (id) => this.#names.get(id) ?? id,
    });
    this.#socket.start();
    this.#log.info({ user: this.#me.username, channels: [...this.#served] }, 'mattermost: started');
  }

  /** Resolves `team/name` channels; one that fails is tried again later (sends to it fail retryably meanwhile). */
  async #resolve(): Promise<void> {
    let pending = false;
    for (const c of this.#opts.channels) {
      if (MATTERMOST_ID.test(c) || this.#ids.has(c)) continue;
      const [team, name] = c.split('/');
      if (!team || !name) throw new Error(`mattermost: channel "${c}" is neither a channel id nor team-name/channel-name`);
      try {
        const ch = await this.#api.channelByName(team, name);
        this.#ids.set(c, ch.id);
        this.#names.set(ch.id, c);
        this.#served.add(ch.id);
      } catch (err) {
        const d = asDeliveryError(err, `channel ${c}`);
        this.#log.error({ channel: c, err: d.message }, `mattermost: cannot find channel ${c}; add the bot account to the team and the channel`);
        pending = pending || d.retryable;
      }
    }
    if (pending && !this.#closed) {
      this.#resolveRetry = setTimeout(() => void this.#resolve(), 30_000);
      this.#resolveRetry.unref();
    }
  }

  async post(to: Destination, card: CardView, _detail: DetailView | undefined, opts: DeliveryOptions): Promise<MessageRef> {
    const channel = this.#channel(to.channel, 'post');
    const buttons = this.#ingress && card.controls ? { attachments: this.#ingress.attachments(card.controlsId) } : {};
    const p = await this.#create({ channel_id: channel, message: renderCard(card), props: { ...this.#props(opts.idempotencyKey), ...buttons } }, 'post');
    return { transport: TRANSPORT, channel, id: p.id };
  }

  async reply(root: MessageRef, view: ReplyView, opts: DeliveryOptions): Promise<MessageRef> {
    const channel = this.#channel(root.channel, 'reply', root);
    const thread = root.thread ?? root.id;
    const p = await this.#create({ channel_id: channel, root_id: thread, message: renderReply(view), props: this.#props(opts.idempotencyKey) }, 'reply');
    return { transport: TRANSPORT, channel, id: p.id, thread };
  }

  async update(ref: MessageRef, card: CardView, _opts: DeliveryOptions): Promise<void> {
    this.#channel(ref.channel, 'update', ref);
    // Only the message: the props (outbox id, no group highlight) stay as posted.
    try {
      await this.#api.patchPost(ref.id, { message: renderCard(card) });
    } catch (err) {
      throw this.#failed(err, 'update');
    }
  }

  async ephemeral(to: ResponseTarget, view: EphemeralView, opts: DeliveryOptions): Promise<void> {
    const message = renderEphemeral(view);
    if (to.kind === 'response_url') return this.#respond(to.url, message);
    if (to.kind === 'thread') {
      const channel = this.#channel(to.ref.channel, 'answer', to.ref);
      await this.#create({ channel_id: channel, root_id: to.ref.thread ?? to.ref.id, message, props: this.#props(opts.idempotencyKey) }, 'answer');
      return;
    }
    const channel = this.#channel(to.channel, 'answer');
    try {
      await this.#api.ephemeral(to.user, { channel_id: channel, message, ...(to.thread ? { root_id: to.thread } : {}) });
    } catch (err) {
      throw this.#failed(err, 'ephemeral answer');
    }
  }

  /** The bot's posts in a channel (or one thread of it) since `since`, by the outbox id their `props` carry. */
  async find(where: { channel: string; thread?: string }, since: Date): Promise<ReadonlyMap<string, readonly MessageRef[]>> {
    const channel = this.#channel(where.channel, 'lookup');
    let posts: MmPost[];
    try {
      posts = await this.#api.postsSince(channel, since.getTime() - LOOKUP_SKEW_MS);
    } catch (err) {
      throw this.#failed(err, 'lookup');
    }
    const me = this.#me?.id;
    const out = new Map<string, MessageRef[]>();
    for (const p of posts.sort((a, b) => a.create_at - b.create_at)) {
      const key = p.props?.[OUTBOX_PROP];
      if (typeof key !== 'string' || p.user_id !== me || (p.delete_at ?? 0) > 0) continue;
      if (where.thread ? p.root_id !== where.thread : Boolean(p.root_id)) continue;
      const ref: MessageRef = { transport: TRANSPORT, channel, id: p.id, ...(p.root_id ? { thread: p.root_id } : {}) };
      out.set(key, [...(out.get(key) ?? []), ref]);
    }
    return out;
  }

  async remove(ref: MessageRef): Promise<void> {
    try {
      await this.#api.deletePost(ref.id);
    } catch (err) {
      throw this.#failed(err, 'delete');
    }
  }

  /**
   * The username of the member with this email, for the person on call (issue 32): Mattermost
   * mentions people by username. Undefined when nobody has it (or emails are hidden from the
   * bot); rejects when the server could not be asked.
   */
  async userIdByEmail(email: string): Promise<string | undefined> {
    const u = await this.#api.userByEmail(email);
    return typeof u?.username === 'string' && u.username !== '' ? u.username : undefined;
  }

  /** A user's username, for text that cannot mention (PR bodies, /ui, other surfaces); undefined when the server will not say. */
  async username(userId: string): Promise<string | undefined> {
    try {
      const u = await this.#api.user(userId);
      return typeof u.username === 'string' && u.username !== '' ? u.username : undefined;
    } catch {
      return undefined;
    }
  }

  /** `<server>/_redirect/pl/<post id>`: Mattermost's own permalink, team-independent. */
  permalink(ref: { channel: string; id: string }): Promise<string | undefined> {
    if (!MATTERMOST_ID.test(ref.id)) return Promise.resolve(undefined);
    return Promise.resolve(`${this.#opts.url.replace(/\/+$/, '')}/_redirect/pl/${ref.id}`);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#resolveRetry);
    this.#socket.close();
    this.#receiver.close();
    await this.#receiver.idle;
    this.#store.close();
  }

  #props(outboxId: string): Record<string, unknown> {
    return { [OUTBOX_PROP]: outboxId, disable_group_highlight: true };
  }

  async #create(post: NewPost, what: string): Promise<MmPost> {
    let p: MmPost;
    try {
      p = await this.#api.createPost(post);
    } catch (err) {
      throw this.#failed(err, what);
    }
    if (typeof p.id !== 'string' || p.id === '')
      throw new DeliveryError(`mattermost ${what}: the server answered without a post id`, { retryable: true, outcomeUnknown: true });
    if (this.#me) this.#receiver.sent({ id: p.id, user_id: this.#me.id, channel_id: post.channel_id, ...(post.root_id ? { root_id: post.root_id } : {}) });
    return p;
  }

  #failed(err: unknown, what: string): DeliveryError {
    const d = asDeliveryError(err, what);
    this.#log.warn({ retryable: d.retryable, retryAfterMs: d.retryAfterMs, err: d.message }, `mattermost: ${what} failed`);
    return d;
  }

  /** The channel id a send goes to, checked: configured and resolved. */
  #channel(channel: string, what: string, ref?: MessageRef): string {
    if (this.#closed) throw new DeliveryError(`mattermost ${what}: transport closed`, { retryable: true });
    if (ref && ref.transport !== TRANSPORT)
      throw new DeliveryError(`mattermost ${what}: a ${ref.transport} message given to the Mattermost transport`, { retryable: false });
    const named = channel === '' ? this.#opts.channels[0]! : channel;
    const id = MATTERMOST_ID.test(named) ? named : this.#ids.get(named);
    if (!id) throw new DeliveryError(`mattermost ${what}: channel ${named} is not resolved yet (server unreachable at start?)`, { retryable: true });
    if (!this.#served.has(id))
      throw new DeliveryError(`mattermost ${what}: channel ${named} is not configured; add it to MATTERMOST_CHANNEL or a routing rule`, { retryable: false });
    return id;
  }

  /** A slash command's `response_url` (Mattermost's own, on the server): the answer as an ephemeral response. */
  async #respond(url: string, text: string): Promise<void> {
    if (!/^https?:\/\//.test(url)) throw new DeliveryError('mattermost response_url: not an http(s) URL', { retryable: false });
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ response_type: 'ephemeral', text }),
        signal: AbortSignal.timeout(this.#opts.requestTimeoutMs ?? 10_000),
        redirect: 'error',
      });
    } catch (err) {
      throw new DeliveryError(`mattermost response_url: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, cause: err });
    }
    await res.body?.cancel();
    if (!res.ok) throw new DeliveryError(`mattermost response_url: HTTP ${res.status}`, { retryable: res.status >= 500 || res.status === 429 });
  }
}

/** Builds the Mattermost transport; with ingress also the `mount` the HTTP server takes. */
export function createMattermostTransport(opts: MattermostTransportOptions): {
  transport: ChatTransport;
  mount?: (app: HttpApp) => void;
  username: (id: string) => Promise<string | undefined>;
} {
  const transport = new MattermostTransport(opts);
  const username = (id: string): Promise<string | undefined> => transport.username(id);
  return transport.hasIngress ? { transport, mount: (app) => transport.mount(app), username } : { transport, username };
}
