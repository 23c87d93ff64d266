/**
 * The chat half of the read model: the durable outbox (what must still be delivered), the
 * thread registry (which bot message belongs to which incident and entry, so a reaction or a
 * click finds its incident after a restart), notes per thread, and the inbound event ids
 * already recorded (so a retried Slack event or a re-synced Matrix event counts once).
 */
import type { DeliveredEvent, NoteEvent, OpenEvent, OutboxEvent, OutboxFailedEvent } from '../ledger-events.js';
import { forgetStorm, registerStormOpen } from './ledger-noise.js';
import type { LedgerState, OutboxItem, ThreadRecord } from './ledger-types.js';
import { noteAdded, oldestKey } from './key-order.js';

/** Records where staged outbox events landed in the log, once their transaction committed. */
export function assignOutboxSeqs(
  state: LedgerState,
  staged: readonly { type: string; id?: unknown; op?: unknown; openId?: unknown; transport?: unknown }[],
  first: number,
): void {
  staged.forEach((e, i) => {
    if (e.type !== 'outbox' || typeof e.id !== 'string') return;
    const item = state.outbox[e.id];
    if (item) item.seq = first + i;
    const thread = typeof e.openId === 'string' ? state.threads[e.openId] : undefined;
    if (thread && e.op === 'post' && typeof e.transport === 'string') thread.cardSeqs[e.transport] = first + i;
  });
}

/** Where a thread's card for one surface sits in the log. */
export function cardSeq(state: LedgerState, openId: string, transport: string): number | undefined {
  return state.threads[openId]?.cardSeqs[transport];
}

/** Key of a bot message in the registry. */
export function messageKey(transport: string, channel: string, id: string): string {
  return `${transport}|${channel}|${id}`;
}

/** Registers an open's thread (opens without an id, from older ledgers, have none). */
export function registerThread(state: LedgerState, e: OpenEvent): void {
  if (e.id === undefined) return;
  // A storm member joins its lead's thread instead of starting one; so does a reopened incident.
  if (registerStormOpen(state, e, undefined)) return;
  if (reopenThread(state, e)) return;
  const record: ThreadRecord = {
    openId: e.id,
    triggerKey: e.triggerKey,
    fingerprint: e.fingerprint,
    roots: {},
    cardSeqs: {},
    state: 'firing',
    transports: [],
    messageKeys: [],
    notes: 0,
  };
  if (e.dupFingerprint !== '') record.dupFingerprint = e.dupFingerprint;
  if (e.entry !== undefined) record.entry = e.entry;
  if (e.answerKind !== undefined) record.answerKind = e.answerKind;
  if (e.source !== undefined) record.source = e.source;
  if (e.alert !== undefined) record.alert = e.alert;
  if (e.remind !== undefined) record.remind = e.remind;
  if (e.oncallLate !== undefined) record.oncallLate = e.oncallLate;
  record.openedAt = e.at;
  const added = state.threads[e.id] === undefined;
  state.threads[e.id] = record;
  if (added) {
    state.threadCount += 1;
    noteAdded(state.threads, e.id);
  }
  if (e.threadOf === undefined) registerStormOpen(state, e, record);
  while (state.threadCount > state.limits.threads) {
    const oldest = oldestKey(state.threads);
    if (oldest === undefined) break;
    forgetStorm(state, state.threads[oldest]!);
    for (const m of state.threads[oldest]!.episodes ?? []) delete state.stormMembers[m];
    for (const k of state.threads[oldest]!.messageKeys) delete state.messages[k];
    delete state.threads[oldest];
    state.threadCount -= 1;
  }
}

/** Later episodes remembered per thread (a flapping incident reopened again and again). */
const EPISODES_PER_THREAD = 50;

/**
 * An open whose source reopened the incident of an earlier thread (`reopens`): a new episode in
 * that thread. Its open id finds the thread from now on (as a storm member's does); who is on
 * it and the PagerDuty call are the new episode's, so they start again; the thread reads firing.
 * False when the thread is not known (dropped from the registry): it then starts its own.
 */
function reopenThread(state: LedgerState, e: OpenEvent): boolean {
  if (e.id === undefined || e.reopens === undefined) return false;
  const thread = threadOf(state, e.reopens);
  if (!thread || thread.storm) return false;
  state.stormMembers[e.id] = thread.openId;
  const episodes = (thread.episodes ??= []);
  episodes.push(e.id);
  while (episodes.length > EPISODES_PER_THREAD) delete state.stormMembers[episodes.shift()!];
  thread.state = 'firing';
  delete thread.acks;
  delete thread.pagerDutyAsked;
  delete thread.amMark;
  delete thread.amHeld;
  // The reopened episode is reminded of on its own (or not at all).
  delete thread.reminded;
  if (e.remind !== undefined) thread.remind = e.remind;
  else delete thread.remind;
  if (e.alert !== undefined) thread.alert = e.alert;
  return true;
}

export function applyOutbox(state: LedgerState, e: OutboxEvent, seq: number | undefined): void {
  rememberChatEvent(state, e.eventId, e.at);
  const item: OutboxItem = { id: e.id, transport: e.transport, op: e.op, at: e.at };
  if (e.openId !== undefined) item.openId = e.openId;
  if (e.channel !== undefined) item.channel = e.channel;
  if (seq !== undefined) item.seq = seq;
  if (state.outbox[e.id] === undefined) state.outboxCount += 1;
  state.outbox[e.id] = item;
  const thread = e.openId === undefined ? undefined : state.threads[e.openId];
  if (thread && e.op === 'post' && !thread.transports.includes(e.transport)) thread.transports.push(e.transport);
  if (thread && e.op === 'post' && seq !== undefined) thread.cardSeqs[e.transport] = seq;
  if (thread && e.op === 'update' && e.view.kind === 'card_patch') {
    const { kind: _kind, ...changes } = e.view;
    const merged = { ...(thread.cardPatches?.[e.transport] ?? {}) };
    for (const [k, v] of Object.entries(changes) as Array<[keyof typeof changes, unknown]>) if (v !== undefined) Object.assign(merged, { [k]: v });
    (thread.cardPatches ??= {})[e.transport] = merged;
  }
}

function removeOutbox(state: LedgerState, id: string): void {
  if (state.outbox[id] === undefined) return;
  delete state.outbox[id];
  state.outboxCount -= 1;
}

export function applyOutboxFailed(state: LedgerState, e: OutboxFailedEvent): void {
  removeOutbox(state, e.id);
}

/** A delivered message: out of the outbox, into the registry (root per transport, and every message for reactions). */
export function applyChatDelivered(state: LedgerState, e: DeliveredEvent): void {
  const item = e.outboxId === undefined ? undefined : state.outbox[e.outboxId];
  if (e.outboxId !== undefined) removeOutbox(state, e.outboxId);
  const thread = e.openId === undefined ? undefined : state.threads[e.openId];
  if (!thread) return;
  const channel = e.channel ?? item?.channel ?? '';
  const isRoot = e.root ?? (item === undefined || item.op === 'post');
  if (isRoot && thread.roots[e.transport] === undefined) thread.roots[e.transport] = { channel, id: e.messageRef };
  const key = messageKey(e.transport, channel, e.messageRef);
  if (state.messages[key] === undefined) {
    state.messages[key] = thread.openId;
    thread.messageKeys.push(key);
  }
}

export function applyNote(state: LedgerState, e: NoteEvent): void {
  const thread = e.openId === undefined ? undefined : state.threads[e.openId];
  if (thread) thread.notes += 1;
  rememberChatEvent(state, e.eventId, e.at);
}

/**
 * Remembers an applied chat event id for `limits.chatEventRetentionMs` after the newest one
 * (ids are unique per surface: Slack's event ids and built keys, Matrix event ids). Kept in
 * the read model, so a restart, a failover or a batch read again applies each event once.
 */
export function rememberChatEvent(state: LedgerState, eventId: string | undefined, at: string): void {
  if (eventId === undefined || state.chatEventSeen[eventId]) return;
  const t = Date.parse(at);
  const atMs = Number.isFinite(t) ? t : (state.chatEventOrder.at(-1)?.[1] ?? 0);
  state.chatEventSeen[eventId] = true;
  state.chatEventOrder.push([eventId, atMs]);
  const horizon = Math.max(atMs, state.chatEventOrder.at(-2)?.[1] ?? 0) - state.limits.chatEventRetentionMs;
  const order = state.chatEventOrder;
  let drop = 0;
  while (drop < order.length - 1 && (order[drop]![1] < horizon || order.length - drop > state.limits.chatEvents)) drop++;
  // Forgotten in batches (an id kept a little past its retention is harmless; a shift per event is not).
  if (drop < FORGET_BATCH && order.length <= state.limits.chatEvents) return;
  for (const [id] of order.splice(0, drop)) delete state.chatEventSeen[id];
}

const FORGET_BATCH = 256;

// ── reads ──

/** Outbox items still to deliver, in the order they were recorded; lazy, so a pass can stop early. */
export function* pendingOutbox(state: LedgerState): Generator<OutboxItem> {
  for (const id in state.outbox) {
    const item = state.outbox[id];
    if (item) yield item;
  }
}

/**
 * The next page of the outbox: committed items recorded after `afterSeq`, oldest first, at
 * most `limit` — up to the first item not committed yet (what follows it is newer still).
 */
export function pendingOutboxPage(state: LedgerState, afterSeq: number, limit: number): OutboxItem[] {
  const page: OutboxItem[] = [];
  for (const item of pendingOutbox(state)) {
    if (page.length >= limit || item.seq === undefined) break;
    if (item.seq > afterSeq) page.push(item);
  }
  return page;
}

/** True while the outbox item is still to deliver. */
export function isOutboxPending(state: LedgerState, id: string): boolean {
  return state.outbox[id] !== undefined;
}

/** How many outbox items are pending (kept as a count: the dictionary may hold thousands). */
export function pendingCount(state: LedgerState): number {
  return state.outboxCount;
}

/** The thread of an open: its own, or for a storm member the thread it joined. */
export function threadOf(state: LedgerState, openId: string): ThreadRecord | undefined {
  return state.threads[openId] ?? state.threads[state.stormMembers[openId] ?? ''];
}

/** The incident a bot message belongs to (a reaction's or a click's target). */
export function threadByMessage(state: LedgerState, transport: string, channel: string, id: string): ThreadRecord | undefined {
  const openId = state.messages[messageKey(transport, channel, id)];
  return openId === undefined ? undefined : state.threads[openId];
}

/** True when this inbound chat event was already recorded. */
export function seenChatEvent(state: LedgerState, eventId: string): boolean {
  return state.chatEventSeen[eventId] === true;
}
