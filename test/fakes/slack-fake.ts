/**
 * A Slack Web API on 127.0.0.1, port 0, speaking the real protocol: `POST /api/<method>` with a
 * Bearer token and a form or JSON body, answered `{ok, …}` — `auth.test`, `chat.postMessage`,
 * `chat.update`, `chat.delete` (the bot's own messages only), `chat.postEphemeral`, `chat.getPermalink`, `conversations.history` / `conversations.replies` (with
 * message metadata when `include_all_metadata` is set), `users.info` (the workspace's people, see `users`), `apps.connections.open` (Socket Mode, see
 * slack-socket-fake.ts) — plus `response_url` endpoints. It records every request and keeps the
 * messages the bot posted, and can be slow, rate limit (429 + Retry-After), fail (5xx, `ok:false`
 * errors), reset connections, or be down (connection refused) and come back on the same port.
 * It also signs Events API / interactivity / slash-command requests as Slack does.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../helpers/wait-for.js';
import { attachSocketMode, type SocketFake } from './slack-socket-fake.js';
import {
  blockActionsPayload,
  eventEnvelope,
  nextEventId,
  signEvent,
  signForm,
  signInteraction,
  slashCommandForm,
  type SignedRequest,
  type SignOptions,
  type Workspace,
} from './slack-requests.js';

export interface SlackFakeOptions {
  signingSecret?: string;
  botToken?: string;
  appToken?: string;
  botUserId?: string;
  botId?: string;
  teamId?: string;
  apiAppId?: string;
  /** Workspace members by email (`users.lookupByEmail`): email → user id. */
  emails?: Record<string, string>;
  /** The workspace's people, as `users.info` answers for them; anyone else is `user_not_found`. */
  users?: Record<string, SlackUserProfile>;
}

/** A person's names as Slack keeps them (`users.info`'s `user.name`, `real_name`, `profile.display_name`). */
export interface SlackUserProfile {
  /** The legacy handle. */
  name?: string;
  realName?: string;
  displayName?: string;
}

export interface SlackFakeRequest {
  /** Web API method (`chat.postMessage`), or `response_url`. */
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The Bearer token (or `token` field) the call carried. */
  token?: string;
  /** Parsed body; `blocks` and other JSON-encoded form fields decoded. */
  body: Record<string, unknown>;
  at: number;
}

export interface PostedMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  text: unknown;
  blocks: unknown;
  /** The `metadata` it was posted with (returned by history/replies with `include_all_metadata`). */
  metadata?: unknown;
  /** Every `chat.update` of it, oldest first. */
  updates: Array<{ text: unknown; blocks: unknown }>;
  /** Posted by someone else (a person): `chat.delete` with the bot's token is refused. */
  foreign?: boolean;
}

/** How the next matching calls fail. `times` defaults to 1; `Infinity` keeps failing. */
export interface FailureScript {
  /** Web API method or `response_url`; any call when omitted. */
  method?: string;
  /** HTTP status (429 is answered with `Retry-After: retryAfterSec`). */
  status?: number;
  retryAfterSec?: number;
  /** A platform error: HTTP 200 `{ok:false, error}` (`channel_not_found`, `invalid_auth`…). */
  error?: string;
  /** Drop the connection without an answer. */
  reset?: boolean;
  /** Do the call, then answer only after this long (past the client's timeout: it posted, the bot never heard). */
  lateMs?: number;
  /** Do the call, then drop the connection without an answer. */
  resetAfter?: boolean;
  /** Act on the call only once this settles (a request still inside the sender's HTTP client: Slack has not seen it yet). */
  hold?: Promise<unknown>;
  times?: number;
}

export interface SlackFakeBehaviour {
  /** Every answer waits this long. */
  latencyMs: number;
  /**
   * Every Web API call is done on arrival, its answer sent this long after (Slack acted; the
   * bot may never hear it — a timeout, a crash). 0: off.
   */
  answerLatencyMs?: number;
  failures: FailureScript[];
  /** Channel ids `conversations.info` reports the bot is not a member of. */
  notMemberOf?: string[];
}

export interface SlackFake {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** What `SLACK_API_URL` / `apiUrl` should be: `<url>/api/`. */
  apiUrl: string;
  workspace: Workspace;
  signingSecret: string;
  botToken: string;
  appToken: string;
  requests: SlackFakeRequest[];
  calls(method: string): SlackFakeRequest[];
  messages: PostedMessage[];
  /** The workspace's people (`users.info`); add or change one at any time. */
  users: Map<string, SlackUserProfile>;
  /** Messages taken back with `chat.delete`, in the order they were deleted (gone from `messages`). */
  deleted: PostedMessage[];
  message(channel: string, ts: string): PostedMessage | undefined;
  setBehaviour(b: Partial<SlackFakeBehaviour>): void;
  failNext(f: FailureScript): void;
  /** Stops listening and cuts open connections: calls get ECONNREFUSED. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** A fresh `response_url` (Slack's expire after five uses). */
  responseUrl(): string;
  /** Requests as Slack would send them to the app, signed with the app's secret. */
  signed: {
    event(event: Record<string, unknown>, opts?: SignOptions & { eventId?: string }): SignedRequest & { eventId: string };
    command(
      opts: { text: string; user?: string; channel?: string; responseUrl?: string; triggerId?: string; command?: string },
      sign?: SignOptions,
    ): SignedRequest;
    action(
      opts: {
        messageTs: string;
        actionId: string;
        blockId?: string;
        selected?: string;
        value?: string;
        user?: string;
        channel?: string;
        responseUrl?: string;
        actionTs?: string;
      },
      sign?: SignOptions,
    ): SignedRequest;
  };
  socket: SocketFake;
  /** Polls `fn` until it returns something other than undefined (test/helpers/wait-for.ts; its generous default timeout). */
  waitFor<T>(fn: () => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

/** Drops keys whose value is undefined, so they do not override defaults when spread. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

const JSON_FIELDS = new Set(['blocks', 'attachments', 'metadata']);

function parseBody(raw: string, contentType: string | undefined): Record<string, unknown> {
  if (raw === '') return {};
  if (contentType?.includes('application/json')) return JSON.parse(raw) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    out[k] = JSON_FIELDS.has(k) && /^[[{]/.test(v) ? JSON.parse(v) : v;
  }
  return out;
}

export async function startSlackFake(opts: SlackFakeOptions = {}): Promise<SlackFake> {
  const ws: Workspace = { teamId: opts.teamId ?? 'T0REPRISE', apiAppId: opts.apiAppId ?? 'A0REPRISE', botUserId: opts.botUserId ?? 'U0REPRISE' };
  const botId = opts.botId ?? 'B0REPRISE';
  const botToken = opts.botToken ?? 'xoxb-test-token';
  const appToken = opts.appToken ?? 'xapp-test-token';
  const signingSecret = opts.signingSecret ?? 'test-signing-secret';
  const requests: SlackFakeRequest[] = [];
  const messages: PostedMessage[] = [];
  const deleted: PostedMessage[] = [];
  const users = new Map(Object.entries(opts.users ?? {}));
  const behaviour: SlackFakeBehaviour = { latencyMs: 0, failures: [] };
  const channelIds = new Map<string, string>();
  const responseUses = new Map<string, number>();
  const baseSec = Math.floor(Date.now() / 1000);
  let tsSeq = 0;
  let port = 0;
  let hookSeq = 0;

  const nextTs = (): string => {
    tsSeq += 1;
    return `${baseSec + tsSeq}.${String(tsSeq).padStart(6, '0')}`;
  };
  const channelId = (c: string): string => {
    if (/^[CGD][A-Z0-9]{2,}$/.test(c)) return c;
    const name = c.replace(/^#/, '');
    let id = channelIds.get(name);
    if (!id) {
      id = `C${(channelIds.size + 1).toString().padStart(8, '0')}`;
      channelIds.set(name, id);
    }
    return id;
  };
  const takeFailure = (method: string): FailureScript | undefined => {
    const i = behaviour.failures.findIndex((f) => f.method === undefined || f.method === method);
    if (i < 0) return undefined;
    const f = behaviour.failures[i]!;
    const left = (f.times ?? 1) - 1;
    if (left <= 0) behaviour.failures.splice(i, 1);
    else behaviour.failures[i] = { ...f, times: left };
    return f;
  };

  function api(method: string, token: string | undefined, body: Record<string, unknown>): Record<string, unknown> {
    if (method === 'apps.connections.open') {
      if (token !== appToken) return { ok: false, error: 'invalid_auth' };
      return { ok: true, url: socket.issueUrl(port) };
    }
    if (token === undefined) return { ok: false, error: 'not_authed' };
    if (token !== botToken) return { ok: false, error: 'invalid_auth' };
    switch (method) {
      case 'auth.test':
        return {
          ok: true,
          url: 'https://reprise-test.slack.com/',
          team: 'Reprise Test',
          user: 'reprise',
          team_id: ws.teamId,
          user_id: ws.botUserId,
          bot_id: botId,
          is_enterprise_install: false,
        };
      case 'chat.postMessage': {
        if (typeof body['channel'] !== 'string' || body['channel'] === '') return { ok: false, error: 'channel_not_found' };
        if (body['text'] === undefined && body['blocks'] === undefined) return { ok: false, error: 'no_text' };
        const m: PostedMessage = { channel: channelId(body['channel']), ts: nextTs(), text: body['text'], blocks: body['blocks'], updates: [] };
        if (typeof body['thread_ts'] === 'string') m.thread_ts = body['thread_ts'];
        if (body['metadata'] !== undefined) m.metadata = body['metadata'];
        messages.push(m);
        return {
          ok: true,
          channel: m.channel,
          ts: m.ts,
          message: {
            type: 'message',
            user: ws.botUserId,
            bot_id: botId,
            text: m.text,
            blocks: m.blocks,
            ts: m.ts,
            ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
          },
        };
      }
      case 'chat.update': {
        const m = messages.find((x) => x.channel === body['channel'] && x.ts === body['ts']);
        if (!m) return { ok: false, error: 'message_not_found' };
        m.updates.push({ text: body['text'], blocks: body['blocks'] });
        m.text = body['text'];
        m.blocks = body['blocks'];
        return {
          ok: true,
          channel: m.channel,
          ts: m.ts,
          text: m.text,
          message: { type: 'message', user: ws.botUserId, bot_id: botId, text: m.text, blocks: m.blocks },
        };
      }
      case 'chat.delete': {
        // Slack: a bot token deletes only the bot's own messages; a deleted message leaves history and replies.
        const i = messages.findIndex((x) => x.channel === body['channel'] && x.ts === body['ts']);
        if (i < 0) return { ok: false, error: 'message_not_found' };
        if (messages[i]!.foreign) return { ok: false, error: 'cant_delete_message' };
        deleted.push(...messages.splice(i, 1));
        return { ok: true, channel: body['channel'], ts: body['ts'] };
      }
      case 'conversations.info': {
        if (typeof body['channel'] !== 'string' || body['channel'] === '') return { ok: false, error: 'channel_not_found' };
        const id = channelId(body['channel']);
        if (behaviour.notMemberOf?.includes(id)) return { ok: true, channel: { id, is_channel: true, is_member: false } };
        return { ok: true, channel: { id, is_channel: true, is_member: true } };
      }
      case 'conversations.history':
      case 'conversations.replies': {
        if (typeof body['channel'] !== 'string' || !/^[CGD][A-Z0-9]{2,}$/.test(body['channel'])) return { ok: false, error: 'channel_not_found' };
        const oldest = Number(body['oldest'] ?? 0);
        const limit = Math.min(1000, Math.max(1, Number(body['limit'] ?? 100)));
        const from = Number(body['cursor'] ?? 0) || 0;
        const thread = method === 'conversations.replies' ? String(body['ts'] ?? '') : undefined;
        if (method === 'conversations.replies' && !messages.some((x) => x.channel === body['channel'] && x.ts === thread))
          return { ok: false, error: 'thread_not_found' };
        const inPlace = messages.filter(
          (x) =>
            x.channel === body['channel'] &&
            Number(x.ts) >= oldest &&
            (thread === undefined ? x.thread_ts === undefined || x.thread_ts === x.ts : x.ts === thread || x.thread_ts === thread),
        );
        // History is newest first; a thread's replies oldest first (the parent first).
        const ordered = thread === undefined ? [...inPlace].reverse() : inPlace;
        const withMeta = body['include_all_metadata'] === true || body['include_all_metadata'] === 'true';
        const page = ordered.slice(from, from + limit).map((x) => ({
          type: 'message',
          ...(x.foreign ? { user: 'U0PERSON' } : { user: ws.botUserId, bot_id: botId }),
          text: x.text,
          ts: x.ts,
          ...(x.thread_ts ? { thread_ts: x.thread_ts } : {}),
          ...(withMeta && x.metadata !== undefined ? { metadata: x.metadata } : {}),
        }));
        const more = from + limit < ordered.length;
        return { ok: true, messages: page, has_more: more, response_metadata: { next_cursor: more ? String(from + limit) : '' } };
      }
      case 'chat.getPermalink': {
        // Slack: a link to any message in a channel the bot can read; a reply's carries its thread.
        const m = messages.find((x) => x.channel === body['channel'] && x.ts === body['message_ts']);
        if (!m) return { ok: false, error: 'message_not_found' };
        const thread = m.thread_ts && m.thread_ts !== m.ts ? `?thread_ts=${m.thread_ts}&cid=${m.channel}` : '';
        return { ok: true, channel: m.channel, permalink: `https://reprise-test.slack.com/archives/${m.channel}/p${m.ts.replace('.', '')}${thread}` };
      }
      case 'users.lookupByEmail': {
        // Slack: `users_not_found` for an email no member has.
        const email = String(body['email'] ?? '').toLowerCase();
        const id = Object.entries(opts.emails ?? {}).find(([e]) => e.toLowerCase() === email)?.[1];
        if (!id) return { ok: false, error: 'users_not_found' };
        return { ok: true, user: { id, team_id: ws.teamId, name: email.split('@')[0], profile: { email } } };
      }
      case 'users.info': {
        const id = typeof body['user'] === 'string' ? body['user'] : '';
        const u = users.get(id);
        if (!u) return { ok: false, error: 'user_not_found' };
        const handle = u.name ?? id.toLowerCase();
        return {
          ok: true,
          user: {
            id,
            team_id: ws.teamId,
            name: handle,
            deleted: false,
            real_name: u.realName ?? '',
            is_bot: false,
            profile: {
              display_name: u.displayName ?? '',
              real_name: u.realName ?? '',
              display_name_normalized: u.displayName ?? '',
              real_name_normalized: u.realName ?? '',
            },
          },
        };
      }
      case 'chat.postEphemeral':
        if (typeof body['channel'] !== 'string' || typeof body['user'] !== 'string') return { ok: false, error: 'invalid_arguments' };
        return { ok: true, message_ts: nextTs() };
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://fake');
        const isHook = url.pathname.startsWith('/hooks/');
        const method = isHook ? 'response_url' : url.pathname.replace(/^\/api\//, '');
        let body: Record<string, unknown>;
        try {
          body = parseBody(Buffer.concat(chunks).toString('utf8'), req.headers['content-type']);
        } catch {
          res.writeHead(400).end('invalid_json');
          return;
        }
        const auth = req.headers.authorization;
        const token = auth?.startsWith('Bearer ') ? auth.slice(7) : typeof body['token'] === 'string' ? body['token'] : undefined;
        requests.push({ method, path: url.pathname, headers: req.headers, ...(token ? { token } : {}), body, at: Date.now() });
        if (behaviour.latencyMs > 0) await new Promise((r) => setTimeout(r, behaviour.latencyMs));
        if (res.destroyed) return;
        const f = takeFailure(method);
        if (f?.hold) {
          await f.hold.catch(() => undefined);
          // Slack acts on a request it received even when the sender gave up waiting meanwhile.
          if (res.destroyed) {
            if (!isHook) api(method, token, body);
            return;
          }
        }
        if (f?.reset) {
          req.socket.destroy();
          return;
        }
        if (f?.status) {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (f.status === 429) headers['retry-after'] = String(f.retryAfterSec ?? 1);
          res.writeHead(f.status, headers).end(JSON.stringify({ ok: false, error: f.status === 429 ? 'ratelimited' : 'fatal_error' }));
          return;
        }
        if (f?.error) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error: f.error }));
          return;
        }
        if (!isHook && !f && (behaviour.answerLatencyMs ?? 0) > 0) {
          const answer = JSON.stringify(api(method, token, body));
          await new Promise((r) => setTimeout(r, behaviour.answerLatencyMs));
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
          return;
        }
        if (f?.lateMs !== undefined || f?.resetAfter) {
          const answer = JSON.stringify(api(method, token, body));
          if (f.resetAfter) {
            req.socket.destroy();
            return;
          }
          await new Promise((r) => setTimeout(r, f.lateMs));
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
          return;
        }
        if (isHook) {
          const uses = (responseUses.get(url.pathname) ?? 0) + 1;
          responseUses.set(url.pathname, uses);
          if (uses > 5) res.writeHead(404, { 'content-type': 'text/plain' }).end('used_url');
          else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(api(method, token, body)));
      })();
    });
  });
  const socket = attachSocketMode(server, ws.apiAppId);

  const listen = (p: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      socket.terminateAll();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  await listen(0);
  const url = `http://127.0.0.1:${port}`;
  const responseUrl = (): string => `${url}/hooks/response/${ws.teamId}/${++hookSeq}/secret${hookSeq}`;

  return {
    url,
    apiUrl: `${url}/api/`,
    workspace: ws,
    signingSecret,
    botToken,
    appToken,
    requests,
    calls: (method) => requests.filter((r) => r.method === method),
    messages,
    deleted,
    users,
    message: (channel, ts) => messages.find((m) => m.channel === channel && m.ts === ts),
    setBehaviour(b) {
      if (b.latencyMs !== undefined) behaviour.latencyMs = b.latencyMs;
      if (b.answerLatencyMs !== undefined) behaviour.answerLatencyMs = b.answerLatencyMs;
      if (b.failures !== undefined) behaviour.failures = [...b.failures];
      if (b.notMemberOf !== undefined) behaviour.notMemberOf = [...b.notMemberOf];
    },
    failNext(f) {
      behaviour.failures.push(f);
    },
    down: stop,
    up: () => listen(port),
    responseUrl,
    signed: {
      event(event, o = {}) {
        const eventId = o.eventId ?? nextEventId();
        return { ...signEvent(signingSecret, eventEnvelope(ws, event, { eventId }), o), eventId };
      },
      command(o, s) {
        return signForm(signingSecret, slashCommandForm(ws, { user: 'U0ANN', channel: 'C0INCIDENTS', responseUrl: responseUrl(), ...compact(o) }), s);
      },
      action(o, s) {
        return signInteraction(signingSecret, blockActionsPayload(ws, { user: 'U0ANN', channel: 'C0INCIDENTS', responseUrl: responseUrl(), ...compact(o) }), s);
      },
    },
    socket,
    waitFor: (fn, timeoutMs) => waitFor(fn, { what: 'a condition on the Slack fake', ...(timeoutMs ? { timeoutMs } : {}) }),
    async close() {
      socket.close();
      if (server.listening) await stop();
    },
  };
}
