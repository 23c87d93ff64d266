import { buildFlexIndex } from '../src/adapters/flexsearch/flex-index.js';
import { recallOptions } from '../src/runtime/recall-options.js';
import { buildSearchCorpus, fullScanSearch, scoreEntry } from '../src/core/catalog/search-corpus.js';
import { createLedgerState, trackRecord } from '../src/core/ledger/ledger-state.js';
import { buildCatalogSnapshot } from '../src/core/recall/catalog-snapshot.js';
import { recall } from '../src/core/recall/recall.js';
import type { TrackLookup } from '../src/core/recall/recall.js';
import { PostingsIndex } from '../src/core/search/postings-index.js';
import type { Entry, Incident } from '../src/core/types.js';
import type { SearchIndex } from '../src/ports/search-index.js';
import type { LatencySummary } from './percentile.js';
import { buildMiniSearch, searchMiniSearch } from './mini-search-index.js';
import { generateCatalog } from './synthetic-catalog.js';
import { generateIncidents, generateQueries } from './synthetic-queries.js';
import { collectGarbage, timeSeries } from './timing.js';
import { runUpdateBench } from './update-bench.js';
import type { UpdateResult } from './update-bench.js';

/** `postings` is ours (the recall index); the others are baselines measured beside it. */
export const ENGINES = ['postings', 'fullScan', 'flex', 'miniSearch'] as const;
export type Engine = (typeof ENGINES)[number];
export type Series = LatencySummary & { truncated: boolean };

/** Latency settings; absent means "memory and build time only". */
export interface LatencyOptions {
  queries: number;
  warmup: number;
  /** Per timed series: the slow baselines stop early (`n` says how many calls ran). */
  budgetMs: number;
  /** Timed calls a series makes at least, whatever the budget. */
  minSamples: number;
  /** Queries whose top 20 (ids and scores) the child reports, for agreement with the full scan. */
  agreement: number;
}

/** Everything measured for one engine at one catalog size, in one fresh process. */
export interface EngineResult {
  engine: Engine;
  size: number;
  /** Resident memory / heap the index added over the loaded catalog (after GC), MB. */
  rssDeltaMb: number;
  heapDeltaMb: number;
  /** Whole-process RSS with catalog and index, MB. */
  rssTotalMb: number;
  gcExposed: boolean;
  /** Build wall time (ms): mean of `buildRuns` warm rebuilds (3 at 1k, 1 at 10k), or the one cold build at 100k. */
  buildMs: number;
  buildRuns: number;
  search?: Series;
  /** Full `recall()` with this engine as the snapshot's index (ours and full scan). */
  recall?: Series;
  /** Share of timed incidents recall answered (sanity: the gates ran to the end). */
  answered?: number;
  meanQueryTerms?: number;
  /** Top 20 of the first `agreement` queries: ids and scores (compared across processes). */
  top?: { ids: string[][]; scores: number[][] };
  /** Ours only: catalog changes applied in place, against rebuilding. */
  update?: UpdateResult;
}

const K = 20;
/** Catalog changes timed on ours, after everything else (they change the index). */
const UPDATES = 30;

/** Same engine, searched uniformly: the number returned only feeds the JIT sink. */
interface Built {
  search: (tokens: string[]) => number;
  index?: SearchIndex;
}

function build(engine: Engine, entries: readonly Entry[]): Built {
  switch (engine) {
    case 'postings': {
      const index = new PostingsIndex(entries);
      return { search: (t) => index.search(t, K).length, index };
    }
    case 'flex': {
      const index = buildFlexIndex(entries);
      return { search: (t) => index.search(t, K).length, index };
    }
    case 'fullScan': {
      const corpus = buildSearchCorpus(entries);
      const index: SearchIndex = { size: entries.length, search: (t, k) => fullScanSearch(corpus, t, k), score: (t, id) => scoreEntry(corpus, t, id) };
      return { search: (t) => fullScanSearch(corpus, t, K).length, index };
    }
    case 'miniSearch': {
      const ms = buildMiniSearch(entries);
      return { search: (t) => searchMiniSearch(ms, t, K).length };
    }
  }
}

function settledMemory(): NodeJS.MemoryUsage {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage();
}

const mb = (b: number): number => Math.round((b / 2 ** 20) * 10) / 10;

/**
 * Build `engine` over a synthetic catalog of `size` entries, measuring the memory it adds and
 * its build time, then (with `latency`) time `search` and, for the indexes recall uses,
 * `recall()`; report the top 20 of the agreement queries; for ours, time catalog updates.
 */
export function runEngineBench(engine: Engine, size: number, latency: LatencyOptions | undefined, log: (line: string) => void): EngineResult {
  const catalog = generateCatalog(size);
  const { entries } = catalog;
  // The first build is the one measured for memory; it runs with a cold JIT, so at the sizes
  // where that matters the reported time is the mean of further, warm builds.
  const before = settledMemory();
  const t0 = process.hrtime.bigint();
  let built: Built | undefined = build(engine, entries);
  const cold = Number(process.hrtime.bigint() - t0) / 1e6;
  const after = settledMemory();
  const warmRuns = size <= 1000 ? 3 : size <= 10_000 ? 1 : 0;
  let warmTotal = 0;
  for (let i = 0; i < warmRuns; i++) {
    // eslint-disable-next-line no-useless-assignment -- dropped on purpose so the collector can free it before the next build
    built = undefined; // let the previous index go before building the next
    collectGarbage();
    const t = process.hrtime.bigint();
    built = build(engine, entries);
    warmTotal += Number(process.hrtime.bigint() - t) / 1e6;
  }
  const result: EngineResult = {
    engine,
    size,
    rssDeltaMb: mb(after.rss - before.rss),
    heapDeltaMb: mb(after.heapUsed - before.heapUsed),
    rssTotalMb: mb(after.rss),
    gcExposed: typeof (globalThis as { gc?: unknown }).gc === 'function',
    buildMs: warmRuns > 0 ? warmTotal / warmRuns : cold,
    buildRuns: Math.max(1, warmRuns),
  };
  log(`  ${engine} @ ${size}: built in ${result.buildMs.toFixed(0)} ms, +${result.rssDeltaMb} MB RSS`);
  if (!latency) return result;

  const queries = generateQueries(catalog, latency.queries, 7);
  const timed = queries.map((q) => q.tokens);
  const series = <T>(warmup: readonly T[]) => ({ warmup, budgetMs: latency.budgetMs, minSamples: Math.min(latency.minSamples, latency.queries) });
  result.search = timeSeries(timed, built.search, series(generateQueries(catalog, latency.warmup, 8).map((q) => q.tokens)));
  result.meanQueryTerms = queries.reduce((s, q) => s + new Set(q.tokens).size, 0) / Math.max(1, queries.length);
  log(`  ${engine} @ ${size}: search p50 ${result.search.p50.toFixed(3)} ms, p99 ${result.search.p99.toFixed(3)} ms (n=${result.search.n})`);

  const index = built.index;
  if (index && engine !== 'flex') {
    const snapshot = buildCatalogSnapshot(entries, index, new Date('2025-06-01T10:05:00Z'));
    const opts = recallOptions();
    const state = createLedgerState();
    const track: TrackLookup = (id, kind) => trackRecord(state, id, kind);
    const now = new Date('2025-06-01T10:05:00Z');
    const incidents = generateIncidents(catalog, latency.queries, 11);
    // Warm-up incidents are other objects, so only timed calls are counted (a Set lookup: ~20 ns).
    const counted = new Set(incidents);
    let answered = 0;
    const run = (inc: Incident): number => {
      const r = recall(inc, snapshot, track, opts, now);
      if (r.answer && counted.has(inc)) answered++;
      return r.ranked.length;
    };
    const warm = generateIncidents(catalog, latency.warmup, 12);
    result.recall = timeSeries(incidents, run, series(warm));
    result.answered = answered / Math.max(1, result.recall.n);
    log(`  ${engine} @ ${size}: recall() p50 ${result.recall.p50.toFixed(3)} ms, p99 ${result.recall.p99.toFixed(3)} ms (n=${result.recall.n})`);
  }

  if (index) {
    // Untimed: the top 20 of the first queries, compared with the full scan's by the parent.
    const top = queries.slice(0, latency.agreement).map((q) => index.search(q.tokens, K));
    result.top = { ids: top.map((cs) => cs.map((c) => c.entry.id)), scores: top.map((cs) => cs.map((c) => c.score)) };
  }
  if (index instanceof PostingsIndex) result.update = runUpdateBench(catalog, index, UPDATES, log);
  return result;
}
