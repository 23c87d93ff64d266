/**
 * The incident's own story, folded as events arrive (issue 21): who is on it (acks), what
 * happened in its thread (fired, posted, acknowledged, votes, notes, silences, finding,
 * resolved), and the PagerDuty calls an ack asked for. Kept per thread and bounded, so the
 * timeline is a read of the model like every other — no scan of the log.
 */
import { spanEnd } from '../chat/incident-span.js';
import type { AckEvent, LedgerEvent, PagerDutyCallEvent } from '../ledger-events.js';
import { rememberChatEvent, threadOf } from './ledger-chat.js';
import type { Episode, LedgerState, PagerDutyPending, ThreadRecord, TimelineItem } from './ledger-types.js';

/** Items kept per thread: a long incident keeps its first and latest, the middle goes. */
export const TIMELINE_ITEMS = 200;
/** People shown on it per thread. */
export const ACKERS = 20;
/** First-ack times kept for `/reprise status`. */
export const ACK_SAMPLES = 500;
/** A note's text kept in its timeline item. */
const NOTE_PREVIEW = 160;

function push(thread: ThreadRecord, item: TimelineItem): void {
  const items = (thread.timeline ??= []);
  // Keep the opening of the story (fired, posted, first ack) and the newest; drop from the middle.
  if (items.length >= TIMELINE_ITEMS) items.splice(Math.floor(TIMELINE_ITEMS / 4), 1);
  items.push(clean(item));
}

function clean<T extends object>(item: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(item)) if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
  return out;
}

function threadFor(state: LedgerState, openId: string | undefined, triggerKey: string | undefined): ThreadRecord | undefined {
  const id = openId ?? (triggerKey === undefined ? undefined : state.triggers[triggerKey]?.newestOpen?.id);
  return id === undefined ? undefined : threadOf(state, id);
}

/** An ack: the person joins the thread's ackers (once), and the first one's delay is sampled. */
export function applyAck(state: LedgerState, e: AckEvent): void {
  rememberChatEvent(state, e.eventId, e.at);
  const thread = threadFor(state, e.openId, e.triggerKey);
  if (e.pagerduty) {
    const calls = (state.pagerDutyCalls ??= Object.create(null) as Record<string, PagerDutyPending>);
    calls[e.pagerduty.requestId] = {
      requestId: e.pagerduty.requestId,
      incidentId: e.pagerduty.incidentId,
      ...(e.openId ? { openId: e.openId } : {}),
      attempts: 0,
    };
  }
  if (!thread) return;
  if (e.pagerduty) thread.pagerDutyAsked = true;
  const acks = (thread.acks ??= []);
  if (acks.some((a) => a.user === e.user)) return;
  if (acks.length === 0) {
    const from = Date.parse(thread.firedAt ?? thread.openedAt ?? e.at);
    const seconds = Math.max(0, (Date.parse(e.at) - from) / 1000);
    const samples = (state.ackSeconds ??= []);
    samples.push(Number.isFinite(seconds) ? seconds : 0);
    if (samples.length > ACK_SAMPLES) samples.shift();
  }
  if (acks.length < ACKERS) acks.push(clean({ user: e.user, name: e.name, via: e.via, at: e.at }));
}

export function applyPagerDutyCall(state: LedgerState, e: PagerDutyCallEvent): void {
  const pending = state.pagerDutyCalls?.[e.requestId];
  if (pending && e.outcome === 'retry') pending.attempts = Math.max(pending.attempts, e.attempt);
  else if (pending) delete state.pagerDutyCalls![e.requestId];
}

/** The resolve as a timeline item: dated by the alert's own end when it sent one, else by when Reprise heard of it. */
function resolvedItem(closed: Episode, heardAt: string): TimelineItem {
  return { kind: 'resolved', at: spanEnd({ endsAt: closed.endsAt, resolvedAt: closed.resolvedAt ?? heardAt }) ?? heardAt };
}

/** Adds what `e` means to its thread's timeline; `closed` is the episode a resolve (or open) closed. */
export function foldTimeline(state: LedgerState, e: LedgerEvent, closed: Episode | undefined): void {
  switch (e.type) {
    case 'open': {
      const reopened = e.reopens === undefined || e.id === undefined ? undefined : threadOf(state, e.id);
      if (reopened !== undefined && reopened.openId !== e.id) {
        // A new episode in the thread: the durations count from when it reopened.
        reopened.firedAt = e.startsAt ?? e.at;
        push(reopened, { kind: 'reopened', at: reopened.firedAt, ...(e.source ? { via: e.source } : {}) });
        if (closed) push(reopened, resolvedItem(closed, e.at));
        break;
      }
      const thread = e.id === undefined ? undefined : state.threads[e.id];
      if (thread !== undefined && thread.openId === e.id && thread.timeline === undefined) {
        thread.firedAt = e.startsAt ?? e.at;
        push(thread, { kind: 'fired', at: thread.firedAt, ...(e.source ? { via: e.source } : {}) });
        push(thread, { kind: 'opened', at: e.at, detail: e.kind === 'recall' && e.entry ? `recalled ${e.entry}` : e.kind });
        // A resolve that arrived first closes the episode the moment it opens.
        if (closed) push(thread, resolvedItem(closed, e.at));
      }
      break;
    }
    case 'delivered': {
      const thread = e.openId === undefined ? undefined : state.threads[e.openId];
      const root = thread?.roots[e.transport];
      if (thread !== undefined && root?.id === e.messageRef && !(thread.timeline ?? []).some((i) => i.kind === 'posted' && i.detail === e.transport))
        push(thread, { kind: 'posted', at: e.at, detail: e.transport });
      break;
    }
    case 'ack': {
      const thread = threadFor(state, e.openId, e.triggerKey);
      if (thread && !(thread.timeline ?? []).some((i) => i.kind === 'ack' && i.user === e.user))
        push(thread, { kind: 'ack', at: e.at, user: e.user, via: e.via, ...(e.name ? { detail: e.name } : {}) });
      break;
    }
    case 'feedback': {
      const thread = threadFor(state, e.openId, e.triggerKey);
      if (thread) push(thread, { kind: 'vote', at: e.at, user: e.user, ...(e.via ? { via: e.via } : {}), detail: e.vote });
      break;
    }
    case 'note':
    case 'fix': {
      const thread = threadFor(state, e.openId, e.triggerKey);
      const first = e.text.trim().split('\n')[0] ?? '';
      if (thread)
        push(thread, {
          kind: e.type,
          at: e.at,
          user: e.user,
          via: e.via,
          detail: first.length > NOTE_PREVIEW ? `${first.slice(0, NOTE_PREVIEW)}…` : first,
        });
      break;
    }
    case 'silence': {
      const thread = threadFor(state, e.openId, e.triggerKey);
      if (thread) push(thread, { kind: 'silence', at: e.at, user: e.user, ...(e.via ? { via: e.via } : {}), detail: e.until });
      break;
    }
    case 'finding': {
      const thread = threadOf(state, e.openId);
      if (thread) push(thread, { kind: 'finding', at: e.at, detail: e.status });
      break;
    }
    case 'pagerduty_call': {
      const thread = e.openId === undefined ? undefined : threadOf(state, e.openId);
      if (thread) push(thread, { kind: 'pagerduty', at: e.at, detail: `acknowledge ${e.outcome} (attempt ${e.attempt})` });
      break;
    }
    case 'resolve': {
      const thread = closed?.openId === undefined ? undefined : threadOf(state, closed.openId);
      if (thread) push(thread, resolvedItem(closed!, e.at));
      break;
    }
    default:
      break;
  }
}
