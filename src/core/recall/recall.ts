import type { Answer, AnswerKind, Candidate, Entry, GateTraceStep, Incident, NearMiss, StructuralTier, TrackRecord } from '../types.js';
import type { CatalogSnapshot } from './catalog-snapshot.js';
import { buildQuery } from './build-query.js';
import { urlKey } from '../url-key.js';
import { alertNameContext, coversByName, structuralGate } from './structural.js';
import { deriveConfidence, type RecallOptions } from './confidence.js';
import { marginGate, siblingGate, type Agreeing, type MarginVerdict } from './margin-gate.js';
import type { SiblingJudgement } from './siblings.js';

export type { RecallOptions } from './confidence.js';

/** An entry's track record as the outcome gate reads it. */
export type TrackLookup = (entryId: string, kind: AnswerKind) => TrackRecord & { withheld: boolean; failed?: number; inFlight?: number };

export interface RecalledAnswer {
  entry: Entry;
  kind: AnswerKind;
  confidence: number;
  score: number;
  tier: StructuralTier;
  track: ReturnType<TrackLookup>;
  /** True when the confirm backstop could not run and the confidence was capped. */
  confirmCapped?: boolean;
  /**
   * The near-sibling runbooks answered with this one when the alert does not say which of
   * them it is (issue 33): the card offers "one of N related runbooks". Absent: an exact answer.
   */
  related?: Entry[];
}

/** How many related runbooks one answer may offer, itself included. */
export const RELATED_MAX = 3;

/**
 * The alert describes a pair of siblings but not which one: it says the distinguishing words
 * of neither, or of both alike, and at least RELATED_SHARED of what their names share
 * (weighted by rarity, as the rule weighs words) — an alert that says "kube" but not "down"
 * is not about the `Kube…Down` family at all.
 */
function undecided(j: SiblingJudgement): boolean {
  return Math.abs(j.ownShare - j.rivalShare) < 1e-9 && j.sharedShare >= RELATED_SHARED - 1e-9;
}

/** Share of the words two siblings' names share that an alert must say for them to answer together. */
export const RELATED_SHARED = 0.5;

export interface RecallResult {
  /** The answer the thread leads with: an instant recall when one fired, else the runbook. */
  answer: Answer | null;
  instant: RecalledAnswer | null;
  runbook: RecalledAnswer | null;
  nearMiss: NearMiss | null;
  trace: GateTraceStep[];
  /** Candidate entry ids: structurally agreeing ones first, each group best BM25 first. */
  ranked: string[];
  /** Candidates that agree structurally as instant recalls (same workload / namespace), best first: what a rerank call sees. */
  instantCandidates: Candidate[];
  /** Every candidate with the score the gates compared (name boost applied), best first. */
  scored: readonly Candidate[];
  /** Every sibling judgement the runbook tier made, in order (the trace's `sibling` steps, with their shares). */
  judgements: SiblingJudgement[];
}

function step(s: GateTraceStep): GateTraceStep {
  return s;
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

/** An alert's `runbook_url` selects an entry whose path is a suffix of it or whose `source` equals it. */
export function entryForRunbookUrl(url: string, catalog: CatalogSnapshot): Entry | undefined {
  const clean = urlKey(url);
  if (!clean) return undefined;
  const bySource = catalog.bySource.get(clean);
  if (bySource) return bySource;
  const lower = clean.toLowerCase();
  for (const e of catalog.entries) {
    const id = e.id.toLowerCase();
    const stem = id.replace(/\.md$/, '');
    if (lower.endsWith(`/${id}`) || lower.endsWith(`/${stem}`) || lower === id || lower === stem) return e;
  }
  return undefined;
}

/**
 * Recall (SPEC §6): structural gate, margin gate, outcome gate with bounded fallback to the
 * next agreeing candidate, then derived confidence. Instant recalls (resource-scoped entries)
 * and runbook answers (resource-less entries) are decided independently; both may show.
 * Pure and synchronous: confirm and verify are the caller's backstops.
 */
export function recall(incident: Incident, catalog: CatalogSnapshot, track: TrackLookup, opts: RecallOptions, now: Date): RecallResult {
  const trace: GateTraceStep[] = [];
  const { tokens, weights } = buildQuery(incident, opts.query);
  const candidates = catalog.index.search(tokens, opts.k, weights);
  const seen = new Set(candidates.map((c) => c.entry.id));
  const alertname = incident.alertname.toLowerCase();
  const coverers = catalog.byAlert.get(alertname) ?? [];
  // Entries that cover this alert by name are candidates even when text ranks them low.
  for (const e of coverers) {
    if (!seen.has(e.id)) {
      candidates.push({ entry: e, score: catalog.index.score(tokens, e.id, weights) });
      seen.add(e.id);
    }
  }
  // Name coverage: the words of an entry's alert name summarise the condition it is about; a
  // candidate whose name the alert text spells out in full is boosted over one that shares
  // only body vocabulary (calibrated in eval/README.md; 0 turns it off). An entry covering
  // several names counts its best-covered one.
  if (opts.nameBoost > 0) {
    for (const c of candidates) {
      const lists = catalog.nameWords.get(c.entry.id);
      if (!lists) continue;
      let covered = 0;
      for (const words of lists) {
        let n = 0;
        for (const w of words) if (weights.has(w)) n++;
        covered = Math.max(covered, n / words.length);
      }
      c.score *= 1 + opts.nameBoost * covered;
    }
  }
  // Ties by id in code-unit order, as the search port orders them.
  candidates.sort((a, b) => b.score - a.score || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0));

  const names = { ...alertNameContext(incident.alertname, catalog.knownAlerts), coveredBy: new Set(coverers.map((e) => e.id)) };
  const instantGroup: Agreeing[] = [];
  const runbookGroup: Agreeing[] = [];
  let nearMiss: NearMiss | null = null;
  const offerNearMiss = (nm: NearMiss): void => {
    if (!nearMiss) nearMiss = nm;
  };
  for (const cand of candidates) {
    const v = structuralGate(cand.entry, incident, names);
    trace.push(
      step({
        gate: v.passed ? 'structural' : cand.entry.status !== 'active' ? 'status' : 'structural',
        entry: cand.entry.id,
        passed: v.passed,
        value: v.tier ?? null,
        threshold: null,
        reason: v.reason,
      }),
    );
    if (!v.passed || !v.tier) {
      // A past incident with the same alert on another workload is worth pointing at.
      if (cand.entry.status === 'active' && cand.entry.type === 'Incident' && coversByName(cand.entry, incident, names)) {
        offerNearMiss({ entry: cand.entry.id, gate: 'structural', reason: v.reason });
      }
      continue;
    }
    const group = v.tier === 'exact' || v.tier === 'namespace' ? instantGroup : runbookGroup;
    group.push({ cand, tier: v.tier, byName: coversByName(cand.entry, incident, names) });
  }

  const rejected = new Set<string>();
  const judgements: SiblingJudgement[] = [];
  const decide = (group: Agreeing[], kind: AnswerKind): RecalledAnswer | null => {
    let remaining = group.slice();
    for (let attempt = 0; attempt <= opts.maxFallbacks && remaining.length > 0; attempt++) {
      let top = remaining[0]!;
      // A pointer page and the runbook it points at are one runbook: neither is the other's rival.
      const family = (id: string): string => catalog.family.get(id) ?? id;
      const rivalsOf = (a: Agreeing): Agreeing[] => remaining.filter((b) => family(b.cand.entry.id) !== family(a.cand.entry.id));
      let rivals = rivalsOf(top);
      // The sibling rule judges runbooks: past incidents of one workload share its name in
      // their titles, which the structural gate has already matched (a model's rerank sees
      // their distinguishing words instead). An alert's runbook_url names its runbook
      // outright: neither its siblings nor text similarity have anything to add.
      const judge = (a: Agreeing, against: readonly Agreeing[]): { judged: SiblingJudgement[] } | null => {
        const verdict = kind !== 'runbook' || a.tier === 'runbook_url' ? null : siblingGate(a, against, incident, catalog, opts);
        for (const j of verdict?.judged ?? []) {
          judgements.push(j);
          trace.push(
            step({
              gate: 'sibling',
              entry: a.cand.entry.id,
              passed: j.passed,
              value: round(j.overlap),
              threshold: opts.siblingOverlap,
              reason: j.reason,
              rival: j.rival,
            }),
          );
        }
        return verdict;
      };
      let siblings = judge(top, rivals);
      let refused = siblings?.judged.filter((j) => !j.passed) ?? [];
      const first = refused[0];
      if (first) {
        // The alert says every word only the sibling's name has and none of the leader's: it
        // describes the sibling, whatever their scores — judged in turn against its own siblings.
        const clear = first.ownSaid.length === 0 && first.rivalOwn.length > 0 && first.rivalSaid.length === first.rivalOwn.length;
        const promoted = clear ? remaining.find((a) => a.cand.entry.id === first.rival) : undefined;
        const again = promoted ? judge(promoted, rivalsOf(promoted)) : null;
        if (promoted && again) {
          top = promoted;
          rivals = rivalsOf(promoted);
          siblings = again;
          refused = again.judged.filter((j) => !j.passed);
        }
      }
      // Siblings the alert cannot tell apart — it says the words that distinguish them of
      // neither, or of both alike — answer together, as one of N related runbooks (at most
      // RELATED_MAX). The rule refuses only where the alert leans to a sibling it does not
      // clearly describe: that is evidence against the leader, not a lack of it.
      let related: Agreeing[] = [];
      if (refused.length > 0) {
        const against = refused.find((j) => !undecided(j));
        if (against !== undefined || refused.length + 1 > RELATED_MAX) {
          const why = against ?? refused[0]!;
          offerNearMiss({
            entry: top.cand.entry.id,
            gate: 'sibling',
            reason: !against
              ? `${why.reason}; ${refused.length + 1} runbooks cannot be told apart, more than the ${RELATED_MAX} a card may offer`
              : Math.abs(why.ownShare - why.rivalShare) < 1e-9
                ? `${why.reason}; nor does it say enough of what their names share (${Math.round(why.sharedShare * 100)}% of it, weighted, against ${RELATED_SHARED * 100}%) to be about either`
                : why.reason,
          });
          return null;
        }
        related = refused.map((j) => remaining.find((a) => a.cand.entry.id === j.rival)!).filter((a) => a !== undefined);
        const n = related.length + 1;
        trace.push(
          step({
            gate: 'sibling',
            entry: top.cand.entry.id,
            passed: true,
            value: n,
            threshold: RELATED_MAX,
            reason: `answered as one of ${n} related runbooks (${[top, ...related].map((a) => a.cand.entry.id).join(', ')}): the alert does not say which one it is`,
          }),
        );
      }
      const inFamily = new Set(related.map((a) => a.cand.entry.id));
      // Siblings told apart by what the alert says are not rivals for the margin either, nor
      // are the related runbooks answered with it.
      const runnerUp = rivals.find((a) => !inFamily.has(a.cand.entry.id) && !siblings?.judged.some((j) => j.rival === a.cand.entry.id));
      const margin: MarginVerdict =
        top.tier === 'runbook_url'
          ? {
              passed: true,
              value: top.cand.score,
              threshold: 0,
              margin: top.cand.score,
              reason: "selected by the alert's runbook_url; margin gate not applied",
            }
          : marginGate(top, runnerUp, opts);
      trace.push(
        step({
          gate: 'margin',
          entry: top.cand.entry.id,
          passed: margin.passed,
          value: round(margin.value),
          threshold: round(margin.threshold),
          reason: margin.reason,
          ...(runnerUp && top.tier !== 'runbook_url' ? { rival: runnerUp.cand.entry.id } : {}),
        }),
      );
      if (!margin.passed) {
        offerNearMiss({ entry: top.cand.entry.id, gate: 'margin', reason: margin.reason });
        return null;
      }
      const t = track(top.cand.entry.id, kind);
      const ok = t.withheld || t.rate >= opts.outcomeFloor;
      trace.push(
        step({
          gate: 'outcome',
          entry: top.cand.entry.id,
          passed: ok,
          value: round(t.rate),
          threshold: opts.outcomeFloor,
          reason: outcomeReason(t, kind, ok, opts.outcomeFloor),
        }),
      );
      if (ok) {
        // Nothing graded: no evidence either way, so the track record neither lowers nor raises it.
        const factor = t.withheld ? 1 : t.factor;
        const derived = deriveConfidence(
          {
            score: top.cand.score,
            margin: margin.margin,
            solo: runnerUp === undefined,
            tier: top.tier,
            byName: top.byName,
            factor,
            entry: top.cand.entry,
            now,
          },
          opts,
        );
        // One of N related runbooks: the chance the leading page is the one is at most 1 in N.
        const confidence = related.length > 0 ? Math.round((derived / (related.length + 1)) * 100) / 100 : derived;
        return {
          entry: top.cand.entry,
          kind,
          confidence,
          score: top.cand.score,
          tier: top.tier,
          track: t,
          ...(related.length > 0 ? { related: related.map((a) => a.cand.entry) } : {}),
        };
      }
      rejected.add(top.cand.entry.id);
      const done = top;
      remaining = remaining.filter((a) => a !== done);
    }
    return null;
  };

  const instant = decide(instantGroup, 'incident');
  if (instant && !opts.liveStateTools) {
    // Confirm backstop: without read-only live-state tools nothing checked the memory against
    // the cluster, so the answer may not claim more than the unconfirmed cap.
    const capped = Math.min(instant.confidence, opts.unconfirmedCap);
    trace.push(
      step({
        gate: 'confirm',
        entry: instant.entry.id,
        passed: true,
        value: capped,
        threshold: opts.unconfirmedCap,
        reason: `no live-state tools configured; confidence capped at ${opts.unconfirmedCap.toFixed(2)}`,
      }),
    );
    if (capped < instant.confidence) {
      instant.confidence = capped;
      instant.confirmCapped = true;
    }
  }
  let runbook: RecalledAnswer | null = null;
  const url = incident.runbookUrl ? entryForRunbookUrl(incident.runbookUrl, catalog) : undefined;
  if (url && url.status === 'active' && !url.resource) {
    trace.push(
      step({
        gate: 'structural',
        entry: url.id,
        passed: true,
        value: 'runbook_url',
        threshold: null,
        reason: `selected by the alert's runbook_url ${incident.runbookUrl}`,
      }),
    );
    runbook = decide(
      [
        {
          cand: candidates.find((c) => c.entry.id === url.id) ?? { entry: url, score: catalog.index.score(tokens, url.id, weights) },
          tier: 'runbook_url',
          byName: true,
        },
      ],
      'runbook',
    );
  }
  runbook ??= decide(
    runbookGroup.filter((a) => !rejected.has(a.cand.entry.id)),
    'runbook',
  );

  if (nearMiss !== null && (rejected.has((nearMiss as NearMiss).entry) || [instant, runbook].some((a) => a?.entry.id === (nearMiss as NearMiss).entry))) {
    nearMiss = null;
  }
  const lead = instant ?? runbook;
  const answer: Answer | null = lead
    ? { kind: lead.kind, entry: lead.entry.id, confidence: lead.confidence, ...(lead.related ? { related: lead.related.map((e) => e.id) } : {}) }
    : null;
  // Recall's own ranking: candidates that agree structurally first (the ones the gates weigh),
  // then the rest, each by BM25.
  const agreeing = new Set([...instantGroup, ...runbookGroup].map((a) => a.cand.entry.id));
  const ranked = [...candidates.filter((c) => agreeing.has(c.entry.id)), ...candidates.filter((c) => !agreeing.has(c.entry.id))].map((c) => c.entry.id);
  return { answer, instant, runbook, nearMiss, trace, ranked, instantCandidates: instantGroup.map((a) => a.cand), scored: candidates, judgements };
}

/** The outcome gate's reason, with the formula's numbers so the trace can be checked by hand. */
function outcomeReason(t: TrackRecord & { withheld: boolean; failed?: number; inFlight?: number }, kind: AnswerKind, ok: boolean, floor: number): string {
  const inFlight = t.inFlight ? ` · ${t.inFlight} in progress` : '';
  if (t.withheld) return `not graded yet (no concluded recall, no feedback${inFlight}); confidence factor 1`;
  const s = kind === 'runbook' ? `👍 ${t.up}` : `resolved ${t.resolved} + 👍 ${t.up}`;
  const n = kind === 'runbook' ? `👍 ${t.up} + 👎 ${t.down}` : `resolved ${t.resolved} + failed ${t.failed ?? 0} + 👍 ${t.up} + 👎 ${t.down}`;
  const verdict = ok ? '≥' : 'below';
  return `rate (${s} + 1)/(${n} + 2) = ${round(t.rate)} ${verdict} floor ${floor}; confidence factor (…+1)/(…+1) = ${round(t.factor)}${inFlight}`;
}
