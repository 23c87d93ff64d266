/**
 * `node --expose-gc dist/bench/mem-child.js <engine> <size>`: builds one index over a synthetic
 * catalog in a fresh process and prints how much resident memory and heap the index added.
 */
import { buildFlexIndex } from '../adapters/flexsearch/flex-index.js';
import { buildSearchCorpus } from '../core/catalog/search-corpus.js';
import { positiveIntArg } from './child-process.js';
import { buildMiniSearch } from './mini-search-index.js';
import { MEM_ENGINES } from './memory-bench.js';
import type { MemEngine, MemResult } from './memory-bench.js';
import { generateCatalog } from './synthetic-catalog.js';

function settle(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  return process.memoryUsage();
}

const builders: Record<MemEngine, (entries: Parameters<typeof buildFlexIndex>[0]) => unknown> = {
  flex: (e) => buildFlexIndex(e),
  fullScan: (e) => buildSearchCorpus(e),
  miniSearch: (e) => buildMiniSearch(e),
};

const [engineArg, sizeArg] = process.argv.slice(2);
if (!(MEM_ENGINES as readonly string[]).includes(engineArg ?? '')) {
  process.stderr.write(`mem-child: engine must be one of ${MEM_ENGINES.join(', ')}, got ${JSON.stringify(engineArg)}\n`);
  process.exit(2);
}
const engine = engineArg as MemEngine;
const size = positiveIntArg(sizeArg, 'size');
const { entries } = generateCatalog(size);
const before = settle();
const index = builders[engine](entries);
const after = settle();
const mb = (b: number): number => Math.round((b / 2 ** 20) * 10) / 10;
const result: MemResult = {
  engine,
  size,
  rssDeltaMb: mb(after.rss - before.rss),
  heapDeltaMb: mb(after.heapUsed - before.heapUsed),
  rssTotalMb: mb(after.rss),
  gcExposed: typeof (globalThis as { gc?: unknown }).gc === 'function',
};
// Keep the index reachable until after the measurement.
if (index === undefined) process.exit(1);
process.stdout.write(`${JSON.stringify(result)}\n`);
