/**
 * The ledger's read model (SPEC §8), folded one event at a time. Pure and deterministic: the
 * state is plain JSON (null-prototype dictionaries, no Maps, no undefined-valued fields), so a
 * snapshot round-trips through JSON and a full replay yields a deep-equal state.
 *
 * Over 450 lines on purpose: the fold is one switch over the event kinds, kept in one
 * place so a new kind cannot be folded in one path and not another; the per-kind work already lives
 * in ledger-chat, -findings, -curation, -noise and -human.
 */
import type { LedgerEvent, OpenEvent } from '../ledger-events.js';
import { ledgerEventProblem } from './ledger-event-problem.js';
import { applyFinding, countTokens, queueInvestigation } from './ledger-findings.js';
import { applyCurate, applyCurated } from './ledger-curation.js';
import { applyChatDelivered, applyNote, applyOutbox, applyOutboxFailed, registerThread, rememberChatEvent, threadOf } from './ledger-chat.js';
import { applyNoise, stormResolved } from './ledger-noise.js';
import { applyFix, applyQuestion, applyRefusal, keepNote } from './ledger-human.js';
import { noteAdded, oldestKey } from './key-order.js';
import { applyAck, applyPagerDutyCall, foldTimeline } from './ledger-timeline.js';
import { createMemoryView, foldView, restoreMemoryView, viewBefore } from './ledger-view.js';
import { DEFAULT_LEDGER_LIMITS, LEDGER_STATE_VERSION } from './ledger-types.js';
import type {
  DupStats,
  EntryAggregate,
  Episode,
  FingerprintState,
  LedgerLimits,
  LedgerState,
  OpenRecord,
  ThreadRecord,
  TriggerState,
  Vote,
} from './ledger-types.js';

export * from './ledger-types.js';
export * from './ledger-reads.js';
export { pendingInvestigations, tokensSpent, triggerFindings } from './ledger-findings.js';
export { pendingCurate } from './ledger-curation.js';
export { assignOutboxSeqs } from './ledger-chat.js';

/** A dictionary immune to keys like `__proto__` (trigger keys and user names come from outside). */
function dict<T>(from?: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, from);
}

/** An empty state; `limits` override the defaults (they are part of the state, so replay agrees). */
export function createLedgerState(limits: Partial<LedgerLimits> = {}): LedgerState {
  return {
    version: LEDGER_STATE_VERSION,
    limits: { ...DEFAULT_LEDGER_LIMITS, ...limits },
    applied: 0,
    skipped: 0,
    resolves: 0,
    fingerprints: dict(),
    fingerprintCount: 0,
    entries: dict(),
    triggers: dict(),
    dups: dict(),
    recentEpisodes: [],
    outbox: dict(),
    outboxCount: 0,
    threads: dict(),
    threadCount: 0,
    messages: dict(),
    chatEventSeen: dict(),
    chatEventOrder: [],
    tokensByDay: dict(),
    holds: dict(),
    holdCount: 0,
    holdByFingerprint: dict(),
    stormMembers: dict(),
    stormByKey: dict(),
    noiseCounts: dict(),
    investigationTimes: [],
    amSilences: dict(),
    view: createMemoryView(),
  };
}

/**
 * Rebuild a state from its JSON form (a snapshot). Returns undefined when the value is not a
 * state of the current version, so the caller falls back to a full replay.
 */
export function restoreLedgerState(json: unknown): LedgerState | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const s = json as LedgerState;
  if (s.version !== LEDGER_STATE_VERSION || typeof s.applied !== 'number' || !Array.isArray(s.recentEpisodes)) {
    return undefined;
  }
  const triggers = dict<TriggerState>();
  for (const [k, t] of Object.entries(s.triggers ?? {})) triggers[k] = { ...t, votes: dict(t.votes), ...(t.firing ? { firing: dict(t.firing) } : {}) };
  const threads = dict<ThreadRecord>();
  for (const [k, t] of Object.entries(s.threads ?? {})) threads[k] = t.storm ? { ...t, storm: { ...t.storm, firing: dict(t.storm.firing) } } : t;
  return {
    ...s,
    fingerprints: dict(s.fingerprints),
    entries: dict(s.entries),
    triggers,
    dups: dict(s.dups),
    outbox: dict(s.outbox),
    threads,
    ...(s.curate ? { curate: dict(s.curate) } : {}),
    ...(s.investigations ? { investigations: dict(s.investigations) } : {}),
    ...(s.pagerDutyCalls ? { pagerDutyCalls: dict(s.pagerDutyCalls) } : {}),
    messages: dict(s.messages),
    chatEventSeen: dict(s.chatEventSeen),
    tokensByDay: dict(s.tokensByDay),
    holds: dict(s.holds),
    holdByFingerprint: dict(s.holdByFingerprint),
    stormMembers: dict(s.stormMembers),
    stormByKey: dict(s.stormByKey),
    noiseCounts: dict(s.noiseCounts),
    investigationTimes: [...(s.investigationTimes ?? [])],
    amSilences: dict(s.amSilences),
    view: restoreMemoryView(s.view),
  };
}

/** Copy only defined fields, so JSON round-trips and replays stay deep-equal. */
function defined<T extends object>(o: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

function pushBounded<T>(list: T[], item: T, max: number): void {
  list.push(item);
  while (list.length > max) list.shift();
}

function entryAgg(state: LedgerState, id: string): EntryAggregate {
  return (state.entries[id] ??= { recalls: 0, resolved: 0, inFlight: [], expired: 0, up: 0, down: 0, confirmations: 0 });
}

function trigger(state: LedgerState, key: string): TriggerState {
  return (state.triggers[key] ??= { count: 0, resolved: 0, votes: dict(), up: 0, down: 0, episodes: [] });
}

function dup(state: LedgerState, key: string): DupStats {
  return (state.dups[key] ??= { opens: 0, resolved: 0, confirmations: 0 });
}

/** Fetch (or create) a fingerprint's state and mark it most recently used; evicts the oldest. */
function touchFingerprint(state: LedgerState, fp: string): FingerprintState {
  const existing = state.fingerprints[fp];
  if (existing) {
    delete state.fingerprints[fp];
    state.fingerprints[fp] = existing;
    noteAdded(state.fingerprints, fp);
    return existing;
  }
  const created: FingerprintState = { open: [] };
  state.fingerprints[fp] = created;
  noteAdded(state.fingerprints, fp);
  state.fingerprintCount += 1;
  if (state.fingerprintCount > state.limits.maxFingerprints) {
    const oldest = oldestKey(state.fingerprints);
    if (oldest !== undefined) {
      delete state.fingerprints[oldest];
      state.fingerprintCount -= 1;
    }
  }
  return created;
}

/** The second an event happened, as a sortable key (`2026-03-01T00:00:07`). */
export function secondOf(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso.slice(0, 19) : new Date(t).toISOString().slice(0, 19);
}

/** Counts one more recall in its second's bucket, keeping buckets sorted by time. */
function addInFlight(buckets: Array<[string, number]>, key: string): void {
  let i = buckets.length;
  while (i > 0 && buckets[i - 1]![0] > key) i--; // opens arrive in time order: this loop rarely runs
  const at = buckets[i - 1];
  if (at && at[0] === key) at[1] += 1;
  else buckets.splice(i, 0, [key, 1]);
}

/**
 * Counts an open as a recall of `entry`: in flight until it resolves or lapses, or already a
 * success when `resolvedAt` is given (a verdict that came after the resolve).
 */
function countRecall(state: LedgerState, open: OpenRecord, entry: string, resolvedAt: string | undefined): void {
  const agg = entryAgg(state, entry);
  agg.recalls += 1;
  if (resolvedAt !== undefined) {
    agg.resolved += 1;
    agg.lastResolved = resolvedAt;
    return;
  }
  addInFlight(agg.inFlight, secondOf(open.at));
  while (agg.inFlight.length > state.limits.inFlightPerEntry) agg.expired += agg.inFlight.shift()![1];
}

/** Whether an open feeds the entry's instant-recall record (resolve-based decay). */
function countsAsRecall(o: OpenRecord): o is OpenRecord & { entry: string } {
  return o.kind === 'recall' && o.resolvable && o.entry !== undefined && o.answerKind !== 'runbook';
}

/** An alert of the trigger fires (opened, or kept from opening by the silence or the cooldown). */
export function triggerFiring(state: LedgerState, key: string, fingerprint: string): void {
  (trigger(state, key).firing ??= dict())[fingerprint] = true;
}

/**
 * An alert of the trigger stopped firing: a 🔕 on the trigger ends once none of its alerts fires
 * any more (one pod of a deployment resolving leaves the silence to the others).
 */
function triggerStopped(state: LedgerState, key: string | undefined, fingerprint: string, at: string): void {
  const t = key === undefined ? undefined : state.triggers[key];
  if (!t) return;
  if (t.firing) delete t.firing[fingerprint];
  if (!t.firing || Object.keys(t.firing).length === 0) {
    delete t.firing;
    endSilence(state, key, at, 'resolve');
  }
}

function endSilence(state: LedgerState, key: string | undefined, at: string, by: 'resolve' | 'down'): void {
  const silence = key === undefined ? undefined : state.triggers[key]?.silence;
  if (silence && silence.endedBy === undefined) {
    silence.endedAt = at;
    silence.endedBy = by;
  }
}

function closeEpisode(state: LedgerState, open: OpenRecord, resolvedAt: string, endsAt: string | undefined): Episode {
  const episode = defined<Episode>({
    openId: open.id,
    fingerprint: open.fingerprint,
    triggerKey: open.triggerKey,
    kind: open.kind,
    entry: open.entry,
    answerKind: open.answerKind,
    dupFingerprint: open.dupFingerprint,
    resolvable: open.resolvable,
    openedAt: open.at,
    resolvedAt,
    endsAt,
    threadId: open.threadId,
    startsAt: open.startsAt,
  });
  const t = trigger(state, open.triggerKey);
  t.resolved += 1;
  pushBounded(t.episodes, episode, state.limits.episodesPerTrigger);
  pushBounded(state.recentEpisodes, episode, state.limits.recentEpisodes);
  if (countsAsRecall(open)) {
    const agg = entryAgg(state, open.entry);
    agg.resolved += 1;
    agg.lastResolved = resolvedAt;
    const key = secondOf(open.at);
    const i = agg.inFlight.findIndex(([s]) => s === key);
    if (i >= 0) {
      const bucket = agg.inFlight[i]!;
      bucket[1] -= 1;
      if (bucket[1] <= 0) agg.inFlight.splice(i, 1);
    } else if (agg.expired > 0) {
      // Pushed out of the bound and counted as a failure; it succeeded after all.
      agg.expired -= 1;
    }
  }
  const d = dup(state, open.dupFingerprint);
  d.resolved += 1;
  d.lastResolvedAt = resolvedAt;
  const fp = state.fingerprints[open.fingerprint];
  if (fp) fp.lastResolved = defined({ at: resolvedAt, startsAt: open.startsAt });
  if (!fp || fp.open.length === 0) triggerStopped(state, open.triggerKey, open.fingerprint, resolvedAt);
  stormResolved(state, open.id, open.fingerprint, endsAt);
  // The thread reads resolved once its incident is over (a storm thread: every alert of it).
  const thread = open.id === undefined ? undefined : threadOf(state, open.id);
  if (thread && !(thread.storm && thread.storm.open > 0)) thread.state = 'resolved';
  return episode;
}

function applyOpen(state: LedgerState, e: OpenEvent): Episode | undefined {
  const open = defined<OpenRecord>({
    id: e.id,
    fingerprint: e.fingerprint,
    triggerKey: e.triggerKey,
    kind: e.kind,
    entry: e.entry,
    answerKind: e.answerKind,
    dupFingerprint: e.dupFingerprint,
    curatedUrl: e.curatedUrl,
    verdict: e.verdict,
    resolvable: e.resolvable,
    threadId: e.threadId,
    startsAt: e.startsAt,
    at: e.at,
  });
  const t = trigger(state, open.triggerKey);
  t.count += 1;
  // First seen when it first fired (its startsAt, as every duration counts), not when Reprise heard of it.
  const fired = open.startsAt === undefined ? Number.NaN : Date.parse(open.startsAt);
  t.firstSeen ??= Number.isFinite(fired) && fired < Date.parse(open.at) ? new Date(fired).toISOString() : open.at;
  t.lastSeen = open.at;
  if (t.newestOpen) t.previousOpen = t.newestOpen;
  t.newestOpen = open;
  if (open.verdict !== 'inconclusive') t.newestConcludedOpen = open;
  const link = open.curatedUrl ?? open.entry;
  if (link !== undefined) t.lastKbLink = link;
  if (countsAsRecall(open)) countRecall(state, open, open.entry, undefined);
  const d = dup(state, open.dupFingerprint);
  d.opens += 1;
  d.triggerKey = open.triggerKey;

  registerThread(state, e);
  queueInvestigation(state, e);
  const fp = touchFingerprint(state, open.fingerprint);
  fp.triggerKey = open.triggerKey;
  delete fp.suppressed;
  const pending = fp.pendingResolveAt;
  if (pending !== undefined) {
    const endsAt = fp.pendingResolveEndsAt;
    delete fp.pendingResolveAt;
    delete fp.pendingResolveEndsAt;
    // A resolve buffered long before this open belongs to an earlier, unrecorded firing.
    if (Date.parse(open.at) - Date.parse(pending) <= state.limits.resolveBufferMs) {
      return closeEpisode(state, open, pending, endsAt);
    }
  }
  pushBounded(fp.open, open, state.limits.maxOpenPerFingerprint);
  triggerFiring(state, open.triggerKey, open.fingerprint);
  return undefined;
}

function applyResolve(state: LedgerState, fingerprint: string, at: string, endsAt: string | undefined, triggerKey?: string): Episode | undefined {
  state.resolves += 1;
  state.lastResolveAt = at;
  const fp = touchFingerprint(state, fingerprint);
  const open = fp.open.pop();
  if (open) return closeEpisode(state, open, at, endsAt);
  if (fp.suppressed) {
    // The firing it ends was never opened: nothing to pair, nothing to buffer; the silence ends
    // with the trigger's last firing alert.
    delete fp.suppressed;
    triggerStopped(state, fp.triggerKey ?? triggerKey, fingerprint, at);
    return undefined;
  }
  fp.pendingResolveAt = at;
  if (endsAt !== undefined) fp.pendingResolveEndsAt = endsAt;
  else delete fp.pendingResolveEndsAt;
  // Nothing of the trigger fires any more (a silence set with nothing firing, an older ledger):
  // the resolve of one of its alerts still ends it.
  const key = fp.triggerKey ?? triggerKey;
  if (key !== undefined && state.triggers[key]?.firing === undefined) endSilence(state, key, at, 'resolve');
  return undefined;
}

function applyFeedback(state: LedgerState, e: Extract<LedgerEvent, { type: 'feedback' }>): void {
  rememberChatEvent(state, e.eventId, e.at);
  const t = trigger(state, e.triggerKey);
  const previous = t.votes[e.user];
  if (e.vote === 'down') {
    endSilence(state, e.triggerKey, e.at, 'down');
    // The thread it was cast on pages again: it reads firing, as its card is edited to say.
    const thread = e.openId === undefined ? undefined : state.threads[e.openId];
    if (thread?.state === 'silenced') thread.state = 'firing';
  }
  if (previous?.vote === e.vote) return; // a duplicate click is idempotent
  if (previous) {
    t[previous.vote] -= 1;
    if (previous.entry !== undefined) entryAgg(state, previous.entry)[previous.vote] -= 1;
    delete t.votes[e.user];
  }
  if (e.vote === 'clear') return;
  const thread = e.openId === undefined ? undefined : state.threads[e.openId];
  const entry = thread ? thread.entry : t.newestOpen?.entry;
  t.votes[e.user] = defined<Vote>({ vote: e.vote, entry, at: e.at });
  t[e.vote] += 1;
  if (entry !== undefined) entryAgg(state, entry)[e.vote] += 1;
}

/**
 * Attach the delivered thread to its open wherever the read model keeps a copy of it (snapshots
 * turn shared references into copies, so each place is updated by id).
 */
function applyDelivered(state: LedgerState, e: Extract<LedgerEvent, { type: 'delivered' }>): void {
  if (e.fingerprint === undefined) return;
  const fp = state.fingerprints[e.fingerprint];
  const mark = <T extends { id?: string; openId?: string; threadId?: string }>(o: T | undefined): void => {
    if (o && (o.id ?? o.openId) === e.openId && o.threadId === undefined) o.threadId = e.messageRef;
  };
  for (const o of fp?.open ?? []) mark(o);
  const t = fp?.triggerKey === undefined ? undefined : state.triggers[fp.triggerKey];
  if (t) {
    mark(t.newestOpen);
    mark(t.previousOpen);
    mark(t.newestConcludedOpen);
    for (const ep of t.episodes) mark(ep);
  }
  for (const ep of state.recentEpisodes) mark(ep);
}

/**
 * Fold one event into `state` (mutating it, O(1) amortised). Returns the episode a resolve
 * (or an open meeting a buffered resolve) closed, so the caller can reply into its thread.
 * A malformed event is counted in `skipped` and otherwise ignored. `seq` is the event's place
 * in the log when known (replay); a transaction assigns it after commit.
 */
export function applyEvent(state: LedgerState, event: unknown, seq?: number): Episode | undefined {
  if (ledgerEventProblem(event) !== undefined) {
    state.skipped += 1;
    return undefined;
  }
  const e = event as LedgerEvent;
  state.applied += 1;
  const before = viewBefore(state, e);
  const closed = applyKnown(state, e, seq);
  foldTimeline(state, e, closed);
  foldView(state, e, closed, before);
  return closed;
}

function applyKnown(state: LedgerState, e: LedgerEvent, seq: number | undefined): Episode | undefined {
  switch (e.type) {
    case 'open':
      return applyOpen(state, e);
    case 'resolve':
      return applyResolve(state, e.fingerprint, e.at, e.endsAt, e.triggerKey);
    case 'feedback':
      applyFeedback(state, e);
      return undefined;
    case 'silence': {
      trigger(state, e.triggerKey).silence = { user: e.user, at: e.at, until: e.until };
      rememberChatEvent(state, e.eventId, e.at);
      // The thread it was set on reads silenced (older ledgers name none: the trigger's newest).
      // A silence ended on the spot (a critical firing) silences no thread.
      const thread = threadOf(state, e.openId ?? state.triggers[e.triggerKey]?.newestOpen?.id ?? '');
      if (thread && thread.state === 'firing' && Date.parse(e.until) > Date.parse(e.at)) thread.state = 'silenced';
      if (e.alertmanager)
        state.amSilences[e.alertmanager.requestId] = defined({
          requestId: e.alertmanager.requestId,
          triggerKey: e.triggerKey,
          openId: e.alertmanager.openId,
          until: e.until,
          who: e.alertmanager.who,
          via: e.via,
        });
      return undefined;
    }
    case 'confirm':
      entryAgg(state, e.entry).confirmations += 1;
      dup(state, e.dupFingerprint).confirmations += 1;
      return undefined;
    case 'delivered':
      applyDelivered(state, e);
      applyChatDelivered(state, e);
      return undefined;
    case 'outbox':
      applyOutbox(state, e, seq);
      return undefined;
    case 'outbox_failed':
      applyOutboxFailed(state, e);
      return undefined;
    case 'note':
      applyNote(state, e);
      keepNote(state, e, trigger);
      return undefined;
    case 'fix':
      applyFix(state, e, trigger);
      return undefined;
    case 'question':
      applyQuestion(state, e);
      return undefined;
    case 'refusal':
      applyRefusal(state, e);
      return undefined;
    case 'postmortem':
      rememberChatEvent(state, e.eventId, e.at);
      return undefined;
    case 'question_answered':
      countTokens(state, e.at, e.tokensIn + e.tokensOut);
      return undefined;
    case 'finding':
      applyFinding(state, e, { countRecall, trigger });
      return undefined;
    case 'noise':
      applyNoise(state, e, touchFingerprint, triggerFiring);
      return undefined;
    case 'curate':
      applyCurate(state, e);
      return undefined;
    case 'curated':
      applyCurated(state, e);
      return undefined;
    case 'ack':
      applyAck(state, e);
      return undefined;
    case 'pagerduty_call':
      applyPagerDutyCall(state, e);
      return undefined;
    case 'oncall_reminder': {
      const thread = threadOf(state, e.openId);
      if (thread) thread.reminded = e.at;
      return undefined;
    }
    case 'oncall_found': {
      const thread = threadOf(state, e.openId);
      if (thread) {
        delete thread.oncallLate;
        if (e.remind !== undefined) thread.remind = e.remind;
      }
      return undefined;
    }
  }
}

/** Fold a whole event sequence into a fresh state. */
export function replayEvents(events: Iterable<unknown>, limits: Partial<LedgerLimits> = {}): LedgerState {
  const state = createLedgerState(limits);
  for (const e of events) applyEvent(state, e);
  return state;
}
