/**
 * The slice of Mattermost's REST API v4 the bot uses, over `fetch`, typed.
 *
 * Why not `@mattermost/client` (Client4): it runs in Node 22 (it needs only global `fetch`), but
 * its `ClientError` keeps neither the HTTP status (it copies `status_code` from the JSON body, so
 * a proxy's plain-text 429 or 502 arrives with none) nor the response headers — and exactly-once
 * delivery needs both: `Retry-After` / `X-Ratelimit-Reset` on a 429, and "did the server act?"
 * on a 5xx or a timeout. It also cannot take a per-request deadline, nor an injected `fetch`
 * (the replica guard refuses a send at the last moment), and it is CommonJS with a peer
 * dependency on `@mattermost/types`. The dozen calls below are smaller than that glue.
 */
import { DeliveryError } from '../../core/chat/chat-types.js';

/** A Mattermost id: 26 lower-case letters and digits. */
export const MATTERMOST_ID = /^[a-z0-9]{26}$/;

/** A post as the server returns it (only the fields the bot reads; everything else is ignored). */
export interface MmPost {
  id: string;
  channel_id: string;
  user_id: string;
  root_id?: string;
  message: string;
  type?: string;
  create_at: number;
  update_at?: number;
  delete_at?: number;
  props?: Record<string, unknown>;
  metadata?: { reactions?: MmReaction[]; acknowledgements?: MmAcknowledgement[] };
}

export interface MmReaction {
  user_id: string;
  post_id: string;
  emoji_name: string;
  create_at: number;
}

export interface MmAcknowledgement {
  user_id: string;
  post_id: string;
  acknowledged_at: number;
}

export interface MmUser {
  id: string;
  username: string;
  is_bot?: boolean;
}

export interface MmChannel {
  id: string;
  name: string;
  team_id: string;
  type?: string;
}

/** What a new post carries. `props` holds the outbox id and `disable_group_highlight`. */
export interface NewPost {
  channel_id: string;
  message: string;
  root_id?: string;
  props?: Record<string, unknown>;
}

export interface MattermostApiOptions {
  /** Server base URL (`MATTERMOST_URL`), e.g. `https://chat.example.org`. */
  baseUrl: string;
  /** The bot account's access token (`MATTERMOST_TOKEN`). */
  token: string;
  /** Deadline of one call. Default 10 s. */
  timeoutMs?: number;
  /** Checked right before each request that posts or changes a message (a replica's lease). */
  mayDeliver?: () => boolean;
  /** Injected in tests; default the global `fetch`. */
  fetch?: typeof fetch;
  /** For `X-Ratelimit-Reset` (a Unix time in seconds). */
  now?: () => number;
}

/** An answer that was not 2xx, with what the server said. */
export class MattermostHttpError extends Error {
  constructor(
    readonly status: number,
    readonly serverId: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'MattermostHttpError';
  }
}

/**
 * How long a 429 asks to wait: `Retry-After` (seconds or an HTTP date) wins, then
 * `X-Ratelimit-Reset` (Mattermost sends the seconds until the window resets).
 */
export function rateLimitWaitMs(headers: Headers, nowMs: number): number | undefined {
  const after = headers.get('retry-after')?.trim();
  if (after) {
    if (/^\d+$/.test(after)) return Number(after) * 1000;
    const at = Date.parse(after);
    if (Number.isFinite(at)) return Math.max(0, at - nowMs);
  }
  const reset = headers.get('x-ratelimit-reset')?.trim();
  if (reset && /^\d+$/.test(reset)) {
    const n = Number(reset);
    // Seconds until the reset; a large number is an absolute Unix time instead.
    return n > 1e9 ? Math.max(0, n * 1000 - nowMs) : n * 1000;
  }
  return undefined;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export class MattermostApi {
  readonly #opts: MattermostApiOptions;
  readonly #base: string;

  constructor(opts: MattermostApiOptions) {
    this.#opts = opts;
    this.#base = `${opts.baseUrl.replace(/\/+$/, '')}/api/v4`;
  }

  /** `ws(s)://…/api/v4/websocket` for the same server. */
  get websocketUrl(): string {
    return `${this.#base.replace(/^http/, 'ws')}/websocket`;
  }

  me(): Promise<MmUser> {
    return this.#call('GET', '/users/me', 'users/me');
  }

  user(id: string): Promise<MmUser> {
    return this.#call('GET', `/users/${enc(id)}`, 'users/{id}');
  }

  channel(id: string): Promise<MmChannel> {
    return this.#call('GET', `/channels/${enc(id)}`, 'channels/{id}');
  }

  /**
   * A user by email (`GET /users/email/{email}`); undefined when nobody has it or the server
   * will not show the bot emails (privacy setting "Show Email Address", or a role that may).
   */
  async userByEmail(email: string): Promise<MmUser | undefined> {
    try {
      return await this.#call<MmUser>('GET', `/users/email/${enc(email)}`, 'users/email/{email}');
    } catch (err) {
      if (err instanceof MattermostHttpError && (err.status === 404 || err.status === 403)) return undefined;
      throw err;
    }
  }

  /** A channel by `team-name/channel-name`. */
  channelByName(team: string, name: string): Promise<MmChannel> {
    return this.#call('GET', `/teams/name/${enc(team)}/channels/name/${enc(name)}`, 'teams/name/{team}/channels/name/{name}');
  }

  /** Whether `user` is a member of `channel` (404 when not). */
  async isMember(channel: string, user: string): Promise<boolean> {
    try {
      await this.#call('GET', `/channels/${enc(channel)}/members/${enc(user)}`, 'channels/{id}/members/{user}');
      return true;
    } catch (err) {
      if (err instanceof MattermostHttpError && (err.status === 404 || err.status === 403)) return false;
      throw err;
    }
  }

  /** One post; undefined when it is not there (or not visible to the bot). */
  async post(id: string): Promise<MmPost | undefined> {
    try {
      return await this.#call<MmPost>('GET', `/posts/${enc(id)}`, 'posts/{id}');
    } catch (err) {
      if (err instanceof MattermostHttpError && (err.status === 404 || err.status === 403)) return undefined;
      throw err;
    }
  }

  createPost(post: NewPost): Promise<MmPost> {
    return this.#call('POST', '/posts', 'posts', post, true);
  }

  patchPost(id: string, patch: { message: string; props?: Record<string, unknown> }): Promise<MmPost> {
    return this.#call('PUT', `/posts/${enc(id)}/patch`, 'posts/{id}/patch', patch, true);
  }

  ephemeral(userId: string, post: NewPost): Promise<MmPost> {
    return this.#call('POST', '/posts/ephemeral', 'posts/ephemeral', { user_id: userId, post }, true);
  }

  async deletePost(id: string): Promise<void> {
    try {
      await this.#call('DELETE', `/posts/${enc(id)}`, 'posts/{id}');
    } catch (err) {
      if (err instanceof MattermostHttpError && err.status === 404) return;
      throw err;
    }
  }

  /**
   * Posts of a channel created or changed since `sinceMs` (a reaction or an acknowledgement
   * changes its post), in the server's order (newest first). The server caps the answer at
   * 1000 posts; longer outages lose what is older than that.
   */
  async postsSince(channel: string, sinceMs: number): Promise<MmPost[]> {
    const r = await this.#call<{ order?: unknown; posts?: Record<string, MmPost> }>(
      'GET',
      `/channels/${enc(channel)}/posts?since=${Math.max(0, Math.floor(sinceMs))}`,
      'channels/{id}/posts',
    );
    const posts = r.posts && typeof r.posts === 'object' ? r.posts : {};
    const order = Array.isArray(r.order) ? r.order.filter((x): x is string => typeof x === 'string') : Object.keys(posts);
    return order.map((id) => posts[id]).filter((p): p is MmPost => isPost(p));
  }

  /** A request as a typed answer; failures as {@link DeliveryError} (sends) or {@link MattermostHttpError}. */
  async #call<T>(method: Method, path: string, what: string, body?: unknown, send = false): Promise<T> {
    if (send && this.#opts.mayDeliver && !this.#opts.mayDeliver())
      throw new DeliveryError('not sent: this replica no longer holds the leader lease with margin', { retryable: true });
    const f = this.#opts.fetch ?? fetch;
    let res: Response;
    try {
      res = await f(`${this.#base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#opts.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          // Mattermost refuses token-authenticated writes without it when CSRF checks are strict.
          'x-requested-with': 'XMLHttpRequest',
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.#opts.timeoutMs ?? 10_000),
        redirect: 'error',
      });
    } catch (err) {
      // A timeout or a reset: the server may have acted on a send all the same.
      throw new DeliveryError(`mattermost ${what}: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, outcomeUnknown: send, cause: err });
    }
    const text = await res.text().catch(() => '');
    if (res.ok) {
      if (text === '') return {} as T;
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw new DeliveryError(`mattermost ${what}: the answer is not JSON`, { retryable: true, outcomeUnknown: send, cause: err });
      }
    }
    let serverId: string | undefined;
    let message = '';
    try {
      const j = JSON.parse(text) as { id?: unknown; message?: unknown };
      if (typeof j.id === 'string') serverId = j.id;
      if (typeof j.message === 'string') message = j.message.slice(0, 200);
    } catch {
      message = text.trim().slice(0, 100);
    }
    const detail = `mattermost ${what}: HTTP ${res.status}${message ? ` ${message}` : ''}`;
    const status = res.status;
    if (status === 429) {
      const wait = rateLimitWaitMs(res.headers, (this.#opts.now ?? Date.now)());
      throw new DeliveryError(`${detail} (rate limited)`, { retryable: true, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
    }
    if (status >= 500 || status === 408)
      throw new DeliveryError(detail, { retryable: true, outcomeUnknown: send, cause: new MattermostHttpError(status, serverId, detail) });
    throw new MattermostHttpError(status, serverId, detail);
  }
}

/** A non-retryable HTTP failure as a DeliveryError (the rest already are). */
export function asDeliveryError(err: unknown, what: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof MattermostHttpError) return new DeliveryError(err.message, { retryable: false, cause: err });
  return new DeliveryError(`mattermost ${what}: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, outcomeUnknown: true, cause: err });
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

export function isPost(p: unknown): p is MmPost {
  const o = p as Partial<MmPost> | undefined;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.id === 'string' &&
    typeof o.channel_id === 'string' &&
    typeof o.user_id === 'string' &&
    typeof o.message === 'string' &&
    typeof o.create_at === 'number'
  );
}
