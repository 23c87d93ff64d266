/**
 * Read functions over the ledger state (SPEC §6 outcome gate, §8 reads). They never mutate and
 * never scan the event log: everything they need is kept incrementally by `applyEvent`.
 */
import type { AnswerKind, TrackRecord } from '../types.js';
import type { DupStats, Episode, LedgerState, OpenRecord, SilenceRecord } from './ledger-types.js';

export interface EntryStats {
  /** Recall opens (concluded or not). */
  recalls: number;
  resolved: number;
  /** Recalls still unresolved past the resolve window, plus those forgotten as too many. */
  failed: number;
  /** Recalls neither resolved nor past the window: an incident still in progress. */
  inFlight: number;
  up: number;
  down: number;
  confirmations: number;
  /** `down` less one per two confirmations, never negative. */
  effectiveDown: number;
  lastResolved?: string;
}

/**
 * Per-entry aggregate at `now`; zeros for an entry the ledger has never seen. A recall counts
 * once concluded: resolved (a success) or unresolved `resolveWindowMs` after its open (a failure).
 */
export function entryStats(state: LedgerState, entry: string, now: Date = new Date(), resolveWindowMs = Number.POSITIVE_INFINITY): EntryStats {
  const a = state.entries[entry];
  const cutoff = now.getTime() - resolveWindowMs;
  // Buckets are per second of the open, oldest first: compare keys as strings, stop at the first
  // one still inside the window (no date parsing on the recall path).
  const cutoffKey = Number.isFinite(cutoff) ? new Date(Math.max(cutoff, -8.64e15)).toISOString().slice(0, 19) : '';
  let pending = 0;
  let lapsed = 0;
  for (const [second, n] of a?.inFlight ?? []) {
    pending += n;
    if (cutoffKey !== '' && second <= cutoffKey) lapsed += n;
  }
  const stats: EntryStats = {
    recalls: a?.recalls ?? 0,
    resolved: a?.resolved ?? 0,
    failed: (a?.expired ?? 0) + lapsed,
    inFlight: pending - lapsed,
    up: a?.up ?? 0,
    down: a?.down ?? 0,
    confirmations: a?.confirmations ?? 0,
    effectiveDown: 0,
  };
  // Two confirmations (an independent re-investigation reaching the same finding) offset one 👎.
  stats.effectiveDown = Math.max(0, stats.down - Math.floor(stats.confirmations / 2));
  if (a?.lastResolved !== undefined) stats.lastResolved = a.lastResolved;
  return stats;
}

export interface EntryTrackRecord extends TrackRecord {
  /** True while nothing has graded the entry: the outcome gate lets it through. */
  withheld: boolean;
  confirmations: number;
  effectiveDown: number;
  /** Concluded failures (unresolved past the window). */
  failed: number;
  /** Recalls still in progress (neither success nor failure). */
  inFlight: number;
  lastResolved?: string;
}

/** True once the ledger has recorded any resolve: unresolved recalls then mean something. */
export function resolveChannelLive(state: LedgerState): boolean {
  return state.resolves > 0;
}

/**
 * An entry's track record (SPEC §6, §8), in two numbers from the same counts.
 *
 * With S = successes and N = observations —
 * incident answer: S = resolved + 👍, N = resolved + failed + 👍 + 👎′;
 * runbook answer (claims no resolve): S = 👍, N = 👍 + 👎′ (👎′ = 👎 less one per two confirmations):
 *
 * - `rate   = (S + 1) / (N + 2)` — the SPEC's smoothed rate, read by the outcome gate;
 * - `factor = (S + 1) / (N + 1)` — what confidence is multiplied by: 1 with no observation and
 *   after any run of successes, lowered by each failure or 👎, raised back by each success. It
 *   is continuous at zero and monotonic: a resolve or 👍 never lowers confidence, an unresolved
 *   recall or 👎 never raises it.
 *
 * Failures count only once the ledger has seen a resolve (a bot whose Alertmanager does not
 * send resolves must not decay everything). `withheld` is true while N = 0.
 */
export function trackRecord(
  state: LedgerState,
  entry: string,
  answerKind: AnswerKind,
  now: Date = new Date(),
  resolveWindowMs = Number.POSITIVE_INFINITY,
): EntryTrackRecord {
  const s = entryStats(state, entry, now, resolveWindowMs);
  const failed = resolveChannelLive(state) ? s.failed : 0;
  const successes = answerKind === 'runbook' ? s.up : s.resolved + s.up;
  const observations = answerKind === 'runbook' ? s.up + s.effectiveDown : s.resolved + failed + s.up + s.effectiveDown;
  return {
    recalls: s.recalls,
    resolved: s.resolved,
    failed,
    inFlight: s.inFlight + (s.failed - failed),
    up: s.up,
    down: s.down,
    confirmations: s.confirmations,
    effectiveDown: s.effectiveDown,
    rate: (successes + 1) / (observations + 2),
    factor: (successes + 1) / (observations + 1),
    withheld: observations === 0,
    ...(s.lastResolved === undefined ? {} : { lastResolved: s.lastResolved }),
  };
}

export interface Occurrences {
  /** Opens recorded for the trigger key. */
  count: number;
  /** Episodes of the trigger that resolved. */
  resolved: number;
  firstSeen?: string;
  lastSeen?: string;
  newestOpen?: OpenRecord;
  /** The open before the newest one. */
  previousOpen?: OpenRecord;
  /** KB link (curatedUrl, else entry) of the previous open. */
  previousKbLink?: string;
  /** Newest KB link any open of this trigger carried. */
  lastKbLink?: string;
  /** Newest open whose verdict is not `inconclusive` (recurrence cooldown). */
  newestConcludedOpen?: OpenRecord;
  /** Live votes on the trigger key: a standing 👎 re-arms the cooldown. */
  up: number;
  down: number;
}

/** Recurrence facts per trigger key; `count` 0 for a trigger never opened. */
export function occurrences(state: LedgerState, triggerKey: string): Occurrences {
  const t = state.triggers[triggerKey];
  const out: Occurrences = { count: t?.count ?? 0, resolved: t?.resolved ?? 0, up: t?.up ?? 0, down: t?.down ?? 0 };
  if (!t) return out;
  if (t.firstSeen !== undefined) out.firstSeen = t.firstSeen;
  if (t.lastSeen !== undefined) out.lastSeen = t.lastSeen;
  if (t.newestOpen) out.newestOpen = t.newestOpen;
  if (t.previousOpen) {
    out.previousOpen = t.previousOpen;
    const link = t.previousOpen.curatedUrl ?? t.previousOpen.entry;
    if (link !== undefined) out.previousKbLink = link;
  }
  if (t.lastKbLink !== undefined) out.lastKbLink = t.lastKbLink;
  if (t.newestConcludedOpen) out.newestConcludedOpen = t.newestConcludedOpen;
  return out;
}

export interface SilenceState {
  active: boolean;
  /** The newest silence on the trigger, if any (also when it has lapsed or ended). */
  silence?: SilenceRecord;
}

/**
 * Whether a 🔕 holds on `triggerKey` at `now`. A silence lapses at `until`, and ends early on a
 * resolve of the trigger or a 👎 cast after it. A critical firing ends it by recording a new
 * `silence` event with `until` = now (the bot's job; the ledger has no separate "unsilence").
 */
export function silenceState(state: LedgerState, triggerKey: string, now: Date): SilenceState {
  const silence = state.triggers[triggerKey]?.silence;
  if (!silence) return { active: false };
  const active = silence.endedBy === undefined && Date.parse(silence.until) > now.getTime();
  return { active, silence };
}

function openToEpisode(o: OpenRecord): Episode {
  const e: Episode = {
    fingerprint: o.fingerprint,
    triggerKey: o.triggerKey,
    kind: o.kind,
    dupFingerprint: o.dupFingerprint,
    resolvable: o.resolvable,
    openedAt: o.at,
  };
  if (o.entry !== undefined) e.entry = o.entry;
  if (o.answerKind !== undefined) e.answerKind = o.answerKind;
  if (o.threadId !== undefined) e.threadId = o.threadId;
  if (o.startsAt !== undefined) e.startsAt = o.startsAt;
  if (o.id !== undefined) e.openId = o.id;
  return e;
}

/** Unresolved episodes of a fingerprint, newest first (the first is the one a resolve closes). */
export function openEpisodes(state: LedgerState, fingerprint: string): Episode[] {
  const fp = state.fingerprints[fingerprint];
  return fp ? fp.open.map(openToEpisode).reverse() : [];
}

/** Recently closed episodes, newest first: of one trigger key, or overall. */
export function recentEpisodes(state: LedgerState, triggerKey?: string): Episode[] {
  const list = triggerKey === undefined ? state.recentEpisodes : (state.triggers[triggerKey]?.episodes ?? []);
  return [...list].reverse();
}

/** Opens, resolves and confirmations per dup fingerprint (curation: promote resolved PRs). */
export function dupStats(state: LedgerState, dupFingerprint: string): DupStats {
  const d = state.dups[dupFingerprint];
  return d ? { ...d } : { opens: 0, resolved: 0, confirmations: 0 };
}
