/**
 * A small Matrix homeserver on 127.0.0.1, port 0, speaking the client-server API the real
 * `matrix-bot-sdk` client uses: `/versions`, `/account/whoami`, filters, long-polling `/sync`
 * (timeline with `limited`/`prev_batch`, invites), `/messages`, `PUT /send/{type}/{txnId}`
 * (idempotent per access token and transaction id), redactions, `/join`, room state, single
 * events, profiles, aliases and account data.
 *
 * Test controls act as other users (a reaction, a thread reply, a `!reprise` command, an
 * invite), rate-limit (429 `M_LIMIT_EXCEEDED` with `retry_after_ms`), fail or drop connections.
 * Everything received is recorded (`requests`, `sent`) so tests assert on the wire. Reusable in
 * end-to-end tests: `startMatrixFake()` → `{ url, botToken, room, … }`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeRooms, MatrixFakeError, type FakeEvent } from './matrix-fake-rooms.js';

export type { FakeEvent } from './matrix-fake-rooms.js';

export interface MatrixFakeOptions {
  serverName?: string;
  botUserId?: string;
  botToken?: string;
  botDisplayName?: string;
  /**
   * Rooms to create at start. The bot is joined to each unless `join: false` (then it is
   * invited when `invite: true`, or left out).
   */
  rooms?: Array<{ id?: string; alias?: string; join?: boolean; invite?: boolean; encrypted?: boolean; public?: boolean }>;
  /** Clock of the fake (origin_server_ts, ages). */
  now?: () => number;
  /** Other users' profile display names (`GET /profile/{user}`); anyone else has no profile (404). */
  displayNames?: Record<string, string>;
}

/** How the fake misbehaves, changed at any time with `setBehaviour`. */
export interface MatrixFakeBehaviour {
  /** The next `sends` sends/redactions are answered 429 `M_LIMIT_EXCEEDED` with this delay. */
  rateLimit?: { sends: number; retryAfterMs: number };
  /** The next `times` sends are answered `status` (5xx, 403 …) with `errcode`. */
  failSends?: { times: number; status: number; errcode: string };
  /** Every request's connection is dropped (a homeserver that is down); pending syncs too. */
  down?: boolean;
  /**
   * The next `times` requests whose `METHOD /path` (after `/_matrix/client/v3`, e.g. `GET /sync`,
   * `GET /rooms/!r:fake.test/messages`) matches `endpoint` are answered 429 `M_LIMIT_EXCEEDED`
   * with `retry_after_ms`.
   */
  rateLimitEndpoint?: { endpoint: RegExp; times: number; retryAfterMs: number };
  /** The same, answered `status` with `errcode` (a single event lookup that fails: `GET /rooms/…/event/…`). */
  failEndpoint?: { endpoint: RegExp; times: number; status: number; errcode: string };
  /** A `/sync` carries up to this many timeline events per room, whatever the filter asks (one very large batch). */
  timelineLimit?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  user: string | undefined;
  status: number;
}

/** One `PUT …/send/{type}/{txnId}` the fake accepted. `replay` when the txnId was seen before. */
export interface RecordedSend {
  room: string;
  type: string;
  txnId: string;
  user: string;
  content: Record<string, unknown>;
  eventId: string;
  replay: boolean;
}

export interface MatrixFake {
  /** Homeserver URL to configure (`MATRIX_HOMESERVER_URL`). */
  url: string;
  serverName: string;
  botUserId: string;
  botToken: string;
  /** The first room created from `options.rooms` (or a default room the bot is in). */
  room: string;
  requests: RecordedRequest[];
  /** Accepted sends (by the bot), in order; replays of a txnId are recorded with `replay: true`. */
  sent: RecordedSend[];
  /** Syncs answered so far. */
  syncs(): number;
  /**
   * Whether a client (the bot) is long-polling `/sync` with nothing newer to get: it has read
   * every event, and — its position moving only once a batch was handled — handled them.
   */
  caughtUp(): boolean;
  createRoom(opts?: { id?: string; alias?: string; encrypted?: boolean; public?: boolean; join?: string[] }): string;
  invite(room: string, userId: string): void;
  join(room: string, userId: string): void;
  /** Adds an event as `sender` (any user; joined automatically if not a member). */
  inject(room: string, e: { sender: string; type: string; content: Record<string, unknown>; state_key?: string; redacts?: string }): string;
  react(room: string, sender: string, target: string, key: string): string;
  redact(room: string, sender: string, eventId: string): string;
  /** A top-level text message. */
  say(room: string, sender: string, body: string, extra?: Record<string, unknown>): string;
  /** A reply in the thread of `root`. */
  replyInThread(room: string, sender: string, root: string, body: string, extra?: Record<string, unknown>): string;
  /** Every event of a room, oldest first, as stored. */
  events(room: string): FakeEvent[];
  event(id: string): FakeEvent | undefined;
  /** The content a client shows for an event: its latest edit applied. */
  current(eventId: string): Record<string, unknown> | undefined;
  /** Events in the thread of `root` (relation `m.thread`), oldest first. */
  thread(root: string): FakeEvent[];
  setBehaviour(b: MatrixFakeBehaviour): void;
  close(): Promise<void>;
}

const PREFIX = /^\/_matrix\/client\/(?:r0|v3|v1)(\/.*)$/;

export async function startMatrixFake(opts: MatrixFakeOptions = {}): Promise<MatrixFake> {
  const serverName = opts.serverName ?? 'fake.test';
  const botUserId = opts.botUserId ?? `@reprise:${serverName}`;
  const botToken = opts.botToken ?? 'syt_reprise_fake_token';
  const now = opts.now ?? (() => Date.now());
  const state = new FakeRooms(serverName, now);
  const tokens = new Map([[botToken, botUserId]]);
  const displayNames = new Map([...Object.entries(opts.displayNames ?? {}), [botUserId, opts.botDisplayName ?? 'Reprise']]);
  const filters = new Map<string, unknown>();
  const accountData = new Map<string, unknown>();
  const txns = new Map<string, string>();
  const requests: RecordedRequest[] = [];
  const sent: RecordedSend[] = [];
  let behaviour: MatrixFakeBehaviour = {};
  let syncCount = 0;
  const pending = new Set<ServerResponse>();
  /** The long-polls waiting now, each asking whether it still has nothing to answer. */
  const waiting = new Map<ServerResponse, () => boolean>();

  const createRoom: MatrixFake['createRoom'] = (o = {}) => {
    const room = state.createRoom({ ...(o.id ? { id: o.id } : {}), ...(o.alias ? { alias: o.alias } : {}), public: o.public ?? false });
    if (o.encrypted)
      state.append({
        room_id: room.id,
        sender: `@admin:${serverName}`,
        type: 'm.room.encryption',
        state_key: '',
        content: { algorithm: 'm.megolm.v1.aes-sha2' },
      });
    for (const u of o.join ?? []) state.setMembership(room.id, u, 'join');
    return room.id;
  };

  let first: string | undefined;
  for (const r of opts.rooms ?? [{}]) {
    const id = createRoom({
      ...(r.id ? { id: r.id } : {}),
      ...(r.alias ? { alias: r.alias } : {}),
      ...(r.encrypted ? { encrypted: true } : {}),
      ...(r.public ? { public: true } : {}),
    });
    first ??= id;
    if (r.join ?? true) state.setMembership(id, botUserId, 'join');
    else if (r.invite) state.setMembership(id, botUserId, 'invite', `@admin:${serverName}`);
  }

  const ensureMember = (room: string, user: string): void => {
    if (state.membership(room, user) !== 'join') state.setMembership(room, user, 'join');
  };

  const inject: MatrixFake['inject'] = (room, e) => {
    ensureMember(room, e.sender);
    return state.send({ room_id: room, ...e }).event_id;
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { errcode: 'M_UNKNOWN', error: String(err) });
    });
  });
  // Node closes an idle keep-alive socket after 5 s; a client reusing it at that moment reads
  // ECONNRESET (seen on a loaded machine between two sends of one test). A homeserver behind a
  // proxy keeps connections far longer: so does the stand-in.
  server.keepAliveTimeout = 120_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const rec: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query, user: undefined, status: 0 };
    requests.push(rec);
    if (behaviour.down) {
      req.socket.destroy();
      rec.status = -1;
      return;
    }
    const reply = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      rec.status = status;
      json(res, status, payload, headers);
    };
    try {
      const body = await readBody(req);
      if (url.pathname === '/_matrix/client/versions') return reply(200, { versions: ['v1.1', 'v1.5', 'v1.7', 'v1.11'], unstable_features: {} });
      const m = PREFIX.exec(url.pathname);
      if (!m) throw new MatrixFakeError(404, 'M_UNRECOGNIZED', `unknown endpoint ${url.pathname}`);
      const path = m[1]!;
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? url.searchParams.get('access_token') ?? undefined;
      if (!auth) throw new MatrixFakeError(401, 'M_MISSING_TOKEN', 'missing access token');
      const user = tokens.get(auth);
      if (!user) throw new MatrixFakeError(401, 'M_UNKNOWN_TOKEN', 'unknown access token', { soft_logout: false });
      rec.user = user;
      const seg = path.split('/').slice(1).map(decodeURIComponent);
      const method = req.method ?? 'GET';
      const route = `${method} /${seg[0] ?? ''}`;
      const limited = behaviour.rateLimitEndpoint;
      if (limited && limited.times > 0 && limited.endpoint.test(`${method} /${seg.join('/')}`)) {
        limited.times--;
        throw new MatrixFakeError(429, 'M_LIMIT_EXCEEDED', 'Too Many Requests', { retry_after_ms: limited.retryAfterMs });
      }
      const failing = behaviour.failEndpoint;
      if (failing && failing.times > 0 && failing.endpoint.test(`${method} /${seg.join('/')}`)) {
        failing.times--;
        throw new MatrixFakeError(failing.status, failing.errcode, `scripted ${failing.status}`);
      }

      if (route === 'GET /account' && seg[1] === 'whoami') return reply(200, { user_id: user, device_id: 'FAKEDEVICE', is_guest: false });
      if (route === 'GET /sync') return sync(user, query, res, rec);
      if (route === 'GET /joined_rooms')
        return reply(200, { joined_rooms: [...state.rooms.values()].filter((r) => r.members.get(user) === 'join').map((r) => r.id) });
      if (route === 'POST /join') return reply(200, { room_id: joinRoom(user, seg[1]!) });
      if (route === 'GET /profile') {
        const name = displayNames.get(seg[1]!);
        if (name === undefined) throw new MatrixFakeError(404, 'M_NOT_FOUND', 'no profile');
        return reply(200, seg[2] === 'displayname' ? { displayname: name } : { displayname: name });
      }
      if (route === 'GET /directory' && seg[1] === 'room') {
        const room = [...state.rooms.values()].find((r) => r.alias === seg[2]);
        if (!room) throw new MatrixFakeError(404, 'M_NOT_FOUND', `no alias ${seg[2]}`);
        return reply(200, { room_id: room.id, servers: [serverName] });
      }
      if (seg[0] === 'user') {
        if (seg[1] !== user) throw new MatrixFakeError(403, 'M_FORBIDDEN', 'not your user');
        if (method === 'POST' && seg[2] === 'filter') {
          const id = String(filters.size + 1);
          filters.set(`${user}/${id}`, body);
          return reply(200, { filter_id: id });
        }
        if (method === 'GET' && seg[2] === 'filter') {
          const f = filters.get(`${user}/${seg[3]}`);
          if (!f) throw new MatrixFakeError(404, 'M_NOT_FOUND', 'no filter');
          return reply(200, f);
        }
        if (seg[2] === 'account_data') {
          const key = `${user}/${seg[3]}`;
          if (method === 'PUT') {
            accountData.set(key, body);
            return reply(200, {});
          }
          if (!accountData.has(key)) throw new MatrixFakeError(404, 'M_NOT_FOUND', 'Account data not found');
          return reply(200, accountData.get(key));
        }
      }
      if (seg[0] === 'rooms' && seg[1]) return roomRoute(user, method, seg[1], seg.slice(2), query, body, reply);
      throw new MatrixFakeError(404, 'M_UNRECOGNIZED', `unknown endpoint ${method} ${url.pathname}`);
    } catch (err) {
      if (err instanceof MatrixFakeError) {
        const headers: Record<string, string> = {};
        if (typeof err.extra['retry_after_ms'] === 'number') headers['retry-after'] = String(Math.ceil(err.extra['retry_after_ms'] / 1000));
        return reply(err.status, { errcode: err.errcode, error: err.message, ...err.extra }, headers);
      }
      throw err;
    }
  }

  function joinRoom(user: string, idOrAlias: string): string {
    const room = idOrAlias.startsWith('#') ? [...state.rooms.values()].find((r) => r.alias === idOrAlias) : state.rooms.get(idOrAlias);
    if (!room) throw new MatrixFakeError(404, 'M_NOT_FOUND', `no room ${idOrAlias}`);
    const m = room.members.get(user);
    if (m !== 'join') {
      if (m !== 'invite' && !room.public) throw new MatrixFakeError(403, 'M_FORBIDDEN', 'You are not invited to this room.');
      state.setMembership(room.id, user, 'join');
    }
    return room.id;
  }

  function misbehaveOnSend(): void {
    const rl = behaviour.rateLimit;
    if (rl && rl.sends > 0) {
      rl.sends--;
      throw new MatrixFakeError(429, 'M_LIMIT_EXCEEDED', 'Too Many Requests', { retry_after_ms: rl.retryAfterMs });
    }
    const f = behaviour.failSends;
    if (f && f.times > 0) {
      f.times--;
      throw new MatrixFakeError(f.status, f.errcode, `scripted ${f.status}`);
    }
  }

  function roomRoute(
    user: string,
    method: string,
    roomId: string,
    rest: string[],
    query: Record<string, string>,
    body: unknown,
    reply: (status: number, payload: unknown) => void,
  ): void {
    const [what, a, b] = rest;
    if (method === 'POST' && what === 'join') return reply(200, { room_id: joinRoom(user, roomId) });
    const room = state.rooms.get(roomId);
    const member = room?.members.get(user) === 'join';
    if (method === 'POST' && what === 'leave') {
      if (room && room.members.has(user)) state.setMembership(roomId, user, 'leave');
      return reply(200, {});
    }
    // Synapse answers 403 both for an unknown room and for one the user is not in.
    if (!room || !member) throw new MatrixFakeError(403, 'M_FORBIDDEN', `User ${user} not in room ${roomId}`);
    if (method === 'PUT' && (what === 'send' || what === 'redact') && a && b) {
      misbehaveOnSend();
      const txnKey = `${user}\u0000${b}`;
      const content = (body ?? {}) as Record<string, unknown>;
      const type = what === 'send' ? a : 'm.room.redaction';
      const seen = txns.get(txnKey);
      if (seen) {
        sent.push({ room: roomId, type, txnId: b, user, content, eventId: seen, replay: true });
        return reply(200, { event_id: seen });
      }
      const e =
        what === 'send'
          ? state.send({ room_id: roomId, sender: user, type, content }, b)
          : state.send({ room_id: roomId, sender: user, type, content: { ...content, redacts: a }, redacts: a }, b);
      txns.set(txnKey, e.event_id);
      sent.push({ room: roomId, type, txnId: b, user, content, eventId: e.event_id, replay: false });
      return reply(200, { event_id: e.event_id });
    }
    if (method === 'GET' && what === 'event' && a) {
      const e = state.view(a, user);
      if (!e || e.room_id !== roomId) throw new MatrixFakeError(404, 'M_NOT_FOUND', 'Event not found.');
      return reply(200, e);
    }
    if (method === 'GET' && what === 'state') {
      if (!a) return reply(200, [...room.state.values()]);
      const e = room.state.get(`${a}\u0000${b ?? ''}`);
      if (!e) throw new MatrixFakeError(404, 'M_NOT_FOUND', 'Event not found.');
      return reply(200, e.content);
    }
    if (method === 'GET' && what === 'joined_members') {
      const joined = Object.fromEntries([...room.members].filter(([, m]) => m === 'join').map(([u]) => [u, { display_name: displayNames.get(u) ?? null }]));
      return reply(200, { joined });
    }
    if (method === 'GET' && what === 'messages') return reply(200, messages(user, roomId, query));
    throw new MatrixFakeError(404, 'M_UNRECOGNIZED', `unknown room endpoint ${method} ${rest.join('/')}`);
  }

  function messages(user: string, roomId: string, q: Record<string, string>): unknown {
    if (q['dir'] !== 'b') throw new MatrixFakeError(400, 'M_INVALID_PARAM', 'only dir=b is supported by the fake');
    const from = q['from'] ? parseToken(q['from']) : state.head;
    const to = q['to'] ? parseToken(q['to']) : 0;
    const limit = Math.min(Number(q['limit'] ?? 10) || 10, 1000);
    const window = state.between(roomId, to, from, user).reverse();
    const chunk = window.slice(0, limit);
    const more = window.length > limit;
    return { chunk: chunk.map((c) => c.event), start: `s${from}`, ...(more ? { end: `s${chunk.at(-1)!.pos - 1}` } : {}) };
  }

  function timelineLimit(user: string, q: Record<string, string>): number {
    if (behaviour.timelineLimit !== undefined) return behaviour.timelineLimit;
    const f = q['filter'];
    if (!f) return 10;
    let filter: unknown;
    if (f.startsWith('{')) filter = JSON.parse(f);
    else filter = filters.get(`${user}/${f}`);
    const limit = (filter as { room?: { timeline?: { limit?: number } } } | undefined)?.room?.timeline?.limit;
    return typeof limit === 'number' && limit > 0 ? limit : 10;
  }

  function syncBody(user: string, since: number | undefined, limit: number): { body: Record<string, unknown>; empty: boolean } {
    const head = state.head;
    const join: Record<string, unknown> = {};
    const invite: Record<string, unknown> = {};
    let empty = true;
    for (const room of state.rooms.values()) {
      if (room.members.get(user) !== 'join') continue;
      const all = state.between(room.id, since ?? 0, head, user);
      if (since !== undefined && all.length === 0) continue;
      const shown = all.slice(-limit);
      const limited = all.length > shown.length;
      const firstPos = shown[0]?.pos ?? head + 1;
      join[room.id] = {
        timeline: { events: shown.map((s) => s.event), limited, prev_batch: `s${firstPos - 1}` },
        state: { events: since === undefined ? [...room.state.values()] : [] },
        account_data: { events: [] },
        ephemeral: { events: [] },
      };
      if (all.length > 0) empty = false;
    }
    for (const inv of state.invitesSince(user, since ?? 0)) {
      invite[inv.roomId] = { invite_state: { events: [inv.event] } };
      empty = false;
    }
    return { body: { next_batch: `s${head}`, rooms: { join, invite, leave: {} }, account_data: { events: [] }, presence: { events: [] } }, empty };
  }

  function sync(user: string, q: Record<string, string>, res: ServerResponse, rec: RecordedRequest): void {
    const since = q['since'] !== undefined ? parseToken(q['since']) : undefined;
    const limit = timelineLimit(user, q);
    const timeout = Math.min(Number(q['timeout'] ?? 0) || 0, 60_000);
    const answer = (): void => {
      if (res.writableEnded || res.destroyed) return;
      syncCount++;
      rec.status = 200;
      json(res, 200, syncBody(user, since, limit).body);
    };
    if (since === undefined || !syncBody(user, since, limit).empty || timeout === 0) return answer();
    pending.add(res);
    waiting.set(res, () => syncBody(user, since, limit).empty);
    const done = (): void => {
      clearTimeout(timer);
      off();
      pending.delete(res);
      waiting.delete(res);
    };
    const timer = setTimeout(() => {
      done();
      answer();
    }, timeout);
    const off = state.onChange(() => {
      if (syncBody(user, since, limit).empty) return;
      done();
      // Let the rest of a burst of injected events land in the same batch.
      setImmediate(answer);
    });
    res.on('close', done);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: MatrixFake = {
    url: `http://127.0.0.1:${port}`,
    serverName,
    botUserId,
    botToken,
    room: first!,
    requests,
    sent,
    syncs: () => syncCount,
    caughtUp: () => [...waiting.values()].some((empty) => empty()),
    createRoom,
    invite: (room, userId) => void state.setMembership(room, userId, 'invite', `@admin:${serverName}`),
    join: (room, userId) => ensureMember(room, userId),
    inject,
    react: (room, sender, target, key) =>
      inject(room, { sender, type: 'm.reaction', content: { 'm.relates_to': { rel_type: 'm.annotation', event_id: target, key } } }),
    redact: (room, sender, eventId) => inject(room, { sender, type: 'm.room.redaction', content: { redacts: eventId }, redacts: eventId }),
    say: (room, sender, body, extra = {}) => inject(room, { sender, type: 'm.room.message', content: { msgtype: 'm.text', body, ...extra } }),
    replyInThread: (room, sender, root, body, extra = {}) =>
      inject(room, {
        sender,
        type: 'm.room.message',
        content: {
          msgtype: 'm.text',
          body,
          'm.relates_to': { rel_type: 'm.thread', event_id: root, is_falling_back: true, 'm.in_reply_to': { event_id: root } },
          ...extra,
        },
      }),
    events: (room) => state.timeline(room),
    event: (id) => state.raw(id),
    current: (id) => state.current(id),
    thread: (root) => {
      const e = state.raw(root);
      if (!e) return [];
      return state.timeline(e.room_id).filter((x) => {
        const r = x.content['m.relates_to'] as { rel_type?: string; event_id?: string } | undefined;
        return r?.rel_type === 'm.thread' && r.event_id === root;
      });
    },
    setBehaviour: (b) => {
      behaviour = { ...behaviour, ...b };
      if (b.down) for (const r of pending) r.destroy();
    },
    close: async () => {
      for (const r of pending) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

function parseToken(t: string): number {
  const m = /^s(\d+)$/.exec(t);
  if (!m) throw new MatrixFakeError(400, 'M_INVALID_PARAM', `bad token ${t}`);
  return Number(m[1]);
}

function json(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  if (chunks.length === 0) return undefined;
  const raw = Buffer.concat(chunks).toString('utf8');
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new MatrixFakeError(400, 'M_NOT_JSON', 'Content not JSON.');
  }
}
