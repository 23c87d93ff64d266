/**
 * Memory-view sessions (issue 29 item 6): each sign-in gets its own random id — the cookie —
 * stored server-side in the configured store under a hash of the id (a store read never yields
 * a usable cookie), with an idle and an absolute expiry. A session is refused once signed out,
 * revoked (`reprise ui sessions revoke`), idle too long or too old; it survives a restart only
 * when the store is durable (the embedded file or Redis, not `memory://`). Every replica sharing
 * the store sees the same sessions, revocations included.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { KeyValueStore } from '../../ports/store.js';

const KEY = 'ui:session:';
/** The list of session hashes (for `list` and `revoke --all`); each session's own key is what counts. */
const INDEX = 'ui:sessions';
/** Sessions remembered in the index at most; the oldest go first (they are signed out). */
const MAX_SESSIONS = 500;

export interface SessionOptions {
  idleMs: number;
  maxMs: number;
}

/** What the store keeps of a session (never its id). */
export interface SessionRecord {
  /** sha256 of the id, hex; its first 12 characters name it in `reprise ui sessions`. */
  hash: string;
  createdAt: string;
  lastSeenAt: string;
  /** Who signed in, as far as the request said (for the list; never trusted for access). */
  peer?: string;
  agent?: string;
}

/** A session as `reprise ui sessions` shows it. */
export interface SessionSummary {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  idleUntil: string;
  expiresAt: string;
  peer?: string;
  agent?: string;
}

type SessionStore = Pick<KeyValueStore, 'get' | 'set' | 'delete' | 'setExpiring'>;

const hashOf = (id: string): string => createHash('sha256').update(id, 'utf8').digest('hex');
/** A cookie value as we issue it: 43 base64url characters; anything else is refused unread. */
const ID_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export class UiSessions {
  readonly #store: SessionStore;
  readonly #o: SessionOptions;

  constructor(store: SessionStore, opts: SessionOptions) {
    this.#store = store;
    this.#o = opts;
  }

  get options(): SessionOptions {
    return this.#o;
  }

  /** A new session; resolves with its id (the cookie value) once it is stored. */
  async create(now: Date, meta: { peer?: string; agent?: string } = {}): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const rec: SessionRecord = {
      hash: hashOf(id),
      createdAt: now.toISOString(),
      lastSeenAt: now.toISOString(),
      ...(meta.peer ? { peer: meta.peer.slice(0, 64) } : {}),
      ...(meta.agent ? { agent: meta.agent.slice(0, 120) } : {}),
    };
    await this.#put(rec);
    const index = (await this.#index()).filter((h) => h !== rec.hash);
    index.push(rec.hash);
    for (const old of index.splice(0, Math.max(0, index.length - MAX_SESSIONS))) await this.#store.delete(KEY + old);
    await this.#store.set(INDEX, index);
    return id;
  }

  /**
   * Whether the cookie is a live session; a used one is seen again (its idle clock restarts, at
   * most once a minute so a page of requests is not a page of writes). An expired one is removed.
   */
  async check(id: string | undefined, now: Date): Promise<{ ok: true; id: string } | { ok: false; why: string }> {
    if (id === undefined || id === '') return { ok: false, why: 'no session cookie' };
    if (!ID_SHAPE.test(id)) return { ok: false, why: 'not a session cookie' };
    const hash = hashOf(id);
    const rec = await this.#store.get<SessionRecord>(KEY + hash);
    if (!rec || rec.hash !== hash) return { ok: false, why: 'no such session (signed out, revoked or expired)' };
    const expired = this.#expired(rec, now);
    if (expired) {
      await this.#store.delete(KEY + hash);
      return { ok: false, why: expired };
    }
    if (now.getTime() - Date.parse(rec.lastSeenAt) >= Math.min(60_000, this.#o.idleMs / 10)) await this.#put({ ...rec, lastSeenAt: now.toISOString() }, now);
    return { ok: true, id: hash.slice(0, 12) };
  }

  /** Signs the cookie's session out (nothing when it is none). */
  async signOut(id: string | undefined): Promise<boolean> {
    if (id === undefined || !ID_SHAPE.test(id)) return false;
    return this.#drop(hashOf(id));
  }

  /** The live sessions, oldest first (expired ones are removed on the way). */
  async list(now: Date): Promise<SessionSummary[]> {
    const out: SessionSummary[] = [];
    const live: string[] = [];
    for (const hash of await this.#index()) {
      const rec = await this.#store.get<SessionRecord>(KEY + hash);
      if (!rec) continue;
      if (this.#expired(rec, now)) {
        await this.#store.delete(KEY + hash);
        continue;
      }
      live.push(hash);
      out.push(this.#summary(rec));
    }
    await this.#store.set(INDEX, live);
    return out;
  }

  /**
   * Revokes the sessions whose id (as `list` shows it) starts with `prefix` — at least 6
   * characters, and it must name one session — or every session with `all`. Resolves with what it revoked.
   * @throws Error saying why when the prefix is too short, names none or several.
   */
  async revoke(which: { prefix: string } | { all: true }, now: Date): Promise<SessionSummary[]> {
    const sessions = await this.list(now);
    let chosen: SessionSummary[];
    if ('all' in which) chosen = sessions;
    else {
      const p = which.prefix.trim().toLowerCase();
      if (!/^[0-9a-f]{6,64}$/.test(p))
        throw new Error(`"${which.prefix.slice(0, 80)}" is not a session id: give at least 6 of the hex characters \`reprise ui sessions\` lists, or --all`);
      chosen = sessions.filter((s) => s.id.startsWith(p) || p.startsWith(s.id));
      if (chosen.length === 0) throw new Error(`no live session has the id ${p}: \`reprise ui sessions\` lists them`);
      if (chosen.length > 1) throw new Error(`${chosen.length} sessions start with ${p}: give more of the id`);
    }
    const index = await this.#index();
    for (const s of chosen) {
      const hash = index.find((h) => h.startsWith(s.id));
      if (hash) await this.#drop(hash);
    }
    return chosen;
  }

  #expired(rec: SessionRecord, now: Date): string | undefined {
    const t = now.getTime();
    if (t - Date.parse(rec.createdAt) >= this.#o.maxMs) return 'the session is older than ui.session_max: sign in again';
    if (t - Date.parse(rec.lastSeenAt) >= this.#o.idleMs) return 'the session was idle longer than ui.session_idle: sign in again';
    return undefined;
  }

  #summary(rec: SessionRecord): SessionSummary {
    return {
      id: rec.hash.slice(0, 12),
      createdAt: rec.createdAt,
      lastSeenAt: rec.lastSeenAt,
      idleUntil: new Date(Date.parse(rec.lastSeenAt) + this.#o.idleMs).toISOString(),
      expiresAt: new Date(Date.parse(rec.createdAt) + this.#o.maxMs).toISOString(),
      ...(rec.peer ? { peer: rec.peer } : {}),
      ...(rec.agent ? { agent: rec.agent } : {}),
    };
  }

  /** Stored to expire with its absolute limit where the store can expire keys. */
  async #put(rec: SessionRecord, now = new Date(rec.createdAt)): Promise<void> {
    const left = Date.parse(rec.createdAt) + this.#o.maxMs - now.getTime();
    if (this.#store.setExpiring && left > 0) await this.#store.setExpiring(KEY + rec.hash, rec, left);
    else await this.#store.set(KEY + rec.hash, rec);
  }

  async #drop(hash: string): Promise<boolean> {
    const had = (await this.#store.get(KEY + hash)) !== undefined;
    await this.#store.delete(KEY + hash);
    const index = await this.#index();
    if (index.includes(hash))
      await this.#store.set(
        INDEX,
        index.filter((h) => h !== hash),
      );
    return had;
  }

  async #index(): Promise<string[]> {
    const v = await this.#store.get<unknown>(INDEX);
    return Array.isArray(v) ? v.filter((h): h is string => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h)) : [];
  }
}

/** What the control socket's `/v1/ui/sessions` takes. */
export type SessionsRequest = { action: 'list' } | { action: 'revoke'; id: string } | { action: 'revoke'; all: true };

/** Answers a sessions request against the store's sessions (the bot's handler and the offline path alike). */
export async function answerSessions(sessions: UiSessions, req: unknown, now: Date): Promise<{ sessions: SessionSummary[] }> {
  const r = (typeof req === 'object' && req !== null ? req : {}) as Record<string, unknown>;
  if (r['action'] === 'revoke') {
    if (r['all'] === true) return { sessions: await sessions.revoke({ all: true }, now) };
    if (typeof r['id'] === 'string') return { sessions: await sessions.revoke({ prefix: r['id'] }, now) };
    throw new Error('revoke needs a session id or --all');
  }
  return { sessions: await sessions.list(now) };
}
