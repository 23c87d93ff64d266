import { buildFlexIndex } from '../adapters/flexsearch/flex-index.js';
import type { FlexSearchIndex } from '../adapters/flexsearch/flex-index.js';
import { recallOptions } from '../cli/recall-options.js';
import { buildSearchCorpus, fullScanSearch, scoreEntry } from '../core/catalog/search-corpus.js';
import { createLedgerState, trackRecord } from '../core/ledger/ledger-state.js';
import { buildCatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { recall } from '../core/recall/recall.js';
import type { TrackLookup } from '../core/recall/recall.js';
import type { Candidate } from '../core/types.js';
import type { SearchIndex } from '../ports/search-index.js';
import type { LatencySummary } from './percentile.js';
import { buildMiniSearch, searchMiniSearch } from './mini-search-index.js';
import { generateCatalog } from './synthetic-catalog.js';
import { generateIncidents, generateQueries } from './synthetic-queries.js';
import { collectGarbage, timeBuild, timeSeries } from './timing.js';

export type Series = LatencySummary & { truncated: boolean };

/** Everything measured at one catalog size (all in ms unless named otherwise). */
export interface SizeResult {
  size: number;
  generateMs: number;
  build: { flex: number; fullScan: number; miniSearch: number };
  search: { flex: Series; fullScan: Series; miniSearch: Series };
  recall: { flex: Series; fullScan: Series; answered: number };
  /** How often our top-k equals full scan's (same ids, same order), over `agreementQueries`. */
  agreement: { topK: number; top1: number; queries: number };
  /** Mean distinct query terms per query. */
  meanQueryTerms: number;
}

export interface SizeBenchOptions {
  queries: number;
  warmup: number;
  /** Per timed series; keeps the 100k full scan within the run's five minutes. */
  budgetMs: number;
  /** Timed calls each series makes at least, budget or not. */
  minSamples: number;
  k: number;
  log: (line: string) => void;
}

const sameIds = (a: readonly Candidate[], b: readonly Candidate[]): boolean => a.length === b.length && a.every((c, i) => c.entry.id === b[i]?.entry.id);

/** Search index over an existing corpus that scans every entry: full-scan recall baseline. */
function fullScanIndexOver(flex: FlexSearchIndex): SearchIndex {
  const corpus = flex.corpus;
  return {
    size: flex.size,
    search: (tokens, k) => fullScanSearch(corpus, tokens, k),
    score: (tokens, id) => scoreEntry(corpus, tokens, id),
  };
}

/** Build every engine over a synthetic catalog of `size` entries and time searches and recalls. */
export function runSizeBench(size: number, o: SizeBenchOptions): SizeResult {
  const t0 = process.hrtime.bigint();
  const catalog = generateCatalog(size);
  const generateMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const { entries } = catalog;
  o.log(`  ${size}: catalog generated in ${generateMs.toFixed(0)} ms`);

  const runs = size <= 1000 ? 3 : 1;
  // The corpus alone is what the full scan needs; ours builds its own, so this one is dropped.
  const fullScan = timeBuild(runs, () => buildSearchCorpus(entries)).ms;
  collectGarbage();
  const flexBuild = timeBuild(runs, () => buildFlexIndex(entries));
  const flex = flexBuild.value;
  o.log(`  ${size}: built full-scan corpus ${fullScan.toFixed(0)} ms, ours ${flexBuild.ms.toFixed(0)} ms`);
  const msBuild = timeBuild(runs, () => buildMiniSearch(entries));
  const ms = msBuild.value;
  o.log(`  ${size}: built MiniSearch ${msBuild.ms.toFixed(0)} ms`);

  const queries = generateQueries(catalog, o.queries, 7);
  const timed = queries.map((q) => q.tokens);
  const warm = generateQueries(catalog, o.warmup, 8).map((q) => q.tokens);
  const series = <T>(warmup: readonly T[]) => ({ warmup, budgetMs: o.budgetMs, minSamples: Math.min(o.minSamples, o.queries) });

  const searchFlex = timeSeries(timed, (t) => flex.search(t, o.k).length, series(warm));
  o.log(`  ${size}: ours search p50 ${searchFlex.p50.toFixed(3)} ms p99 ${searchFlex.p99.toFixed(3)} ms`);
  const searchFull = timeSeries(timed, (t) => fullScanSearch(flex.corpus, t, o.k).length, series(warm));
  o.log(`  ${size}: full-scan search p50 ${searchFull.p50.toFixed(3)} ms (n=${searchFull.n})`);
  const searchMs = timeSeries(timed, (t) => searchMiniSearch(ms, t, o.k).length, series(warm));
  o.log(`  ${size}: MiniSearch search p50 ${searchMs.p50.toFixed(3)} ms (n=${searchMs.n})`);

  const opts = recallOptions();
  const state = createLedgerState();
  const track: TrackLookup = (id, kind) => trackRecord(state, id, kind);
  const now = new Date('2025-06-01T10:05:00Z');
  const snapshot = buildCatalogSnapshot(entries, flex, now);
  const fullSnapshot = { ...snapshot, index: fullScanIndexOver(flex) };
  const incidents = generateIncidents(catalog, o.queries, 11);
  const warmIncidents = generateIncidents(catalog, o.warmup, 12);
  const recallFlex = timeSeries(incidents, (inc) => recall(inc, snapshot, track, opts, now).ranked.length, series(warmIncidents));
  o.log(`  ${size}: recall() p50 ${recallFlex.p50.toFixed(3)} ms p99 ${recallFlex.p99.toFixed(3)} ms`);
  const recallFull = timeSeries(incidents, (inc) => recall(inc, fullSnapshot, track, opts, now).ranked.length, series(warmIncidents));

  // Untimed: does ours return what the exhaustive scan returns?
  const sample = queries.slice(0, Math.min(queries.length, 300));
  let topK = 0;
  let top1 = 0;
  for (const q of sample) {
    const a = flex.search(q.tokens, o.k);
    const b = fullScanSearch(flex.corpus, q.tokens, o.k);
    if (sameIds(a, b)) topK++;
    if (a[0]?.entry.id === b[0]?.entry.id) top1++;
  }
  const answered = sample.length === 0 ? 0 : incidents.slice(0, sample.length).filter((inc) => recall(inc, snapshot, track, opts, now).answer !== null).length / sample.length;
  const meanQueryTerms = queries.reduce((s, q) => s + new Set(q.tokens).size, 0) / Math.max(1, queries.length);
  return {
    size,
    generateMs,
    build: { flex: flexBuild.ms, fullScan, miniSearch: msBuild.ms },
    search: { flex: searchFlex, fullScan: searchFull, miniSearch: searchMs },
    recall: { flex: recallFlex, fullScan: recallFull, answered },
    agreement: { topK: topK / Math.max(1, sample.length), top1: top1 / Math.max(1, sample.length), queries: sample.length },
    meanQueryTerms,
  };
}
