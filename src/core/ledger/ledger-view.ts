/**
 * The memory view's part of the read model (issue 23): what `/ui` shows, folded one event at a
 * time and bounded, so no page ever reads the event log.
 *
 * - per UTC day: answers by kind (⚡ instant recall, 📚 runbook, 🔎 investigation, degraded,
 *   🔕 silenced), model calls and tokens, investigations and their tokens, first acks and
 *   resolves with their durations (sampled), 👍/👎 on recalled answers;
 * - per open (the newest {@link VIEW_LIMITS.incidents}): its answer, recall trace, resolve,
 *   model spend, votes and KB PRs;
 * - per entry: when it was last recalled, the opens it answered, a weekly history;
 * - per trigger: opens, answered opens, near misses by gate;
 * - curation: the newest decisions, counts by decision, the KB PRs filed.
 *
 * An open's kind is decided when it is recorded and moved when its finding says otherwise (a
 * model's verified recall makes it ⚡, a degraded investigation makes it degraded), in the day
 * it was opened. Plain JSON with null-prototype dictionaries, like the rest of the state.
 */
import { elapsedMs, spanEnd, spanStart } from '../chat/incident-span.js';
import type { LedgerEvent } from '../ledger-events.js';
import type { Episode, LedgerState } from './ledger-types.js';
import type { AnswerClass, MemoryViewState, ViewCuration, ViewDay, ViewEntry, ViewIncident, ViewTrigger } from './memory-view-state.js';

/** Bounds that keep the view finite however long the ledger runs. */
export const VIEW_LIMITS = {
  /** UTC days kept (the longest period the overview offers is 90). */
  days: 120,
  /** Duration samples kept per day (acks, resolves). */
  samplesPerDay: 500,
  /** Opens kept for the incidents pages. */
  incidents: 10_000,
  /** Opens remembered per entry. */
  opensPerEntry: 20,
  /** Weeks of history per entry. */
  weeksPerEntry: 26,
  /** Triggers tracked for the gaps page. */
  triggers: 20_000,
  /** Curation decisions kept. */
  curation: 200,
  /** KB PRs kept. */
  prs: 500,
  /** PRs remembered per open. */
  prsPerIncident: 5,
} as const;

/** Decisions that filed a pull request of their own. */
const FILED = new Set(['novel', 'fix_pr', 'postmortem_pr', 'concept_pr', 'amend_pr']);

function dict<T>(from?: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, from);
}

export function createMemoryView(): MemoryViewState {
  return {
    days: dict(),
    incidents: dict(),
    incidentOrder: [],
    entries: dict(),
    triggers: dict(),
    triggerOrder: [],
    curation: [],
    decisions: dict(),
    prs: dict(),
    prOrder: [],
  };
}

/** The view from its JSON form (a snapshot): dictionaries get their null prototype back. */
export function restoreMemoryView(v: MemoryViewState | undefined): MemoryViewState {
  if (!v) return createMemoryView();
  const incidents = dict<ViewIncident>();
  for (const [k, i] of Object.entries(v.incidents ?? {})) incidents[k] = i.votes ? { ...i, votes: dict(i.votes) } : i;
  const triggers = dict<ViewTrigger>();
  for (const [k, t] of Object.entries(v.triggers ?? {})) triggers[k] = { ...t, nearMiss: dict(t.nearMiss) };
  return {
    ...v,
    days: dict(v.days),
    incidents,
    entries: dict(v.entries),
    triggers,
    incidentOrder: [...(v.incidentOrder ?? [])],
    triggerOrder: [...(v.triggerOrder ?? [])],
    prOrder: [...(v.prOrder ?? [])],
    curation: [...(v.curation ?? [])],
    decisions: dict(v.decisions),
    prs: dict(v.prs),
  };
}

/** The UTC day of an ISO time (`YYYY-MM-DD`). */
export function dayOf(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso.slice(0, 10) : new Date(t).toISOString().slice(0, 10);
}

/** The Monday (UTC) of an ISO time's week (`YYYY-MM-DD`). */
export function weekOf(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso.slice(0, 10);
  const d = new Date(t);
  const back = (d.getUTCDay() + 6) % 7;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - back)).toISOString().slice(0, 10);
}

function emptyDay(): ViewDay {
  return {
    instant: 0,
    instantNoModel: 0,
    runbook: 0,
    investigation: 0,
    degraded: 0,
    silenced: 0,
    modelCalls: 0,
    tokens: 0,
    investigations: 0,
    investigationTokens: 0,
    acks: 0,
    ackSeconds: [],
    resolves: 0,
    resolveSeconds: [],
    recalledUp: 0,
    recalledDown: 0,
  };
}

function viewOf(state: LedgerState): MemoryViewState {
  return (state.view ??= createMemoryView());
}

/** The day's figures, created when new; the oldest day past the bound goes. */
function day(v: MemoryViewState, iso: string): ViewDay {
  const key = dayOf(iso);
  const existing = v.days[key];
  if (existing) return existing;
  const created = emptyDay();
  v.days[key] = created;
  const keys = Object.keys(v.days);
  if (keys.length > VIEW_LIMITS.days) {
    keys.sort();
    for (const k of keys.slice(0, keys.length - VIEW_LIMITS.days)) delete v.days[k];
  }
  return created;
}

/** The figures of a day already kept (a late change to an open of a forgotten day changes nothing). */
function keptDay(v: MemoryViewState, iso: string): ViewDay | undefined {
  return v.days[dayOf(iso)];
}

function sample(list: number[], seconds: number): void {
  list.push(Number.isFinite(seconds) ? Math.max(0, Math.round(seconds * 10) / 10) : 0);
  if (list.length > VIEW_LIMITS.samplesPerDay) list.shift();
}

function entryView(v: MemoryViewState, id: string): ViewEntry {
  return (v.entries[id] ??= { opens: [], weeks: [] });
}

/** Adds to one of an entry's weeks (kept in time order; the oldest past the bound go). */
function addWeek(v: MemoryViewState, entry: string, at: string, field: 1 | 2 | 3 | 4): void {
  const weeks = entryView(v, entry).weeks;
  const key = weekOf(at);
  let i = weeks.length;
  while (i > 0 && weeks[i - 1]![0] > key) i--;
  let w = weeks[i - 1];
  if (!w || w[0] !== key) {
    w = [key, 0, 0, 0, 0];
    weeks.splice(i, 0, w);
  }
  w[field] += 1;
  while (weeks.length > VIEW_LIMITS.weeksPerEntry) weeks.shift();
}

function answered(v: MemoryViewState, entry: string, openId: string, at: string): void {
  const e = entryView(v, entry);
  if (!e.opens.includes(openId)) {
    e.opens.push(openId);
    if (e.opens.length > VIEW_LIMITS.opensPerEntry) e.opens.shift();
  }
  if (e.lastRecalled === undefined || e.lastRecalled < at) e.lastRecalled = at;
  addWeek(v, entry, at, 1);
}

function triggerView(v: MemoryViewState, key: string, at: string): ViewTrigger {
  const existing = v.triggers[key];
  if (existing) return existing;
  const created: ViewTrigger = { opens: 0, answered: 0, firstAt: at, lastAt: at, nearMiss: dict() };
  v.triggers[key] = created;
  v.triggerOrder.push(key);
  // An order array, not `for…in`: on a dictionary-mode object that walks every key (ms at 10k).
  while (v.triggerOrder.length > VIEW_LIMITS.triggers) delete v.triggers[v.triggerOrder.shift()!];
  return created;
}

function classOf(e: Extract<LedgerEvent, { type: 'open' }>): AnswerClass {
  if (e.kind === 'recall' && e.answerKind !== 'runbook') return 'instant';
  if (e.answerKind === 'runbook' || e.kind === 'recall') return 'runbook';
  return 'investigation';
}

function move(v: MemoryViewState, i: ViewIncident, to: AnswerClass): void {
  if (i.cls === to) return;
  const d = keptDay(v, i.at);
  if (d) {
    d[i.cls] = Math.max(0, d[i.cls] - 1);
    d[to] += 1;
    // Votes already cast on it count for recall precision from now on (or stop counting).
    for (const vote of Object.values(i.votes ?? {})) {
      const f = vote === 'up' ? 'recalledUp' : 'recalledDown';
      if (to === 'instant') d[f] += 1;
      else if (i.cls === 'instant') d[f] = Math.max(0, d[f] - 1);
    }
  }
  i.cls = to;
}

function applyOpen(v: MemoryViewState, e: Extract<LedgerEvent, { type: 'open' }>): void {
  const cls = classOf(e);
  const d = day(v, e.at);
  d[cls] += 1;
  if (cls === 'instant') d.instantNoModel += 1;
  const t = triggerView(v, e.triggerKey, e.at);
  t.opens += 1;
  if (cls === 'instant' || cls === 'runbook') t.answered += 1;
  if (e.at > t.lastAt) t.lastAt = e.at;
  if (e.alert?.alertname) t.alertname = e.alert.alertname;
  const gate = e.trace?.answer === 'incident' ? undefined : (e.trace?.nearMiss?.gate ?? (e.trace?.stoppedBy === 'structural' ? undefined : e.trace?.stoppedBy));
  if (gate !== undefined && (e.trace?.candidates.length ?? 0) > 0) t.nearMiss[gate] = (t.nearMiss[gate] ?? 0) + 1;
  if (e.id === undefined) return;
  const incident: ViewIncident = { openId: e.id, triggerKey: e.triggerKey, fingerprint: e.fingerprint, at: e.at, cls, calls: 0, tokens: 0 };
  if (e.entry !== undefined) incident.entry = e.entry;
  if (e.answerKind !== undefined) incident.answerKind = e.answerKind;
  if (e.alert?.alertname) incident.alertname = e.alert.alertname;
  if (typeof e.alert?.title === 'string' && e.alert.title !== '') incident.title = e.alert.title.slice(0, 300);
  if (e.source !== undefined) incident.source = e.source;
  if (e.threadOf !== undefined) incident.threadOf = e.threadOf;
  if (e.trace !== undefined) incident.trace = e.trace;
  if (!v.incidents[e.id]) v.incidentOrder.push(e.id);
  v.incidents[e.id] = incident;
  while (v.incidentOrder.length > VIEW_LIMITS.incidents) delete v.incidents[v.incidentOrder.shift()!];
  if (e.entry !== undefined) answered(v, e.entry, e.id, e.at);
}

function applyClosed(v: MemoryViewState, ep: Episode): void {
  const at = ep.resolvedAt ?? ep.openedAt;
  const d = day(v, at);
  d.resolves += 1;
  // As chat says it: from the alert's own start to its own end.
  const ended = spanEnd({ endsAt: ep.endsAt, resolvedAt: at }) ?? at;
  sample(d.resolveSeconds, (elapsedMs(spanStart({ startsAt: ep.startsAt, openedAt: ep.openedAt }), ended) ?? 0) / 1000);
  const i = ep.openId === undefined ? undefined : v.incidents[ep.openId];
  if (i) i.resolvedAt = ended;
  if (ep.kind === 'recall' && ep.entry !== undefined) addWeek(v, ep.entry, at, 2);
}

function applyFinding(v: MemoryViewState, e: Extract<LedgerEvent, { type: 'finding' }>): void {
  const tokens = e.tokensIn + e.tokensOut;
  const d = day(v, e.at);
  d.modelCalls += e.calls;
  d.tokens += tokens;
  if (e.kind === 'fresh' && e.calls > 0) {
    d.investigations += 1;
    d.investigationTokens += tokens;
  }
  const i = v.incidents[e.openId];
  if (!i) return;
  i.calls += e.calls;
  i.tokens += tokens;
  i.findingStatus = e.status;
  if (e.kind === 'recall' && e.status === 'completed' && e.entry !== undefined && i.cls !== 'instant') {
    const wasAnswered = i.cls === 'runbook';
    move(v, i, 'instant');
    i.entry = e.entry;
    i.answerKind = 'incident';
    answered(v, e.entry, i.openId, i.at);
    const t = v.triggers[i.triggerKey];
    if (t && !wasAnswered) t.answered += 1;
  } else if (e.status === 'degraded' && i.cls === 'investigation') move(v, i, 'degraded');
}

function applyFeedback(v: MemoryViewState, state: LedgerState, e: Extract<LedgerEvent, { type: 'feedback' }>): void {
  const openId = e.openId ?? state.triggers[e.triggerKey]?.newestOpen?.id;
  const i = openId === undefined ? undefined : v.incidents[openId];
  if (e.vote !== 'clear') {
    const entry = (openId === undefined ? undefined : state.threads[openId]?.entry) ?? i?.entry ?? state.triggers[e.triggerKey]?.newestOpen?.entry;
    if (entry !== undefined) addWeek(v, entry, e.at, e.vote === 'up' ? 3 : 4);
  }
  if (!i) return;
  const votes = (i.votes ??= dict());
  const previous = votes[e.user];
  if (previous === e.vote) return;
  const d = i.cls === 'instant' ? keptDay(v, i.at) : undefined;
  if (previous !== undefined) {
    delete votes[e.user];
    if (d) {
      const f = previous === 'up' ? 'recalledUp' : 'recalledDown';
      d[f] = Math.max(0, d[f] - 1);
    }
  }
  if (e.vote === 'clear') return;
  votes[e.user] = e.vote;
  if (d) d[e.vote === 'up' ? 'recalledUp' : 'recalledDown'] += 1;
}

function applyCurated(v: MemoryViewState, e: Extract<LedgerEvent, { type: 'curated' }>): void {
  const c: ViewCuration = { at: e.at, subject: e.subject, decision: e.decision, triggerKey: e.triggerKey, openId: e.openId };
  if (e.url !== undefined) c.url = e.url;
  if (e.number !== undefined) c.number = e.number;
  if (e.detail !== undefined) c.detail = e.detail.slice(0, 300);
  v.curation.push(c);
  while (v.curation.length > VIEW_LIMITS.curation) v.curation.shift();
  v.decisions[e.decision] = (v.decisions[e.decision] ?? 0) + 1;
  if (e.url === undefined) return;
  if (FILED.has(e.decision) && !v.prs[e.url]) {
    v.prs[e.url] = c;
    v.prOrder.push(e.url);
    while (v.prOrder.length > VIEW_LIMITS.prs) delete v.prs[v.prOrder.shift()!];
  }
  const i = v.incidents[e.openId];
  if (i && (FILED.has(e.decision) || e.decision === 'duplicate_pr' || e.decision === 'pr_comment' || e.decision === 'pr_update')) {
    const prs = (i.prs ??= []);
    if (!prs.includes(e.url) && prs.length < VIEW_LIMITS.prsPerIncident) prs.push(e.url);
  }
}

/** What the fold needs to know from before `e` is applied (a thread's first ack). */
export interface ViewBefore {
  firstAck: boolean;
}

export function viewBefore(state: LedgerState, e: LedgerEvent): ViewBefore | undefined {
  if (e.type !== 'ack') return undefined;
  const id = e.openId ?? state.triggers[e.triggerKey]?.newestOpen?.id;
  const lead = id === undefined ? undefined : (state.stormMembers[id] ?? id);
  const thread = lead === undefined ? undefined : state.threads[lead];
  return { firstAck: thread !== undefined && (thread.acks?.length ?? 0) === 0 };
}

/** Adds what `e` means to the view; `closed` is the episode it closed, `before` what {@link viewBefore} saw. */
export function foldView(state: LedgerState, e: LedgerEvent, closed: Episode | undefined, before: ViewBefore | undefined): void {
  const v = viewOf(state);
  switch (e.type) {
    case 'open':
      applyOpen(v, e);
      break;
    case 'finding':
      applyFinding(v, e);
      break;
    case 'question_answered': {
      const d = day(v, e.at);
      d.modelCalls += e.calls;
      d.tokens += e.tokensIn + e.tokensOut;
      break;
    }
    case 'noise':
      if (e.action === 'drop' && e.reason === 'silence') day(v, e.at).silenced += 1;
      break;
    case 'ack':
      if (before?.firstAck) {
        const id = e.openId ?? state.triggers[e.triggerKey]?.newestOpen?.id;
        const thread = id === undefined ? undefined : state.threads[state.stormMembers[id] ?? id];
        const d = day(v, e.at);
        d.acks += 1;
        sample(d.ackSeconds, (Date.parse(e.at) - Date.parse(thread?.firedAt ?? thread?.openedAt ?? e.at)) / 1000);
      }
      break;
    case 'feedback':
      applyFeedback(v, state, e);
      break;
    case 'curated':
      applyCurated(v, e);
      break;
    default:
      break;
  }
  if (closed) applyClosed(v, closed);
}
