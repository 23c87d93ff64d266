/**
 * Read functions over the ledger state (SPEC §6 outcome gate, §8 reads). They never mutate and
 * never scan the event log: everything they need is kept incrementally by `applyEvent`.
 */
import type { AnswerKind, TrackRecord } from '../types.js';
import type { DupStats, Episode, LedgerState, OpenRecord, SilenceRecord } from './ledger-types.js';

export interface EntryStats {
  recalls: number;
  resolved: number;
  up: number;
  down: number;
  confirmations: number;
  /** `down` less one per two confirmations, never negative. */
  effectiveDown: number;
  lastResolved?: string;
}

/** Per-entry aggregate; zeros for an entry the ledger has never seen. */
export function entryStats(state: LedgerState, entry: string): EntryStats {
  const a = state.entries[entry];
  const stats: EntryStats = {
    recalls: a?.recalls ?? 0,
    resolved: a?.resolved ?? 0,
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
  /** True when decay is withheld: `factor` is then 1 (no evidence, or no way to grade it yet). */
  withheld: boolean;
  confirmations: number;
  effectiveDown: number;
  lastResolved?: string;
}

/** True once the ledger has recorded any resolve: unresolved recalls then mean something. */
export function resolveChannelLive(state: LedgerState): boolean {
  return state.resolves > 0;
}

/**
 * The outcome factor of SPEC §6 for `entry` shown as `answerKind`.
 * - incident: `(resolved + up + 1) / (recalls + up + effectiveDown + 2)`;
 * - runbook: `(up + 1) / (up + effectiveDown + 2)` — a guide claims no resolve, so resolves and
 *   unresolved recalls never decay it.
 * Decay is withheld (factor 1) while nothing can grade the entry: an incident answer needs a
 * live resolve channel or feedback on the entry (a vote or a confirmation); a runbook needs
 * feedback. An entry with no observation at all is withheld too — absence of evidence never
 * blocks a recall (the prior mean 0.5 would halve every new entry's confidence).
 */
export function trackRecord(state: LedgerState, entry: string, answerKind: AnswerKind): EntryTrackRecord {
  const s = entryStats(state, entry);
  const feedback = s.up + s.down + s.confirmations > 0;
  const base = {
    recalls: s.recalls,
    resolved: s.resolved,
    up: s.up,
    down: s.down,
    confirmations: s.confirmations,
    effectiveDown: s.effectiveDown,
    ...(s.lastResolved === undefined ? {} : { lastResolved: s.lastResolved }),
  };
  if (answerKind === 'runbook') {
    if (!feedback) return { ...base, factor: 1, withheld: true };
    return { ...base, factor: (s.up + 1) / (s.up + s.effectiveDown + 2), withheld: false };
  }
  const observed = feedback || s.recalls > 0;
  if (!observed || !(feedback || resolveChannelLive(state))) return { ...base, factor: 1, withheld: true };
  const factor = (s.resolved + s.up + 1) / (s.recalls + s.up + s.effectiveDown + 2);
  return { ...base, factor, withheld: false };
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
