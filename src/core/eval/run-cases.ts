import { parseAlertmanagerPayload } from '../alertmanager.js';
import { createLedgerState, trackRecord } from '../ledger/ledger-state.js';
import { buildCatalogSnapshot, type CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { recall, type RecallOptions } from '../recall/recall.js';
import type { Answer, Entry, GateTraceStep, Incident, NearMiss } from '../types.js';
import type { SiblingJudgement } from '../recall/siblings.js';
import type { SearchIndex } from '../../ports/search-index.js';
import { PostingsIndex } from '../search/postings-index.js';
import { expectedEntry, type EvalCase } from './eval-cases.js';
import { memoIndex } from './memo-index.js';
import type { CaseOutcome } from './metrics.js';

/** One case's outcome plus what recall said, for `--out` and the wrong-fire report. */
export interface CaseRun extends CaseOutcome {
  answer: Answer | null;
  trace: GateTraceStep[] | Array<{ gate: string; reason: string }>;
  /** The leading candidates and the expected entry with the scores the gates compared. */
  scores: Array<{ entry: string; score: number; rank: number }>;
  /** The candidate a gate refused when nothing answered, and the sibling judgements made. */
  nearMiss?: NearMiss | null;
  judgements?: readonly SiblingJudgement[];
}

/** How many of the best candidates a run keeps with their scores. */
const SCORES_KEPT = 5;

/** Runs cases against one catalog, re-indexing it once per left-out entry. */
export interface EvalRunner {
  run(c: EvalCase, opts: RecallOptions): CaseRun;
  /** The runbook an entry stands for in the whole catalog: a pointer page's target, else itself. */
  familyOf(id: string): string;
  /** An entry of the whole catalog. */
  entry(id: string): Entry | undefined;
}

export interface EvalRunnerOptions {
  /** Builds a search index over a catalog; default the one `serve` answers with (`PostingsIndex`). */
  index?: (entries: readonly Entry[]) => SearchIndex;
  /** Cache search results across settings (calibration); off for a single run. */
  memo?: boolean;
  /** Ignore pointer pages (ablation of the alias signal): each page stands alone. */
  ignorePointers?: boolean;
  now?: Date;
}

/**
 * Recall for evaluation: an empty ledger (no track record yet), the catalog as given or with
 * the case's `remove` entry left out.
 */
export function createEvalRunner(entries: readonly Entry[], o: EvalRunnerOptions): EvalRunner {
  const base = o.ignorePointers ? entries.map(({ pointsTo: _, ...e }) => e) : entries;
  const build = (list: readonly Entry[]): CatalogSnapshot => {
    const index = o.index ? o.index(list) : new PostingsIndex(list);
    return buildCatalogSnapshot(list, o.memo ? memoIndex(index) : index);
  };
  const snapshots = new Map<string, CatalogSnapshot>([['', build(base)]]);
  const families = new WeakMap<CatalogSnapshot, Map<string, string[]>>();
  const acceptedFor = (expected: string, snap: CatalogSnapshot): string[] => {
    let bySnap = families.get(snap);
    if (bySnap === undefined) families.set(snap, (bySnap = new Map()));
    let hit = bySnap.get(expected);
    if (hit === undefined) bySnap.set(expected, (hit = familyOf(expected, snap)));
    return hit;
  };
  const snapshotFor = (remove: string | undefined): CatalogSnapshot => {
    const key = remove ?? '';
    let s = snapshots.get(key);
    if (s === undefined) {
      // A runbook and the pages pointing at it are one runbook: all of it goes.
      const whole = snapshots.get('')!;
      const head = remove === undefined ? undefined : (whole.family.get(remove) ?? remove);
      s = build(base.filter((e) => e.id !== remove && (whole.family.get(e.id) ?? e.id) !== head));
      snapshots.set(key, s);
    }
    return s;
  };
  const incidents = new Map<string, Incident | null>();
  const incidentOf = (c: EvalCase): Incident | null => {
    let i = incidents.get(c.id);
    if (i === undefined) {
      try {
        i = parseAlertmanagerPayload(c.payload).incidents[0] ?? null;
      } catch {
        i = null;
      }
      incidents.set(c.id, i);
    }
    return i;
  };
  const empty = createLedgerState();
  const track = (e: string, k: 'incident' | 'runbook') => trackRecord(empty, e, k);
  const now = o.now ?? new Date();
  const whole = snapshots.get('')!;
  return {
    familyOf: (id) => whole.family.get(id) ?? id,
    entry: (id) => whole.byId.get(id),
    run(c, opts) {
      const snap = snapshotFor(c.remove);
      const expected = expectedEntry(c);
      const accepted = expected === null ? [] : acceptedFor(expected, snap);
      const incident = incidentOf(c);
      const head = { id: c.id, variant: c.variant, expected, ...(accepted.length > 0 ? { accepted } : {}) };
      if (!incident) return { ...head, fired: null, confidence: null, ranked: [], trace: [{ gate: 'input', reason: 'payload did not parse' }], answer: null, scores: [] };
      const r = recall(incident, snap, track, opts, now);
      const scores = r.scored.flatMap((c, rank) => (rank < SCORES_KEPT || c.entry.id === expected ? [{ entry: c.entry.id, score: c.score, rank }] : []));
      const related = r.answer?.related;
      return {
        ...head,
        fired: r.answer?.entry ?? null,
        ...(related ? { related } : {}),
        confidence: r.answer?.confidence ?? null,
        ranked: r.ranked, trace: r.trace, answer: r.answer, scores, nearMiss: r.nearMiss, judgements: r.judgements };
    },
  };
}

/** The other pages of an entry's pointer family (the page it points at, pages pointing at it). */
function familyOf(id: string, snap: CatalogSnapshot): string[] {
  const head = snap.family.get(id) ?? id;
  const out = new Set<string>();
  if (head !== id) out.add(head);
  for (const [member, target] of snap.family) if (target === head && member !== id) out.add(member);
  return [...out];
}
