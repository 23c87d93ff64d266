/**
 * `node dist/bench/diagnose-flex.js [size]` (default 10000): where our search spends its time.
 *
 * 1. `buildFlexIndex` with several `candidateLimit`s: latency and agreement with full scan.
 * 2. A mirror of the adapter's candidate gathering (same FlexSearch options, same queries) with
 *    each phase timed: the `suggest` query, the per-term lookups, the BM25 ranking, and the
 *    number of candidates ranked. Prints a table on stdout.
 */
import { Index } from 'flexsearch';
import { buildFlexIndex } from '../adapters/flexsearch/flex-index.js';
import { BM25_FIELDS } from '../core/bm25.js';
import { fullScanSearch, rankPositions } from '../core/catalog/search-corpus.js';
import type { Candidate } from '../core/types.js';
import { positiveIntArg } from './child-process.js';
import { fmtNum, formatTable } from './format-table.js';
import { summarizeNs } from './percentile.js';
import { generateCatalog } from './synthetic-catalog.js';
import { generateQueries } from './synthetic-queries.js';
import { collectGarbage, timeSeries } from './timing.js';

const K = 20;
const size = positiveIntArg(process.argv[2] ?? '10000', 'size');
const catalog = generateCatalog(size);
const queries = generateQueries(catalog, 1000, 7).map((q) => q.tokens);
const warm = generateQueries(catalog, 200, 8).map((q) => q.tokens);
const same = (a: readonly Candidate[], b: readonly Candidate[]): boolean => a.length === b.length && a.every((c, i) => c.entry.id === b[i]?.entry.id);

const rows: string[][] = [];
let reference: Candidate[][] | undefined;
for (const candidateLimit of [10, 20, 30, 50, 100]) {
  const index = buildFlexIndex(catalog.entries, { candidateLimit });
  reference ??= queries.slice(0, 200).map((q) => fullScanSearch(index.corpus, q, K));
  const s = timeSeries(queries, (q) => index.search(q, K).length, { warmup: warm, budgetMs: 60_000, minSamples: queries.length });
  let topK = 0;
  let top1 = 0;
  reference.forEach((ref, i) => {
    const got = index.search(queries[i] ?? [], K);
    if (same(got, ref)) topK++;
    if (got[0]?.entry.id === ref[0]?.entry.id) top1++;
  });
  rows.push([`buildFlexIndex candidateLimit ${candidateLimit}`, fmtNum(s.p50), fmtNum(s.p99), `${Math.round((topK / reference.length) * 100)}%`, `${Math.round((top1 / reference.length) * 100)}%`]);
  process.stderr.write(`  candidateLimit ${candidateLimit}: p50 ${s.p50.toFixed(3)} p99 ${s.p99.toFixed(3)}\n`);
  collectGarbage();
}

// Mirror of the adapter (flex-index.ts) so each phase can be timed separately.
const flexIndex = buildFlexIndex(catalog.entries);
const corpus = flexIndex.corpus;
const flex = new Index({ tokenize: 'strict', encode: (text: string) => text.split(' ').filter((t) => t !== ''), resolution: 9 });
const order = [...BM25_FIELDS].sort((a, b) => corpus.stats.params.weights[b] - corpus.stats.params.weights[a]);
corpus.documents.forEach((doc, i) => flex.add(i, [...new Set(order.flatMap((f) => doc.fields[f] ?? []))].join(' ')));
const phases = { suggest: [] as number[], terms: [] as number[], rank: [] as number[], candidates: [] as number[], suggestHits: [] as number[] };
const ids = (r: unknown): number[] => (Array.isArray(r) ? r.filter((x): x is number => typeof x === 'number') : []);
for (const [i, q] of [...warm, ...queries].entries()) {
  const terms = [...new Set(q)];
  const limit = 50;
  const t0 = process.hrtime.bigint();
  const suggested = ids(flex.search(terms.join(' '), limit, { suggest: true }));
  const t1 = process.hrtime.bigint();
  const found = new Set(suggested);
  for (const t of terms) for (const id of ids(flex.search(t, limit))) found.add(id);
  const t2 = process.hrtime.bigint();
  rankPositions(corpus, [...found].sort((a, b) => a - b), terms, K);
  const t3 = process.hrtime.bigint();
  if (i < warm.length) continue;
  phases.suggest.push(Number(t1 - t0));
  phases.terms.push(Number(t2 - t1));
  phases.rank.push(Number(t3 - t2));
  phases.candidates.push(found.size * 1e6);
  phases.suggestHits.push(suggested.length * 1e6);
}
const p = (xs: number[]): [string, string] => {
  const s = summarizeNs(xs);
  return [fmtNum(s.p50), fmtNum(s.p99)];
};
rows.push(['phase: flex suggest query (all terms)', ...p(phases.suggest), '', '']);
rows.push([`phase: flex per-term lookups (~${fmtNum(queries.reduce((s, q) => s + new Set(q).size, 0) / queries.length)} terms)`, ...p(phases.terms), '', '']);
rows.push(['phase: BM25 ranking of candidates', ...p(phases.rank), '', '']);
rows.push(['candidates ranked (count, not ms)', ...p(phases.candidates), '', '']);
rows.push(['suggest hits (count, not ms)', ...p(phases.suggestHits), '', '']);
process.stdout.write(`diagnose-flex @ ${size} entries, ${queries.length} queries, top ${K}\n\n${formatTable(['variant / phase', 'p50 ms', 'p99 ms', 'top-20 = full scan', 'top-1 = full scan'], rows)}\n`);
