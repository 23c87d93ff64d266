/**
 * The memory view's figures, computed from the ledger's read model (LedgerReader's view reads,
 * ledger-view.ts) and the served catalog — never from the event log: the reader type below
 * leaves `events()` out, so no page can scan it. Work per request is bounded by the view's own
 * bounds (days, kept opens, triggers) and the catalog's size; the knowledge rows are computed
 * once per ledger change and catalog snapshot, not per request.
 */
import type { LedgerReader, ViewDay, ViewIncident, AnswerClass, ViewWeek } from '../../core/ledger/ledger-reader.js';
import type { DeepReadonly } from '../../core/ledger/ledger-reader.js';
import { isStale } from '../../core/recall/confidence.js';
import type { CatalogSnapshot } from '../../core/recall/catalog-snapshot.js';
import type { AnswerKind, Entry } from '../../core/types.js';
import { rankTextQuery, type FuzzyTextIndex } from '../../core/search/text-query.js';

/** What the view reads: the read model only (no `events`). */
export type ViewReader = Pick<
  LedgerReader,
  'seq' | 'viewDays' | 'viewIncidents' | 'viewIncidentCount' | 'viewIncident' | 'viewEntry' | 'viewTriggers' | 'viewCuration' | 'trackRecord' | 'thread'
>;

export const PERIODS = [7, 30, 90] as const;
export type Period = (typeof PERIODS)[number];
export const PAGE_SIZE = 50;

export const CLASSES: readonly AnswerClass[] = ['instant', 'runbook', 'investigation', 'degraded'];

/** `sorted` ascending; nearest-rank percentile. */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export interface OverviewDay {
  day: string;
  instant: number;
  runbook: number;
  investigation: number;
  degraded: number;
  silenced: number;
}

export interface Overview {
  days: number;
  from: string;
  to: string;
  perDay: OverviewDay[];
  totals: OverviewDay;
  modelCalls: number;
  tokensSpent: number;
  investigations: number;
  investigationTokens: number;
  /** Mean tokens of an investigation in the period (undefined: none to estimate from). */
  meanInvestigationTokens?: number;
  instantNoModel: number;
  tokensAvoided: number;
  acks: number;
  ackMedianS?: number;
  ackP90S?: number;
  resolves: number;
  resolveMedianS?: number;
  resolveP90S?: number;
  votesUp: number;
  votesDown: number;
  /** up / (up + down) on recalled answers; undefined without votes. */
  precision?: number;
}

const dayKey = (t: number): string => new Date(t).toISOString().slice(0, 10);

export function overview(read: ViewReader, now: Date, days: Period): Overview {
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const from = dayKey(end - (days - 1) * 86_400_000);
  const to = dayKey(end);
  const byDay = new Map<string, DeepReadonly<ViewDay>>(read.viewDays(from, to));
  const perDay: OverviewDay[] = [];
  const totals: OverviewDay = { day: 'total', instant: 0, runbook: 0, investigation: 0, degraded: 0, silenced: 0 };
  let modelCalls = 0;
  let tokensSpent = 0;
  let investigations = 0;
  let investigationTokens = 0;
  let instantNoModel = 0;
  let acks = 0;
  let resolves = 0;
  let votesUp = 0;
  let votesDown = 0;
  const ackS: number[] = [];
  const resolveS: number[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const key = dayKey(end - i * 86_400_000);
    const d = byDay.get(key);
    const row: OverviewDay = {
      day: key,
      instant: d?.instant ?? 0,
      runbook: d?.runbook ?? 0,
      investigation: d?.investigation ?? 0,
      degraded: d?.degraded ?? 0,
      silenced: d?.silenced ?? 0,
    };
    perDay.push(row);
    totals.instant += row.instant;
    totals.runbook += row.runbook;
    totals.investigation += row.investigation;
    totals.degraded += row.degraded;
    totals.silenced += row.silenced;
    if (!d) continue;
    modelCalls += d.modelCalls;
    tokensSpent += d.tokens;
    investigations += d.investigations;
    investigationTokens += d.investigationTokens;
    instantNoModel += d.instantNoModel;
    acks += d.acks;
    resolves += d.resolves;
    votesUp += d.recalledUp;
    votesDown += d.recalledDown;
    ackS.push(...d.ackSeconds);
    resolveS.push(...d.resolveSeconds);
  }
  ackS.sort((a, b) => a - b);
  resolveS.sort((a, b) => a - b);
  const mean = investigations > 0 ? Math.round(investigationTokens / investigations) : undefined;
  const o: Overview = {
    days,
    from,
    to,
    perDay,
    totals,
    modelCalls,
    tokensSpent,
    investigations,
    investigationTokens,
    instantNoModel,
    tokensAvoided: mean === undefined ? 0 : instantNoModel * mean,
    acks,
    resolves,
    votesUp,
    votesDown,
  };
  if (mean !== undefined) o.meanInvestigationTokens = mean;
  const am = percentile(ackS, 50);
  const a9 = percentile(ackS, 90);
  const rm = percentile(resolveS, 50);
  const r9 = percentile(resolveS, 90);
  if (am !== undefined) o.ackMedianS = am;
  if (a9 !== undefined) o.ackP90S = a9;
  if (rm !== undefined) o.resolveMedianS = rm;
  if (r9 !== undefined) o.resolveP90S = r9;
  if (votesUp + votesDown > 0) o.precision = votesUp / (votesUp + votesDown);
  return o;
}

// ── knowledge ──

export const FLAGS = ['decaying', 'below-floor', 'contested', 'stale', 'never-recalled', 'retired'] as const;
export type Flag = (typeof FLAGS)[number];
export const FLAG_LABEL: Record<Flag, string> = {
  decaying: 'decaying',
  'below-floor': 'below the floor',
  contested: 'contested',
  stale: 'stale',
  'never-recalled': 'never recalled',
  retired: 'retired',
};

export type Trend = 'rising' | 'falling' | 'steady' | 'new';

export interface KnowledgeRow {
  id: string;
  title: string;
  type: string;
  status: string;
  answerKind: AnswerKind;
  recalls: number;
  resolved: number;
  up: number;
  down: number;
  factor: number;
  rate: number;
  withheld: boolean;
  trend: Trend;
  lastRecalled?: string;
  lastValidated?: string;
  /** When this bot first served it (staleness counts from the later of this and its own date). */
  servedSince?: string;
  flags: Flag[];
}

export interface KnowledgeOptions {
  outcomeFloor: number;
  staleAfterMs: number;
  /** When this bot first served an entry (runtime/served-since.ts): staleness counts from it too. */
  servedSince?: { of(id: string): string | undefined };
  /**
   * The typo-tolerant index for `?q=` (issue 28 item 3): with it, a search lists what the words
   * name first, then FlexSearch's matches; without it, entries whose id or title contains `q`.
   */
  textIndex?: (snapshot: CatalogSnapshot) => FuzzyTextIndex;
}

/** The answer kind an entry's track record is kept under: a resource-scoped entry recalls instantly, a resource-less one is a runbook (SPEC §6). */
export function answerKindOf(e: Entry): AnswerKind {
  return e.resource !== undefined || e.alertResource !== undefined ? 'incident' : 'runbook';
}

/** Success share of the last four weeks against the four before (answers resolved or 👍 over answers and votes). */
export function trendOf(weeks: readonly Readonly<ViewWeek>[] | undefined, now: Date): Trend {
  if (!weeks || weeks.length === 0) return 'new';
  const cut = now.getTime() - 28 * 86_400_000;
  const early = now.getTime() - 56 * 86_400_000;
  const share = (ws: typeof weeks): number | undefined => {
    let good = 0;
    let all = 0;
    for (const [, answers, resolves, up, down] of ws) {
      good += resolves + up;
      all += answers + up + down;
    }
    return all === 0 ? undefined : good / all;
  };
  const recent = share(weeks.filter((w) => Date.parse(w[0]) >= cut));
  const before = share(weeks.filter((w) => Date.parse(w[0]) >= early && Date.parse(w[0]) < cut));
  if (recent === undefined || before === undefined) return 'steady';
  if (recent > before + 0.1) return 'rising';
  if (recent < before - 0.1) return 'falling';
  return 'steady';
}

export function knowledgeRow(read: ViewReader, e: Entry, now: Date, o: KnowledgeOptions): KnowledgeRow {
  const kind = answerKindOf(e);
  const tr = read.trackRecord(e.id, kind, now);
  const hist = read.viewEntry(e.id);
  // DeepReadonly loses the tuple's shape; the fold keeps it.
  const trend = trendOf(hist?.weeks as unknown as readonly Readonly<ViewWeek>[] | undefined, now);
  const flags: Flag[] = [];
  const below = !tr.withheld && tr.rate < o.outcomeFloor;
  if (!tr.withheld && tr.factor < 1 && !below && (trend === 'falling' || tr.failed > 0 || tr.effectiveDown > 0)) flags.push('decaying');
  if (below) flags.push('below-floor');
  if (tr.effectiveDown > 0 && tr.down >= tr.up) flags.push('contested');
  const servedSince = o.servedSince?.of(e.id);
  if (isStale(e, now, o.staleAfterMs, servedSince)) flags.push('stale');
  if (tr.recalls === 0 && (hist?.opens.length ?? 0) === 0) flags.push('never-recalled');
  if (e.status === 'retired') flags.push('retired');
  const row: KnowledgeRow = {
    id: e.id,
    title: e.title,
    type: e.type,
    status: e.status,
    answerKind: kind,
    recalls: tr.recalls,
    resolved: tr.resolved,
    up: tr.up,
    down: tr.down,
    factor: tr.factor,
    rate: tr.rate,
    withheld: tr.withheld,
    trend,
    flags,
  };
  if (hist?.lastRecalled) row.lastRecalled = hist.lastRecalled;
  if (e.lastValidated) row.lastValidated = e.lastValidated;
  if (servedSince) row.servedSince = servedSince;
  return row;
}

export interface KnowledgeQuery {
  flag?: Flag;
  q?: string;
  kind?: string;
}

/**
 * The knowledge table over the whole catalog, a page at a time. Sorting and the text and type
 * filters need no track record, so a page computes the rows of its own 50 entries only, from
 * the ledger as it is now. A flag filter needs every entry's flags: those come from a list
 * computed at most once a minute (and per catalog snapshot), so a busy ledger never makes each
 * request recompute 10k track records.
 */
export class KnowledgeRows {
  #sorted: { snapshot: CatalogSnapshot; entries: Entry[]; text: string[] } | undefined;
  #flags: { snapshot: CatalogSnapshot; minute: number; flags: Flag[][] } | undefined;

  constructor(
    private readonly read: ViewReader,
    private readonly opts: KnowledgeOptions,
  ) {}

  #sortedOf(snapshot: CatalogSnapshot): { entries: Entry[]; text: string[] } {
    if (this.#sorted?.snapshot !== snapshot) {
      const entries = [...snapshot.entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      this.#sorted = { snapshot, entries, text: entries.map((e) => `${e.id}\n${e.title}`.toLowerCase()) };
    }
    return this.#sorted;
  }

  #flagsOf(snapshot: CatalogSnapshot, now: Date): Flag[][] {
    const minute = Math.floor(now.getTime() / 60_000);
    const f = this.#flags;
    if (f && f.snapshot === snapshot && f.minute === minute) return f.flags;
    const flags = this.#sortedOf(snapshot).entries.map((e) => knowledgeRow(this.read, e, now, this.opts).flags);
    this.#flags = { snapshot, minute, flags };
    return flags;
  }

  /** One page of the rows matching `f` (the page clamped to the last), and how many match in all. */
  page(snapshot: CatalogSnapshot, now: Date, f: KnowledgeQuery, page: number): { rows: KnowledgeRow[]; total: number; page: number } {
    const { entries: sorted, text } = this.#sortedOf(snapshot);
    const q = f.q?.trim().toLowerCase();
    // Typed text ranks as people mean it (names, then fuzzy matches); the id/title filter is
    // then done, so the substring test below is skipped.
    const ranked = q && this.opts.textIndex ? rankTextQuery(q, snapshot.entries, this.opts.textIndex(snapshot), snapshot.entries.length) : undefined;
    const found = new Set(ranked?.map((h) => h.entry.id));
    // Then any other entry whose id or title holds the text as typed (a part of a name).
    const entries = ranked ? [...ranked.map((h) => h.entry), ...sorted.filter((e, i) => !found.has(e.id) && text[i]!.includes(q!))] : sorted;
    const position = ranked ? new Map(sorted.map((e, i) => [e.id, i])) : undefined;
    const flags = f.flag ? this.#flagsOf(snapshot, now) : undefined;
    const matched: Entry[] = [];
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (f.kind && e.type !== f.kind) continue;
      const at = position ? position.get(e.id)! : i;
      if (q && !ranked && !text[at]!.includes(q)) continue;
      if (flags && f.flag && !flags[at]!.includes(f.flag)) continue;
      matched.push(e);
    }
    const pages = Math.max(1, Math.ceil(matched.length / PAGE_SIZE));
    const p = Math.min(Math.max(1, page), pages);
    const rows = matched.slice((p - 1) * PAGE_SIZE, p * PAGE_SIZE).map((e) => knowledgeRow(this.read, e, now, this.opts));
    return { rows, total: matched.length, page: p };
  }
}

// ── incidents ──

export interface IncidentQuery {
  trigger?: string;
  kind?: string;
}

/** One page of the kept opens, newest first, filtered; `total` counts every match. */
export function incidentsPage(read: ViewReader, f: IncidentQuery, page: number): { items: DeepReadonly<ViewIncident>[]; total: number } {
  const items: DeepReadonly<ViewIncident>[] = [];
  const start = (page - 1) * PAGE_SIZE;
  let total = 0;
  const trigger = f.trigger?.trim();
  for (const i of read.viewIncidents()) {
    if (trigger && i.triggerKey !== trigger && !(i.alertname ?? '').toLowerCase().includes(trigger.toLowerCase())) continue;
    if (f.kind && i.cls !== f.kind) continue;
    if (total >= start && items.length < PAGE_SIZE) items.push(i);
    total += 1;
  }
  return { items, total };
}

/**
 * One value per minute (and, when `perSeq`, per ledger seq): a page whose figures move slowly
 * is computed at most that often, however often it is asked for.
 */
export class Memo<T> {
  #key: string | undefined;
  #value: T | undefined;

  constructor(
    private readonly read: Pick<ViewReader, 'seq'>,
    private readonly perSeq: boolean,
  ) {}

  get(now: Date, part: string, make: () => T): T {
    const key = `${this.perSeq ? this.read.seq : ''}|${Math.floor(now.getTime() / 60_000)}|${part}`;
    if (this.#key !== key || this.#value === undefined) {
      this.#value = make();
      this.#key = key;
    }
    return this.#value;
  }
}

// ── gaps ──

export interface Gaps {
  /** Triggers opened at least twice with no answer ever shown, most opens first. */
  unanswered: Array<{ triggerKey: string; opens: number; lastAt: string; alertname?: string }>;
  /** Near misses by gate, and the triggers stopped at a gate at least twice. */
  nearMissByGate: Array<{ gate: string; total: number; triggers: Array<{ triggerKey: string; count: number }> }>;
}

const GAP_ROWS = 50;
/** Gates whose refusals are correct answers, not gaps: a candidate on another workload (or retired, or a draft). */
const NOT_GAPS = new Set(['structural', 'status']);

export function gaps(read: ViewReader): Gaps {
  const unanswered: Gaps['unanswered'] = [];
  const gates = new Map<string, { total: number; triggers: Array<{ triggerKey: string; count: number }> }>();
  for (const [key, t] of read.viewTriggers()) {
    if (t.opens >= 2 && t.answered === 0)
      unanswered.push({ triggerKey: key, opens: t.opens, lastAt: t.lastAt, ...(t.alertname ? { alertname: t.alertname } : {}) });
    for (const gate in t.nearMiss) {
      // A structural refusal is the gate doing its job (SPEC §6: two different named workloads
      // never agree): the past incident on another workload is pointed at, not missing knowledge.
      if (NOT_GAPS.has(gate)) continue;
      const n = t.nearMiss[gate]!;
      const g = gates.get(gate) ?? { total: 0, triggers: [] };
      g.total += n;
      if (n >= 2) g.triggers.push({ triggerKey: key, count: n });
      gates.set(gate, g);
    }
  }
  unanswered.sort((a, b) => b.opens - a.opens || (a.lastAt < b.lastAt ? 1 : -1));
  return {
    unanswered: unanswered.slice(0, GAP_ROWS),
    nearMissByGate: [...gates.entries()]
      .map(([gate, g]) => ({ gate, total: g.total, triggers: g.triggers.sort((a, b) => b.count - a.count).slice(0, GAP_ROWS) }))
      .sort((a, b) => b.total - a.total),
  };
}
