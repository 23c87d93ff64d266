/**
 * Findings in the read model: a verified recall becomes a recall of its entry (so the track
 * record counts it, and its resolve), each trigger keeps its latest findings (what the next
 * investigation is told was checked before), and the day's token spend is summed (the daily
 * budget survives restarts).
 */
import type { FindingEvent, OpenEvent } from '../ledger-events.js';
import type { LedgerState, OpenRecord, PendingInvestigation, PriorFindingRecord } from './ledger-types.js';

/** Findings kept per trigger. */
const FINDINGS_PER_TRIGGER = 3;
/** Days of token spend kept. */
const TOKEN_DAYS = 8;
/** Investigation times kept (the hourly limit never needs more). */
const INVESTIGATION_TIMES = 1000;

export interface FindingHooks {
  /** Counts `open` as a recall of `entry` (in flight, or resolved when its episode closed already). */
  countRecall(state: LedgerState, open: OpenRecord, entry: string, resolvedAt: string | undefined): void;
  trigger(state: LedgerState, key: string): { newestConcludedOpen?: OpenRecord; findings?: PriorFindingRecord[] };
}

/** Investigations awaiting their finding kept at once; the oldest go first (a restart resumes at most these). */
const PENDING_INVESTIGATIONS = 1000;

/** An open the model investigates: pending until its finding is recorded. */
export function queueInvestigation(state: LedgerState, e: OpenEvent): void {
  if (e.investigate === undefined || e.id === undefined) return;
  const pending = (state.investigations ??= Object.create(null) as Record<string, PendingInvestigation>);
  const p: PendingInvestigation = { openId: e.id, fingerprint: e.fingerprint, triggerKey: e.triggerKey, at: e.at, incident: e.investigate.incident };
  if (e.coalesceKey !== undefined) p.coalesceKey = e.coalesceKey;
  pending[e.id] = p;
  let n = Object.keys(pending).length;
  for (const oldest in pending) {
    if (n <= PENDING_INVESTIGATIONS) break;
    delete pending[oldest];
    n -= 1;
  }
}

/**
 * Investigations whose finding is not recorded, oldest first, each with whether its incident is
 * over by now: every alert of a storm thread resolved, else its own open no longer unresolved.
 */
export function pendingInvestigations(state: LedgerState): Array<PendingInvestigation & { resolved: boolean }> {
  const out: Array<PendingInvestigation & { resolved: boolean }> = [];
  for (const id in state.investigations ?? {}) {
    const p = state.investigations![id]!;
    const storm = state.threads[id]?.storm;
    const resolved = storm ? storm.open <= 0 : !(state.fingerprints[p.fingerprint]?.open.some((o) => o.id === id) ?? false);
    out.push({ ...p, resolved });
  }
  return out;
}

export function applyFinding(state: LedgerState, e: FindingEvent, hooks: FindingHooks): void {
  if (state.investigations) delete state.investigations[e.openId];
  const t = hooks.trigger(state, e.triggerKey);
  if (e.kind === 'recall' && e.status === 'completed' && e.entry !== undefined) promoteToRecall(state, e, hooks);
  if (e.verdict !== undefined && e.verdict !== 'inconclusive') {
    const open = findOpen(state, e);
    if (open) t.newestConcludedOpen = { ...open, verdict: e.verdict };
  }
  if (e.summary !== undefined && e.verdict !== undefined) {
    const record: PriorFindingRecord = { at: e.at, summary: e.summary, verdict: e.verdict, confidence: e.confidence ?? 0 };
    if (e.topCause !== undefined) record.topCause = e.topCause;
    if (e.checked !== undefined) record.checked = e.checked.slice(0, 12);
    if (e.entry !== undefined) record.entry = e.entry;
    const list = (t.findings ??= []);
    list.push(record);
    while (list.length > FINDINGS_PER_TRIGGER) list.shift();
  }
  if (e.kind === 'fresh' && e.calls > 0) {
    state.investigationTimes.push(e.at);
    while (state.investigationTimes.length > INVESTIGATION_TIMES) state.investigationTimes.shift();
  }
  countTokens(state, e.at, e.tokensIn + e.tokensOut);
}

/** Tokens spent at `at`, in its UTC day's total (investigations and thread questions alike). */
export function countTokens(state: LedgerState, at: string, tokens: number): void {
  if (!(tokens > 0)) return;
  const day = at.slice(0, 10);
  state.tokensByDay[day] = (state.tokensByDay[day] ?? 0) + tokens;
  const days = Object.keys(state.tokensByDay).sort();
  while (days.length > TOKEN_DAYS) delete state.tokensByDay[days.shift()!];
}

/** The open a finding is about, wherever the read model still holds it. */
function findOpen(state: LedgerState, e: FindingEvent): OpenRecord | undefined {
  const fp = state.fingerprints[e.fingerprint];
  const open = fp?.open.find((o) => o.id === e.openId);
  if (open) return open;
  const t = state.triggers[e.triggerKey];
  if (t?.newestOpen?.id === e.openId) return t.newestOpen;
  if (t?.previousOpen?.id === e.openId) return t.previousOpen;
  return undefined;
}

function promoteToRecall(state: LedgerState, e: FindingEvent, hooks: FindingHooks): void {
  const entry = e.entry!;
  const fp = state.fingerprints[e.fingerprint];
  const open = fp?.open.find((o) => o.id === e.openId);
  const t = state.triggers[e.triggerKey];
  const mark = (o: OpenRecord | undefined): void => {
    if (!o || o.id !== e.openId) return;
    o.kind = 'recall';
    o.entry = entry;
    o.answerKind = 'incident';
  };
  if (open) {
    if (open.kind === 'recall' && open.entry === entry) return; // already counted
    mark(open);
    mark(t?.newestOpen);
    mark(t?.previousOpen);
    hooks.countRecall(state, open, entry, undefined);
    return;
  }
  // The incident resolved before the verdict came: it is a recall that already succeeded.
  const episode = t?.episodes.find((ep) => ep.openId === e.openId);
  if (episode && !(episode.kind === 'recall' && episode.entry === entry)) {
    episode.kind = 'recall';
    episode.entry = entry;
    episode.answerKind = 'incident';
    mark(t?.newestOpen);
    hooks.countRecall(
      state,
      {
        fingerprint: e.fingerprint,
        triggerKey: e.triggerKey,
        kind: 'recall',
        entry,
        answerKind: 'incident',
        dupFingerprint: episode.dupFingerprint,
        verdict: e.verdict ?? 'action_suggested',
        resolvable: true,
        at: episode.openedAt,
        id: e.openId,
      },
      entry,
      episode.resolvedAt ?? e.at,
    );
  }
}

/** Prior findings of a trigger, newest first. */
export function triggerFindings(state: LedgerState, triggerKey: string): PriorFindingRecord[] {
  return [...(state.triggers[triggerKey]?.findings ?? [])].reverse();
}

/** Tokens spent on a UTC day (`YYYY-MM-DD`). */
export function tokensSpent(state: LedgerState, day: string): number {
  return state.tokensByDay[day] ?? 0;
}
