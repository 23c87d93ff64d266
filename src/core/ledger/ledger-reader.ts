/**
 * The one way to read the ledger (SPEC §8): every caller — the bot, the outbox, curation, the
 * investigation memory, `reprise mcp`, the CLI, tests — reads through this class, taking a
 * narrow `Pick<LedgerReader, …>` of what it needs. The read model itself stays private to
 * `core/ledger`; what this returns is read-only (a caller that wants to keep a value copies it).
 *
 * Reads never scan the event log (the read model is kept incrementally), except {@link events},
 * which is the log.
 *
 * Over 450 lines on purpose: it is the ledger's one read API (STYLE.md "One read API per model");
 * each method is a small, narrow view of the private state, and splitting the class would make two
 * readers.
 */
import type { MessageRef } from '../chat/chat-types.js';
import type { Verdict } from '../verdict.js';
import type { AnswerKind } from '../types.js';
import { ledgerAggregates, stateDigest, type LedgerAggregates } from './ledger-export-format.js';
import { cardSeq, isOutboxPending, pendingCount, pendingOutbox, pendingOutboxPage, seenChatEvent, threadByMessage, threadOf } from './ledger-chat.js';
import { pendingCurate } from './ledger-curation.js';
import { pendingInvestigations, tokensSpent, triggerFindings } from './ledger-findings.js';
import { dueHolds, holdOf } from './ledger-noise.js';
import {
  dupStats,
  entryStats,
  occurrences,
  openEpisodes,
  recentEpisodes,
  resolveChannelLive,
  silenceState,
  trackRecord,
  type EntryStats,
  type EntryTrackRecord,
  type Occurrences,
  type SilenceState,
} from './ledger-reads.js';
import type {
  AmSilencePending,
  CurateItem,
  DupStats,
  Episode,
  HoldRecord,
  LedgerState,
  OutboxItem,
  HumanTextRecord,
  PagerDutyPending,
  PendingInvestigation,
  PriorFindingRecord,
  ThreadRecord,
  Vote,
} from './ledger-types.js';
import type { LedgerRecord } from './ledger-records.js';
import { siblingFamilyKey } from '../chat/seen-before.js';
import { createLedgerState } from './ledger-state.js';
import type { MemoryViewState, ViewCuration, ViewDay, ViewEntry, ViewIncident, ViewTrigger } from './memory-view-state.js';

/** Read-only all the way down: what the reader hands out is the live read model, never a copy. */
export type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** One incident's thread across surfaces (see {@link ThreadRecord}). */
export type Thread = DeepReadonly<ThreadRecord>;
/** A firing held by the debounce. */
export type HeldFiring = DeepReadonly<HoldRecord>;
/** An open whose investigation has not recorded its finding, and whether its incident is over. */
export type PendingJob = DeepReadonly<PendingInvestigation> & { readonly resolved: boolean };

/** The trigger's standing answer (its newest finding), quoted to the next investigation. */
export interface StandingAnswer {
  cause: string;
  verdict: Verdict;
  concludedAt: string;
  entry?: string;
}

/** What the recurrence cooldown reads about a trigger. */
export interface RecurrenceFacts {
  /** When the trigger was last looked at (its newest open). */
  lastLookAt?: string;
  /** Whether any open of it reached a verdict. */
  concluded: boolean;
  /** Live 👎 on the trigger. */
  standingDown: number;
}

export interface LedgerReaderOptions {
  /** A recall unresolved this long after its open counts as a failure. */
  resolveWindowMs: number;
  /** The event log, by seq (`from` exclusive, `to` inclusive). */
  records?: (from: number, to?: number) => AsyncGenerator<LedgerRecord>;
  /** Last durable seq. */
  seq?: () => number;
}

export class LedgerReader {
  readonly #state: () => LedgerState;
  readonly #opts: LedgerReaderOptions;

  constructor(state: () => LedgerState, opts: LedgerReaderOptions) {
    this.#state = state;
    this.#opts = opts;
  }

  /** A reader over no ledger at all (`reprise recall` without a store, evaluations). */
  static empty(resolveWindowMs = Number.POSITIVE_INFINITY): LedgerReader {
    const state = createLedgerState();
    return new LedgerReader(() => state, { resolveWindowMs });
  }

  // ── the log ──

  /** Sequence number of the last durable event (0 when empty). */
  get seq(): number {
    return this.#opts.seq?.() ?? 0;
  }

  /** The events of the log after `from` up to `to` (inclusive), in order; a record that cannot be read says so. */
  events(from = 0, to?: number): AsyncGenerator<LedgerRecord> {
    if (!this.#opts.records) throw new Error('this ledger reader has no event log');
    return this.#opts.records(from, to);
  }

  /** Malformed events skipped while folding (never crash a replay). */
  get skipped(): number {
    return this.#state().skipped;
  }

  /** Totals that identify the read model (export trailers, verification). */
  aggregates(): LedgerAggregates {
    return ledgerAggregates(this.#state());
  }

  /** A digest of the whole read model (two ledgers that agree have the same one). */
  digest(): string {
    return stateDigest(this.#state());
  }

  // ── threads ──

  /** The thread of an open: its own, or for a storm member the thread it joined. */
  thread(openId: string): Thread | undefined {
    return threadOf(this.#state(), openId);
  }

  /** The thread a bot message belongs to (a reaction's or a click's target). */
  threadByMessage(ref: Pick<MessageRef, 'transport' | 'channel' | 'id'>): Thread | undefined {
    return threadByMessage(this.#state(), ref.transport, ref.channel, ref.id);
  }

  /** The thread of the trigger's newest open. */
  newestThread(triggerKey: string): Thread | undefined {
    const id = this.#state().triggers[triggerKey]?.newestOpen?.id;
    return id === undefined ? undefined : threadOf(this.#state(), id);
  }

  /**
   * The thread of an alert by its fingerprint (a PagerDuty incident id): its newest unresolved
   * open's, else the newest thread of its trigger when that thread is this alert's.
   */
  threadOfFingerprint(fingerprint: string): Thread | undefined {
    const s = this.#state();
    const fp = s.fingerprints[fingerprint];
    if (!fp) return undefined;
    const open = fp.open[fp.open.length - 1];
    if (open?.id !== undefined) return threadOf(s, open.id);
    const newest = fp.triggerKey === undefined ? undefined : this.newestThread(fp.triggerKey);
    return newest?.fingerprint === fingerprint ? newest : undefined;
  }

  /** Seconds from firing to the first ack of recent threads, oldest first (`/reprise status`). */
  ackSeconds(): readonly number[] {
    return this.#state().ackSeconds ?? [];
  }

  /** Where a thread's card for one surface sits in the log (its `post` outbox event). */
  cardSeq(openId: string, transport: string): number | undefined {
    return cardSeq(this.#state(), openId, transport);
  }

  /** The newest storm thread opened under a coalesce key. */
  stormThread(key: string): Thread | undefined {
    const s = this.#state();
    const id = s.stormByKey[key];
    return id === undefined ? undefined : s.threads[id];
  }

  /** Storm threads whose batch has not been flushed yet. */
  unflushedStorms(): Thread[] {
    const s = this.#state();
    const out: Thread[] = [];
    for (const key in s.stormByKey) {
      const t = s.threads[s.stormByKey[key]!];
      if (t?.storm && !t.storm.flushed) out.push(t);
    }
    return out;
  }

  /** Threads whose card still says firing, newest first (the Alertmanager reconciler). */
  firingThreads(limit: number): Thread[] {
    const threads = this.#state().threads;
    const out: Thread[] = [];
    const ids = Object.keys(threads);
    for (let i = ids.length - 1; i >= 0 && out.length < limit; i--) {
      const t = threads[ids[i]!]!;
      if (t.state === 'firing') out.push(t);
    }
    return out;
  }

  // ── triggers ──

  /** Whether the ledger has ever seen this trigger key (an open, a vote or a silence). */
  knowsTrigger(triggerKey: string): boolean {
    return Object.hasOwn(this.#state().triggers, triggerKey);
  }

  /** Every entry the ledger holds an aggregate for. */
  entryIds(): string[] {
    return Object.keys(this.#state().entries);
  }

  /** Live votes on a trigger, by (surface-qualified) user. */
  votes(triggerKey: string): Readonly<Record<string, Readonly<Vote>>> {
    return this.#state().triggers[triggerKey]?.votes ?? {};
  }

  /** Every trigger key the ledger has seen. */
  triggerKeys(): string[] {
    return Object.keys(this.#state().triggers);
  }

  /**
   * Trigger keys of the same alert on sibling workloads or hosts (`web-01` / `web-02`): every
   * part of the key equal but the name, and the names of one family (see `siblingFamilyKey`).
   * One pass over the trigger keys with a prefix check (no event is read); `triggerKey` itself
   * is not listed.
   */
  siblingTriggers(triggerKey: string, limit = 20): string[] {
    const family = siblingFamilyKey(triggerKey);
    if (family === undefined) return [];
    const prefix = triggerKey.split('|').slice(0, 3).join('|') + '|';
    const out: string[] = [];
    for (const key in this.#state().triggers) {
      if (key === triggerKey || !key.startsWith(prefix)) continue;
      if (siblingFamilyKey(key) === family) out.push(key);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Recurrence facts per trigger key; `count` 0 for a trigger never opened. */
  occurrences(triggerKey: string): Occurrences {
    return occurrences(this.#state(), triggerKey);
  }

  /** The trigger's latest human fixes (`fixed:`), oldest first. */
  humanFixes(triggerKey: string): readonly DeepReadonly<HumanTextRecord>[] {
    return this.#state().triggers[triggerKey]?.fixes ?? [];
  }

  /** The trigger's latest operator notes, oldest first. */
  humanNotes(triggerKey: string): readonly DeepReadonly<HumanTextRecord>[] {
    return this.#state().triggers[triggerKey]?.notes ?? [];
  }

  /** What the recurrence cooldown reads about a trigger. */
  recurrence(triggerKey: string): RecurrenceFacts {
    const o = occurrences(this.#state(), triggerKey);
    return { ...(o.lastSeen ? { lastLookAt: o.lastSeen } : {}), concluded: o.newestConcludedOpen !== undefined, standingDown: o.down };
  }

  /** Whether a 🔕 holds on the trigger at `now`, and the newest silence. */
  silence(triggerKey: string, now: Date): SilenceState {
    return silenceState(this.#state(), triggerKey, now);
  }

  /** Silences in force, soonest to end first. */
  activeSilences(now: Date, limit: number): Array<{ triggerKey: string; until: string; user: string }> {
    const s = this.#state();
    const out: Array<{ triggerKey: string; until: string; user: string }> = [];
    for (const key of Object.keys(s.triggers)) {
      const st = silenceState(s, key, now);
      if (st.active && st.silence) out.push({ triggerKey: key, until: st.silence.until, user: st.silence.user });
    }
    return out.sort((a, b) => (a.until < b.until ? -1 : 1)).slice(0, limit);
  }

  /** Unresolved incidents, newest first. */
  openIncidents(limit: number): Array<{ triggerKey: string; openedAt: string; startsAt?: string }> {
    const out: Array<{ triggerKey: string; openedAt: string; startsAt?: string }> = [];
    for (const fp of Object.values(this.#state().fingerprints))
      for (const o of fp.open) out.push({ triggerKey: o.triggerKey, openedAt: o.at, ...(o.startsAt ? { startsAt: o.startsAt } : {}) });
    return out.sort((a, b) => (a.openedAt < b.openedAt ? 1 : -1)).slice(0, limit);
  }

  /** The trigger's latest findings, newest first. */
  findings(triggerKey: string): readonly DeepReadonly<PriorFindingRecord>[] {
    return triggerFindings(this.#state(), triggerKey);
  }

  /** Every trigger with findings, with them (oldest first): the investigation memory's similar search. */
  *triggersWithFindings(): Generator<[string, readonly DeepReadonly<PriorFindingRecord>[]]> {
    for (const [key, t] of Object.entries(this.#state().triggers)) if (t.findings && t.findings.length > 0) yield [key, t.findings];
  }

  /** The trigger's standing answer (its newest finding), quoted to the next investigation. */
  standing(triggerKey: string): StandingAnswer | undefined {
    const f = triggerFindings(this.#state(), triggerKey)[0];
    if (!f) return undefined;
    return { cause: f.topCause ?? f.summary, verdict: f.verdict, concludedAt: f.at, ...(f.entry ? { entry: f.entry } : {}) };
  }

  // ── fingerprints ──

  /** Unresolved episodes of a fingerprint, newest first (the first is the one a resolve closes). */
  openEpisodes(fingerprint: string): Episode[] {
    return openEpisodes(this.#state(), fingerprint);
  }

  /** Fingerprints of the trigger's alerts firing now (opened, or kept quiet by the silence or the cooldown). */
  firingAlerts(triggerKey: string): string[] {
    return Object.keys(this.#state().triggers[triggerKey]?.firing ?? {});
  }

  /** The newest resolve that closed an open of the fingerprint (a re-sent resolve of that firing is a duplicate). */
  lastResolved(fingerprint: string): { at: string; startsAt?: string } | undefined {
    const r = this.#state().fingerprints[fingerprint]?.lastResolved;
    return r ? { ...r } : undefined;
  }

  /** Threads whose alerts Alertmanager may still hold (the card says firing or silenced), newest first. */
  /**
   * Threads whose on-call reminder is due at `now` (issue 32): still firing, nobody on it, not
   * reminded yet. Newest first, at most `limit`.
   */
  dueOnCallReminders(now: Date, limit: number): Thread[] {
    const threads = this.#state().threads;
    const out: Thread[] = [];
    const ids = Object.keys(threads);
    for (let i = ids.length - 1; i >= 0 && out.length < limit; i--) {
      const t = threads[ids[i]!]!;
      if (t.remind && t.reminded === undefined && t.state === 'firing' && (t.acks ?? []).length === 0 && Date.parse(t.remind.at) <= now.getTime()) out.push(t);
    }
    return out;
  }

  /** Firing threads still waiting for a late on-call answer of this route (and service), newest first, at most `limit`. */
  awaitingOnCall(route: string, service: string | undefined, limit: number): Thread[] {
    const threads = this.#state().threads;
    const out: Thread[] = [];
    const ids = Object.keys(threads);
    for (let i = ids.length - 1; i >= 0 && out.length < limit; i--) {
      const t = threads[ids[i]!]!;
      if (t.state === 'firing' && t.oncallLate?.route === route && t.oncallLate.service === service) out.push(t);
    }
    return out;
  }

  liveThreads(limit: number): Thread[] {
    const threads = this.#state().threads;
    const out: Thread[] = [];
    const ids = Object.keys(threads);
    for (let i = ids.length - 1; i >= 0 && out.length < limit; i--) {
      const t = threads[ids[i]!]!;
      if (t.state !== 'resolved') out.push(t);
    }
    return out;
  }

  /** Recently closed episodes, newest first: of one trigger key, or overall. */
  recentEpisodes(triggerKey?: string): Episode[] {
    return recentEpisodes(this.#state(), triggerKey);
  }

  /** When an alert with this fingerprint and status was last admitted (while the dedup window was on). */
  lastAdmitted(fingerprint: string, status: 'firing' | 'resolved'): string | undefined {
    const fp = this.#state().fingerprints[fingerprint];
    return status === 'resolved' ? fp?.admittedResolveAt : fp?.admittedFiringAt;
  }

  /** The debounce hold of a fingerprint, if one is pending. */
  holdOf(fingerprint: string): HeldFiring | undefined {
    return holdOf(this.#state(), fingerprint);
  }

  /** Firings held by the debounce right now. */
  holdCount(): number {
    return this.#state().holdCount;
  }

  /** Holds due at `now`, oldest first. */
  dueHolds(now: Date, limit: number): HeldFiring[] {
    return dueHolds(this.#state(), now, limit);
  }

  // ── entries ──

  /** Per-entry aggregate at `now`; zeros for an entry the ledger has never seen. */
  entryStats(entry: string, now: Date = new Date()): EntryStats {
    return entryStats(this.#state(), entry, now, this.#opts.resolveWindowMs);
  }

  /** The entry's track record at `now` (recalls conclude after the resolve window). */
  trackRecord(entry: string, answerKind: AnswerKind, now: Date = new Date()): EntryTrackRecord {
    return trackRecord(this.#state(), entry, answerKind, now, this.#opts.resolveWindowMs);
  }

  /** Opens, resolves and confirmations of one DupFingerprint. */
  dupStats(dupFingerprint: string): DupStats {
    return dupStats(this.#state(), dupFingerprint);
  }

  /** Whether resolves reach the ledger at all (decay is withheld until they do). */
  resolveChannelLive(): boolean {
    return resolveChannelLive(this.#state());
  }

  /** Time of the newest resolve, if any. */
  lastResolveAt(): string | undefined {
    return this.#state().lastResolveAt;
  }

  // ── outbox and chat ──

  /** Outbox items still to deliver, in the order they were recorded; lazy, so a pass can stop early. */
  pendingOutbox(): Generator<DeepReadonly<OutboxItem>> {
    return pendingOutbox(this.#state());
  }

  /** The outbox's next page: committed items recorded after `afterSeq`, oldest first, at most `limit`. */
  pendingOutboxPage(afterSeq: number, limit: number): Array<DeepReadonly<OutboxItem>> {
    return pendingOutboxPage(this.#state(), afterSeq, limit);
  }

  /** True while the outbox item is still to deliver. */
  isOutboxPending(id: string): boolean {
    return isOutboxPending(this.#state(), id);
  }

  /** How many outbox items are pending. */
  pendingOutboxCount(): number {
    return pendingCount(this.#state());
  }

  /** True when this inbound chat event was already recorded. */
  seenChatEvent(eventId: string): boolean {
    return seenChatEvent(this.#state(), eventId);
  }

  // ── work to resume ──

  /** Opens the model investigates whose finding is not recorded yet, oldest first. */
  pendingInvestigations(): PendingJob[] {
    return pendingInvestigations(this.#state());
  }

  /** When fresh investigations ended since `since` (ISO, oldest first): seeds the hourly limit after a restart. */
  investigationsSince(since: Date): string[] {
    const cutoff = since.getTime();
    return this.#state().investigationTimes.filter((t) => Date.parse(t) >= cutoff);
  }

  /** Alertmanager silences asked for whose outcome is not recorded (a restart came in between). */
  pendingAmSilences(): DeepReadonly<AmSilencePending>[] {
    return Object.values(this.#state().amSilences);
  }

  /** PagerDuty acknowledgements an ack asked for whose outcome is not settled (a restart came in between). */
  pendingPagerDutyCalls(): DeepReadonly<PagerDutyPending>[] {
    return Object.values(this.#state().pagerDutyCalls ?? {});
  }

  /** Forge work not yet settled, oldest first (the records themselves: do not change them). */
  pendingCurate(): CurateItem[] {
    return pendingCurate(this.#state());
  }

  /** Model tokens spent on a UTC day (`YYYY-MM-DD`). */
  tokensSpent(day: string): number {
    return tokensSpent(this.#state(), day);
  }

  /** Noise-control decisions per `action:reason`. */
  noiseCounts(): Readonly<Record<string, number>> {
    return this.#state().noiseCounts;
  }

  // ── the memory view (/ui, ledger-view.ts) ──

  #view(): DeepReadonly<MemoryViewState> | undefined {
    return this.#state().view;
  }

  /** The view's figures of each UTC day from `from` to `to` (`YYYY-MM-DD`, inclusive), oldest first; a day with nothing recorded is absent. */
  viewDays(from: string, to: string): Array<[string, DeepReadonly<ViewDay>]> {
    const days = this.#view()?.days ?? {};
    const out: Array<[string, DeepReadonly<ViewDay>]> = [];
    for (const key in days) if (key >= from && key <= to) out.push([key, days[key]!]);
    return out.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  }

  /** Opens the view keeps, newest first; lazy, so a page can stop early. */
  *viewIncidents(): Generator<DeepReadonly<ViewIncident>> {
    const v = this.#view();
    if (!v) return;
    for (let i = v.incidentOrder.length - 1; i >= 0; i--) {
      const incident = v.incidents[v.incidentOrder[i]!];
      if (incident) yield incident;
    }
  }

  /** How many opens the view keeps. */
  viewIncidentCount(): number {
    return this.#view()?.incidentOrder.length ?? 0;
  }

  /** One open as the view keeps it. */
  viewIncident(openId: string): DeepReadonly<ViewIncident> | undefined {
    const incidents = this.#view()?.incidents;
    return incidents && Object.hasOwn(incidents, openId) ? incidents[openId] : undefined;
  }

  /** One entry's history: last recalled, the opens it answered, its weeks. */
  viewEntry(id: string): DeepReadonly<ViewEntry> | undefined {
    const entries = this.#view()?.entries;
    return entries && Object.hasOwn(entries, id) ? entries[id] : undefined;
  }

  /** Every trigger the view tracks, with its opens and near misses. */
  *viewTriggers(): Generator<[string, DeepReadonly<ViewTrigger>]> {
    const v = this.#view();
    for (const key of v?.triggerOrder ?? []) {
      const t = v!.triggers[key];
      if (t) yield [key, t];
    }
  }

  /** Curation as the view keeps it: the newest decisions (newest first), counts by decision, the KB PRs filed (newest first). */
  viewCuration(): { recent: DeepReadonly<ViewCuration>[]; decisions: Readonly<Record<string, number>>; prs: DeepReadonly<ViewCuration>[] } {
    const v = this.#view();
    return {
      recent: [...(v?.curation ?? [])].reverse(),
      decisions: v?.decisions ?? {},
      prs: [...(v?.prOrder ?? [])].reverse().flatMap((u) => (v?.prs[u] ? [v.prs[u]] : [])),
    };
  }
}

export type { EntryStats, EntryTrackRecord, Occurrences, SilenceState, LedgerAggregates };
export type { AnswerClass, ViewCuration, ViewDay, ViewEntry, ViewIncident, ViewTrigger, ViewWeek } from './memory-view-state.js';
