/**
 * A small Mattermost server on 127.0.0.1, port 0, speaking the REST API v4 and the WebSocket
 * protocol the bot uses: `users/me`, users, channels by id and by `team/name`, channel members,
 * `POST /posts`, `PUT /posts/{id}/patch`, `POST /posts/ephemeral`, `GET`/`DELETE /posts/{id}`,
 * `GET /channels/{id}/posts?since=` (with `metadata.reactions` and `acknowledgements`), and
 * `POST /hooks/commands/{id}` (a slash command's response_url), and
 * `/api/v4/websocket` (an `authentication_challenge`, then `hello` and events numbered by `seq`
 * per connection: `posted`, `post_edited`, `reaction_added`, `reaction_removed`,
 * `post_acknowledgement_added`).
 *
 * Test controls act as other users (a post, a thread reply, a reaction and its removal, an
 * acknowledgement), rate-limit (429 with `X-Ratelimit-Reset`), fail sends (optionally after
 * storing the post: an unknown outcome), drop every WebSocket and refuse new ones for a while,
 * and skip a `seq` number. Everything received is recorded so tests assert on the wire.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakePost {
  id: string;
  channel_id: string;
  user_id: string;
  root_id: string;
  message: string;
  type: string;
  create_at: number;
  update_at: number;
  edit_at: number;
  delete_at: number;
  props: Record<string, unknown>;
  reactions: Array<{ user_id: string; post_id: string; emoji_name: string; create_at: number }>;
  acknowledgements: Array<{ user_id: string; post_id: string; acknowledged_at: number }>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
  body?: unknown;
}

export interface FakeEphemeral {
  user_id: string;
  channel_id: string;
  root_id: string;
  message: string;
}

export interface MattermostFakeBehaviour {
  /** The next `times` writes (posts, patches, ephemerals) are answered 429 with `X-Ratelimit-Reset: resetSeconds`. */
  rateLimit?: { times: number; resetSeconds: number };
  /** The next `times` `POST /posts` are answered `status`; with `afterStore`, the post is made first (an unknown outcome). */
  failPosts?: { times: number; status: number; afterStore?: boolean };
  /** New WebSocket connections are refused (HTTP 503) while set. */
  refuseSockets?: boolean;
  /** The next event sent on a socket skips one `seq` number. */
  skipSeq?: boolean;
}

export interface MattermostFake {
  url: string;
  botToken: string;
  bot: { id: string; username: string };
  users: Record<'alice' | 'bob' | 'eve' | 'ann', { id: string; username: string }>;
  team: string;
  /** Channel ids by name; `incidents` is the default channel. */
  channels: Record<'incidents' | 'payments' | 'elsewhere', string>;
  requests: RecordedRequest[];
  /** Every post, in order of creation. */
  posts: FakePost[];
  ephemerals: FakeEphemeral[];
  /** What was posted to a slash command's `response_url` (`<url>/hooks/commands/…`). */
  responses: Array<{ path: string; body: Record<string, unknown> }>;
  /** WebSocket connections that authenticated, in total. */
  readonly authenticated: number;
  /** Open, authenticated WebSocket connections. */
  readonly open: number;
  /** Events sent on the bot's WebSockets (after `hello`), in total: a test waits until the bot handled as many. */
  readonly eventsSent: number;
  /** The bot's root posts in a channel. */
  roots(channel: string): FakePost[];
  /** The replies in the thread of `root`. */
  thread(root: string): FakePost[];
  post(id: string): FakePost | undefined;
  say(channel: string, user: string, message: string, rootId?: string, extra?: Partial<FakePost>): FakePost;
  react(user: string, postId: string, emoji: string): void;
  unreact(user: string, postId: string, emoji: string): void;
  acknowledge(user: string, postId: string): void;
  /** Closes every WebSocket (as a load balancer restarting would). */
  dropSockets(): void;
  setBehaviour(b: MattermostFakeBehaviour): void;
  close(): Promise<void>;
}

const id = (): string => randomBytes(13).toString('hex').slice(0, 26);

export async function startMattermostFake(): Promise<MattermostFake> {
  const botToken = `mmtoken${randomBytes(12).toString('hex')}`;
  const bot = { id: id(), username: 'reprise' };
  const users = {
    alice: { id: id(), username: 'alice' },
    bob: { id: id(), username: 'bob' },
    eve: { id: id(), username: 'eve' },
    ann: { id: id(), username: 'ann' },
  };
  const teamId = id();
  const team = 'ops';
  const channels = { incidents: id(), payments: id(), elsewhere: id() };
  const channelInfo = new Map(Object.entries(channels).map(([name, cid]) => [cid, { id: cid, name, team_id: teamId, type: 'O' }]));
  const members = new Map<string, Set<string>>([
    [channels.incidents, new Set([bot.id, ...Object.values(users).map((u) => u.id)])],
    [channels.payments, new Set([bot.id, users.alice.id, users.bob.id])],
    [channels.elsewhere, new Set([users.alice.id])],
  ]);
  const allUsers = new Map([bot, ...Object.values(users)].map((u) => [u.id, { ...u, is_bot: u.id === bot.id }]));
  const posts: FakePost[] = [];
  const byId = new Map<string, FakePost>();
  const requests: RecordedRequest[] = [];
  const ephemerals: FakeEphemeral[] = [];
  const responses: Array<{ path: string; body: Record<string, unknown> }> = [];
  let behaviour: MattermostFakeBehaviour = {};
  let lastTime = 0;
  const now = (): number => (lastTime = Math.max(Date.now(), lastTime + 1));
  const sockets = new Set<{ ws: WebSocket; seq: number }>();
  let authenticated = 0;
  let eventsSent = 0;

  const broadcast = (event: string, channel: string, data: Record<string, unknown>): void => {
    if (!members.get(channel)?.has(bot.id)) return;
    for (const s of sockets) {
      if (behaviour.skipSeq) {
        s.seq++;
        behaviour = { ...behaviour, skipSeq: false };
      }
      s.ws.send(JSON.stringify({ event, data, broadcast: { channel_id: channel }, seq: s.seq++ }));
      eventsSent++;
    }
  };
  const wire = (p: FakePost): Record<string, unknown> => {
    const { reactions, acknowledgements, ...rest } = p;
    return { ...rest, metadata: { ...(reactions.length ? { reactions } : {}), ...(acknowledgements.length ? { acknowledgements } : {}) } };
  };
  const create = (
    p: Omit<FakePost, 'id' | 'create_at' | 'update_at' | 'edit_at' | 'delete_at' | 'reactions' | 'acknowledgements' | 'type'> & { type?: string },
  ): FakePost => {
    const at = now();
    const post: FakePost = { type: '', ...p, id: id(), create_at: at, update_at: at, edit_at: 0, delete_at: 0, reactions: [], acknowledgements: [] };
    posts.push(post);
    byId.set(post.id, post);
    broadcast('posted', post.channel_id, { post: JSON.stringify(wire(post)), channel_type: 'O' });
    return post;
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const err = (res: ServerResponse, status: number, idText: string, message: string): void => send(res, status, { id: idText, message, status_code: status });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const method = req.method ?? 'GET';
      let body: Record<string, unknown> = {};
      try {
        body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      } catch {
        err(res, 400, 'api.context.invalid_body_param.app_error', 'invalid body');
        return;
      }
      const record = (status: number): void => void requests.push({ method, path: url.pathname + url.search, status, ...(chunks.length ? { body } : {}) });
      // A slash command's response_url: no token, the id in the path is the credential.
      if (method === 'POST' && url.pathname.startsWith('/hooks/commands/')) {
        responses.push({ path: url.pathname, body });
        record(200);
        return send(res, 200, {});
      }
      const path = url.pathname.replace(/^\/api\/v4/, '');
      if (req.headers.authorization !== `Bearer ${botToken}`) {
        record(401);
        return err(res, 401, 'api.context.session_expired.app_error', 'Invalid or expired session, please login again.');
      }
      const write = method !== 'GET';
      if (write && behaviour.rateLimit && behaviour.rateLimit.times > 0 && path.startsWith('/posts')) {
        behaviour.rateLimit.times--;
        record(429);
        return send(
          res,
          429,
          { message: 'too many requests' },
          { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(behaviour.rateLimit.resetSeconds) },
        );
      }
      let m: RegExpExecArray | null;
      const ok = (b: unknown): void => {
        record(200);
        send(res, 200, b);
      };
      const notFound = (): void => {
        record(404);
        err(res, 404, 'app.post.get.app_error', 'not found');
      };
      if (method === 'GET' && path === '/users/me') return ok(allUsers.get(bot.id));
      if (method === 'GET' && (m = /^\/users\/email\/([^/]+)$/.exec(path))) {
        // Everyone's email is `<username>@example.org` here; nobody else has one.
        const email = decodeURIComponent(m[1]!).toLowerCase();
        const u = [...allUsers.values()].find((x) => `${x.username}@example.org` === email);
        return u ? ok({ ...u, email }) : notFound();
      }
      if (method === 'GET' && (m = /^\/users\/([a-z0-9]+)$/.exec(path))) return allUsers.has(m[1]!) ? ok(allUsers.get(m[1]!)) : notFound();
      if (method === 'GET' && (m = /^\/teams\/name\/([^/]+)\/channels\/name\/([^/]+)$/.exec(path))) {
        const c = decodeURIComponent(m[1]!) === team ? [...channelInfo.values()].find((x) => x.name === decodeURIComponent(m![2]!)) : undefined;
        return c ? ok(c) : notFound();
      }
      if (method === 'GET' && (m = /^\/channels\/([a-z0-9]+)\/members\/([a-z0-9]+)$/.exec(path)))
        return members.get(m[1]!)?.has(m[2]!) ? ok({ channel_id: m[1], user_id: m[2] }) : notFound();
      if (method === 'GET' && (m = /^\/channels\/([a-z0-9]+)\/posts$/.exec(path))) {
        if (!members.get(m[1]!)?.has(bot.id)) return notFound();
        const since = Number(url.searchParams.get('since') ?? '0');
        const hits = posts.filter((p) => p.channel_id === m![1] && p.update_at >= since).reverse();
        return ok({ order: hits.map((p) => p.id), posts: Object.fromEntries(hits.map((p) => [p.id, wire(p)])) });
      }
      if (method === 'GET' && (m = /^\/channels\/([a-z0-9]+)$/.exec(path))) return channelInfo.has(m[1]!) ? ok(channelInfo.get(m[1]!)) : notFound();
      if (method === 'POST' && path === '/posts') {
        const channel = String(body['channel_id'] ?? '');
        if (!members.get(channel)?.has(bot.id)) {
          record(403);
          return err(res, 403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.');
        }
        const f = behaviour.failPosts;
        if (f && f.times > 0) {
          f.times--;
          if (f.afterStore)
            create({
              channel_id: channel,
              user_id: bot.id,
              root_id: String(body['root_id'] ?? ''),
              message: String(body['message'] ?? ''),
              props: (body['props'] ?? {}) as Record<string, unknown>,
            });
          record(f.status);
          return err(res, f.status, 'fake.failure', 'scripted failure');
        }
        const p = create({
          channel_id: channel,
          user_id: bot.id,
          root_id: String(body['root_id'] ?? ''),
          message: String(body['message'] ?? ''),
          props: (body['props'] ?? {}) as Record<string, unknown>,
        });
        record(201);
        return send(res, 201, wire(p));
      }
      if (method === 'PUT' && (m = /^\/posts\/([a-z0-9]+)\/patch$/.exec(path))) {
        const p = byId.get(m[1]!);
        if (!p || p.delete_at > 0) return notFound();
        if (typeof body['message'] === 'string') p.message = body['message'];
        if (body['props'] && typeof body['props'] === 'object') p.props = body['props'] as Record<string, unknown>;
        p.update_at = p.edit_at = now();
        broadcast('post_edited', p.channel_id, { post: JSON.stringify(wire(p)) });
        return ok(wire(p));
      }
      if (method === 'POST' && path === '/posts/ephemeral') {
        const post = (body['post'] ?? {}) as Record<string, unknown>;
        ephemerals.push({
          user_id: String(body['user_id'] ?? ''),
          channel_id: String(post['channel_id'] ?? ''),
          root_id: String(post['root_id'] ?? ''),
          message: String(post['message'] ?? ''),
        });
        record(201);
        return send(res, 201, { id: id(), ...post });
      }
      if ((m = /^\/posts\/([a-z0-9]+)$/.exec(path))) {
        const p = byId.get(m[1]!);
        if (!p || p.delete_at > 0) return notFound();
        if (method === 'GET') return ok(wire(p));
        if (method === 'DELETE') {
          p.delete_at = p.update_at = now();
          return ok({ status: 'OK' });
        }
      }
      record(404);
      err(res, 404, 'api.no_route', `no route ${method} ${path}`);
    });
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/api/v4/websocket' || behaviour.refuseSockets) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      let entry: { ws: WebSocket; seq: number } | undefined;
      ws.on('message', (raw) => {
        let msg: { seq?: unknown; action?: unknown; data?: { token?: unknown } };
        try {
          msg = JSON.parse(String(raw)) as typeof msg;
        } catch {
          return;
        }
        if (msg.action === 'authentication_challenge' && !entry) {
          if (msg.data?.token !== botToken) {
            ws.send(JSON.stringify({ status: 'FAIL', seq_reply: msg.seq, error: { id: 'api.web_socket_router.bad_token', message: 'invalid token' } }));
            ws.close(4001);
            return;
          }
          ws.send(JSON.stringify({ status: 'OK', seq_reply: msg.seq }));
          entry = { ws, seq: 0 };
          ws.send(JSON.stringify({ event: 'hello', data: { server_version: 'fake' }, broadcast: { user_id: bot.id }, seq: entry.seq++ }));
          sockets.add(entry);
          authenticated++;
        }
      });
      ws.on('close', () => {
        if (entry) sockets.delete(entry);
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const find = (postId: string): FakePost => {
    const p = byId.get(postId);
    if (!p) throw new Error(`fake: no post ${postId}`);
    return p;
  };

  return {
    url,
    botToken,
    bot,
    users,
    team,
    channels,
    requests,
    posts,
    ephemerals,
    responses,
    get eventsSent() {
      return eventsSent;
    },
    get authenticated() {
      return authenticated;
    },
    get open() {
      return sockets.size;
    },
    roots: (channel) => posts.filter((p) => p.channel_id === channel && p.user_id === bot.id && p.root_id === '' && p.delete_at === 0),
    thread: (root) => posts.filter((p) => p.root_id === root && p.delete_at === 0),
    post: (pid) => byId.get(pid),
    say: (channel, user, message, rootId = '', extra = {}) => create({ channel_id: channel, user_id: user, root_id: rootId, message, props: {}, ...extra }),
    react: (user, postId, emoji) => {
      const p = find(postId);
      const r = { user_id: user, post_id: postId, emoji_name: emoji, create_at: now() };
      p.reactions.push(r);
      p.update_at = r.create_at;
      broadcast('reaction_added', p.channel_id, { reaction: JSON.stringify(r) });
    },
    unreact: (user, postId, emoji) => {
      const p = find(postId);
      const i = p.reactions.findIndex((r) => r.user_id === user && r.emoji_name === emoji);
      if (i < 0) return;
      const [r] = p.reactions.splice(i, 1);
      p.update_at = now();
      broadcast('reaction_removed', p.channel_id, { reaction: JSON.stringify(r) });
    },
    acknowledge: (user, postId) => {
      const p = find(postId);
      const a = { user_id: user, post_id: postId, acknowledged_at: now() };
      p.acknowledgements.push(a);
      p.update_at = a.acknowledged_at;
      broadcast('post_acknowledgement_added', p.channel_id, { acknowledgement: JSON.stringify(a) });
    },
    dropSockets: () => {
      for (const s of sockets) s.ws.terminate();
      sockets.clear();
    },
    setBehaviour: (b) => {
      behaviour = { ...behaviour, ...b };
    },
    close: async () => {
      for (const s of sockets) s.ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
