/**
 * The state behind the fake homeserver: rooms, memberships and one stream of events with
 * positions (sync tokens are `s<position>`). It enforces the parts of the spec a client can get
 * wrong — relation targets, edits of one's own events only, one annotation per key, the event
 * size limit — so a transport that sends a malformed event fails here as it would on Synapse.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface FakeEvent {
  event_id: string;
  room_id: string;
  sender: string;
  type: string;
  content: Record<string, unknown>;
  origin_server_ts: number;
  state_key?: string;
  redacts?: string;
  unsigned?: Record<string, unknown>;
}

/** A stored event and its place in the stream. */
interface Stored {
  pos: number;
  event: FakeEvent;
  /** Transaction id, shown to the sender only (`unsigned.transaction_id`). */
  txnId?: string;
  redactedBy?: string;
}

export type Membership = 'join' | 'invite' | 'leave';

export interface FakeRoom {
  id: string;
  alias?: string;
  public: boolean;
  members: Map<string, Membership>;
  state: Map<string, FakeEvent>;
}

/** A request the homeserver refuses, as the spec's error body. */
export class MatrixFakeError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const EVENT_LIMIT_BYTES = 65_536;

export class FakeRooms {
  readonly rooms = new Map<string, FakeRoom>();
  readonly #events: Stored[] = [];
  readonly #byId = new Map<string, Stored>();
  #pos = 0;
  #roomSeq = 0;
  readonly #listeners = new Set<() => void>();

  constructor(
    readonly serverName: string,
    private readonly now: () => number,
  ) {}

  get head(): number {
    return this.#pos;
  }

  /** Called on every new event: wakes long-polling syncs. */
  onChange(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  createRoom(opts: { id?: string; alias?: string; public?: boolean; creator?: string } = {}): FakeRoom {
    const id = opts.id ?? `!room${++this.#roomSeq}:${this.serverName}`;
    if (this.rooms.has(id)) throw new Error(`room ${id} exists`);
    const room: FakeRoom = { id, public: opts.public ?? false, members: new Map(), state: new Map(), ...(opts.alias ? { alias: opts.alias } : {}) };
    this.rooms.set(id, room);
    const creator = opts.creator ?? `@admin:${this.serverName}`;
    this.append({ room_id: id, sender: creator, type: 'm.room.create', state_key: '', content: { creator, room_version: '11' } });
    this.setMembership(id, creator, 'join', creator);
    return room;
  }

  room(id: string): FakeRoom {
    const r = this.rooms.get(id);
    if (!r) throw new MatrixFakeError(404, 'M_NOT_FOUND', `unknown room ${id}`);
    return r;
  }

  setMembership(roomId: string, userId: string, membership: Membership, by: string = userId): FakeEvent {
    const room = this.room(roomId);
    room.members.set(userId, membership);
    return this.append({ room_id: roomId, sender: by, type: 'm.room.member', state_key: userId, content: { membership } });
  }

  membership(roomId: string, userId: string): Membership | undefined {
    return this.rooms.get(roomId)?.members.get(userId);
  }

  /** Checks relations and size, then appends. Throws {@link MatrixFakeError} as the server would answer. */
  send(e: Omit<FakeEvent, 'event_id' | 'origin_server_ts'>, txnId?: string): FakeEvent {
    this.#checkRelation(e);
    return this.append(e, txnId);
  }

  append(e: Omit<FakeEvent, 'event_id' | 'origin_server_ts'>, txnId?: string): FakeEvent {
    const room = this.room(e.room_id);
    const event: FakeEvent = { ...e, event_id: newEventId(), origin_server_ts: this.now() };
    const bytes = Buffer.byteLength(JSON.stringify(pduLike(event, this.serverName)), 'utf8');
    if (bytes > EVENT_LIMIT_BYTES) throw new MatrixFakeError(413, 'M_TOO_LARGE', `event is ${bytes} bytes, over the ${EVENT_LIMIT_BYTES}-byte limit`);
    const stored: Stored = { pos: ++this.#pos, event, ...(txnId ? { txnId } : {}) };
    this.#events.push(stored);
    this.#byId.set(event.event_id, stored);
    if (e.state_key !== undefined) room.state.set(`${e.type}\u0000${e.state_key}`, event);
    if (e.type === 'm.room.redaction' && e.redacts) {
      const target = this.#byId.get(e.redacts);
      if (target) target.redactedBy = event.event_id;
    }
    for (const fn of this.#listeners) fn();
    return event;
  }

  /** The event as a client reads it (redacted content stripped; `transaction_id` for its sender). */
  view(id: string, forUser?: string): FakeEvent | undefined {
    const s = this.#byId.get(id);
    return s ? this.#view(s, forUser) : undefined;
  }

  raw(id: string): FakeEvent | undefined {
    return this.#byId.get(id)?.event;
  }

  /** Events of `roomId` with stream position in (after, upTo], oldest first. */
  between(roomId: string, after: number, upTo: number, forUser?: string): Array<{ pos: number; event: FakeEvent }> {
    return this.#events.filter((s) => s.event.room_id === roomId && s.pos > after && s.pos <= upTo).map((s) => ({ pos: s.pos, event: this.#view(s, forUser) }));
  }

  /** Every event of a room, oldest first, as stored. */
  timeline(roomId: string): FakeEvent[] {
    return this.#events.filter((s) => s.event.room_id === roomId).map((s) => s.event);
  }

  /** Position of an invite of `userId` to `roomId`, if pending. */
  invitesSince(userId: string, after: number): Array<{ roomId: string; event: FakeEvent }> {
    return this.#events
      .filter((s) => s.pos > after && s.event.type === 'm.room.member' && s.event.state_key === userId && s.event.content['membership'] === 'invite')
      .filter((s) => this.membership(s.event.room_id, userId) === 'invite')
      .map((s) => ({ roomId: s.event.room_id, event: s.event }));
  }

  #view(s: Stored, forUser?: string): FakeEvent {
    const e: FakeEvent = { ...s.event, unsigned: { ...(s.event.unsigned ?? {}), age: Math.max(0, this.now() - s.event.origin_server_ts) } };
    if (s.txnId && forUser === s.event.sender) e.unsigned!['transaction_id'] = s.txnId;
    if (s.redactedBy) {
      e.content = {};
      e.unsigned!['redacted_because'] = this.raw(s.redactedBy);
    }
    return e;
  }

  #checkRelation(e: Omit<FakeEvent, 'event_id' | 'origin_server_ts'>): void {
    const rel = e.content['m.relates_to'] as Record<string, unknown> | undefined;
    if (!rel) return;
    const relType = rel['rel_type'];
    const targetId = typeof rel['event_id'] === 'string' ? rel['event_id'] : (rel['m.in_reply_to'] as { event_id?: string } | undefined)?.event_id;
    if (typeof targetId !== 'string') throw new MatrixFakeError(400, 'M_BAD_JSON', 'relation without event_id');
    const target = this.#byId.get(targetId)?.event;
    if (!target || target.room_id !== e.room_id) throw new MatrixFakeError(400, 'M_UNKNOWN', `relation target ${targetId} is not in ${e.room_id}`);
    const targetRel = target.content['m.relates_to'] as Record<string, unknown> | undefined;
    if (relType === 'm.thread') {
      if (targetRel?.['rel_type'] === 'm.thread') throw new MatrixFakeError(400, 'M_UNKNOWN', 'cannot start a thread from an event with a relation');
    } else if (relType === 'm.replace') {
      if (target.sender !== e.sender) throw new MatrixFakeError(400, 'M_UNKNOWN', 'an edit must have the same sender as the original');
      if (target.type !== e.type) throw new MatrixFakeError(400, 'M_UNKNOWN', 'an edit must have the same type as the original');
      if (targetRel?.['rel_type'] === 'm.replace') throw new MatrixFakeError(400, 'M_UNKNOWN', 'edit the original, not an edit');
      if (typeof e.content['m.new_content'] !== 'object') throw new MatrixFakeError(400, 'M_BAD_JSON', 'an edit needs m.new_content');
    } else if (relType === 'm.annotation') {
      const dup = this.#events.some((s) => {
        const r = s.event.content['m.relates_to'] as Record<string, unknown> | undefined;
        return !s.redactedBy && s.event.type === 'm.reaction' && s.event.sender === e.sender && r?.['event_id'] === targetId && r?.['key'] === rel['key'];
      });
      if (dup) throw new MatrixFakeError(400, 'M_DUPLICATE_ANNOTATION', 'already reacted with this key');
    }
  }

  /**
   * The content a client shows for `eventId`: the latest `m.replace` edit by the original sender
   * applied (what an on-call engineer sees on the card).
   */
  current(eventId: string): Record<string, unknown> | undefined {
    const original = this.#byId.get(eventId)?.event;
    if (!original) return undefined;
    let latest: Record<string, unknown> = original.content;
    for (const s of this.#events) {
      const r = s.event.content['m.relates_to'] as Record<string, unknown> | undefined;
      if (r?.['rel_type'] === 'm.replace' && r['event_id'] === eventId && s.event.sender === original.sender && !s.redactedBy) {
        latest = s.event.content['m.new_content'] as Record<string, unknown>;
      }
    }
    return latest;
  }
}

/** A room-v11-shaped event id: `$` and 43 url-safe base64 characters. */
function newEventId(): string {
  return `$${createHash('sha256').update(randomBytes(16)).digest('base64url')}`;
}

/** Roughly what the homeserver counts against the size limit: the event plus its federation envelope. */
function pduLike(e: FakeEvent, server: string): Record<string, unknown> {
  const id = '$'.padEnd(44, 'x');
  return {
    ...e,
    depth: 1_000_000,
    prev_events: [id, id],
    auth_events: [id, id, id, id],
    hashes: { sha256: 'x'.repeat(43) },
    signatures: { [server]: { 'ed25519:a_AbCd': 'x'.repeat(86) } },
  };
}
