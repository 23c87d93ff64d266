import { bm25ScoreAt, buildBm25Stats, DEFAULT_BM25_PARAMS, idf, saturate, scoringOrder, termWeight, uniqueTerms } from '../bm25.js';
import type { Bm25Document, Bm25Params, Bm25Stats } from '../bm25.js';
import { tokenize } from '../tokenize.js';
import type { Candidate, Entry } from '../types.js';
import type { SearchIndex, TermWeights } from '../../ports/search-index.js';
import { isAlertNameShaped } from './alert-name.js';

/** The catalog's entries with their BM25 statistics; what every search index scores against. */
export interface SearchCorpus {
  readonly entries: readonly Entry[];
  /** Tokenized fields, same positions as `entries`. */
  readonly documents: readonly Bm25Document[];
  readonly stats: Bm25Stats;
}

/** The alert a file is named after (`kubernetes/KubePodCrashLooping.md` → KubePodCrashLooping). */
export function fileAlert(entryId: string): string | undefined {
  const base = (entryId.split('/').pop() ?? '').replace(/\.md$/i, '');
  return isAlertNameShaped(base) ? base : undefined;
}

/**
 * An entry's searchable fields. The alerts field holds the entry's `alerts` plus the alert its
 * file is named after, each term once: an alert name is a label, not prose, so repeating it
 * must not add weight. The file name keeps the original case, which gives the CamelCase parts.
 */
export function entryDocument(entry: Entry): Bm25Document {
  const alertText = [...(entry.alertNames ?? entry.alerts), fileAlert(entry.id) ?? ''].join(' ');
  return {
    id: entry.id,
    fields: {
      title: tokenize(entry.title),
      alerts: uniqueTerms(tokenize(alertText)),
      tags: tokenize(entry.tags.join(' ')),
      description: tokenize(entry.description),
      body: tokenize(entry.body),
    },
  };
}

/** Tokenize every entry and precompute BM25 statistics. */
export function buildSearchCorpus(entries: readonly Entry[], params: Readonly<Bm25Params> = DEFAULT_BM25_PARAMS): SearchCorpus {
  const documents = entries.map(entryDocument);
  return { entries, documents, stats: buildBm25Stats(documents, params) };
}

function byScoreThenId(a: Candidate, b: Candidate): number {
  return b.score - a.score || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0);
}

/**
 * BM25-score the given entries (by position in `corpus.entries`) and keep the top `k` with a
 * positive score, sorted by score descending, ties by id.
 */
export function rankPositions(corpus: SearchCorpus, positions: Iterable<number>, queryTokens: readonly string[], k: number, weights?: TermWeights): Candidate[] {
  // idf depends only on the term: compute it once per query, and drop terms no entry has.
  // Terms are added rarest first (`scoringOrder`), as every index adds them.
  const { stats } = corpus;
  const k1 = stats.params.k1;
  const terms: string[] = [];
  const idfs: number[] = [];
  for (const t of scoringOrder(uniqueTerms(queryTokens), (x) => stats.df.get(x) ?? 0)) {
    const w = termWeight(weights, t);
    if (!stats.df.has(t) || w === 0) continue;
    terms.push(t);
    idfs.push(w * idf(stats, t));
  }
  const out: Candidate[] = [];
  if (terms.length === 0) return out;
  for (const i of positions) {
    const entry = corpus.entries[i];
    const counts = stats.tf[i];
    if (entry === undefined || counts === undefined) continue;
    let score = 0;
    for (let j = 0; j < terms.length; j++) {
      const f = counts.get(terms[j]!);
      if (f !== undefined) score += saturate(idfs[j]!, f, k1);
    }
    if (score > 0) out.push({ entry, score });
  }
  return out.sort(byScoreThenId).slice(0, Math.max(0, k));
}

/**
 * Naive search: BM25 over every entry. The benchmark baseline, the reference the FlexSearch
 * adapter is tested against, and a fine index for small catalogs.
 */
export function fullScanSearch(corpus: SearchCorpus, queryTokens: readonly string[], k: number, weights?: TermWeights): Candidate[] {
  return rankPositions(corpus, corpus.entries.keys(), queryTokens, k, weights);
}

/** BM25 score of one entry by id; 0 for an unknown id. */
export function scoreEntry(corpus: SearchCorpus, queryTokens: readonly string[], entryId: string, weights?: TermWeights): number {
  const i = corpus.stats.position.get(entryId);
  return i === undefined ? 0 : bm25ScoreAt(corpus.stats, i, uniqueTerms(queryTokens), weights);
}

/** A SearchIndex that scans every entry (no SDK); same scores as any other index. */
export function buildFullScanIndex(entries: readonly Entry[], params?: Readonly<Bm25Params>): SearchIndex {
  const corpus = buildSearchCorpus(entries, params);
  return {
    size: entries.length,
    search: (queryTokens, k, weights) => fullScanSearch(corpus, queryTokens, k, weights),
    score: (queryTokens, entryId, weights) => scoreEntry(corpus, queryTokens, entryId, weights),
  };
}
