/**
 * `node --expose-gc bench/mem-child.ts <engine> <size> [<queries> <warmup> <budgetMs> <minSamples> <agreement>]`
 *
 * One fresh process per (engine, size): builds the synthetic catalog, forces GC, records RSS and
 * heap before and after building the index, and prints the result as one JSON line. With the
 * latency arguments it then times that engine's searches (and recalls) in the same process, so
 * each 100k index is built once rather than once for memory and again for latency. It also
 * prints the top 20 of the first `agreement` queries, which the parent compares across engines.
 */
import { positiveIntArg } from './child-process.js';
import { ENGINES, runEngineBench } from './engine-bench.js';
import type { Engine, LatencyOptions } from './engine-bench.js';

const [engineArg, sizeArg, queries, warmup, budgetMs, minSamples, agreement] = process.argv.slice(2);
if (!(ENGINES as readonly string[]).includes(engineArg ?? '')) {
  process.stderr.write(`mem-child: engine must be one of ${ENGINES.join(', ')}, got ${JSON.stringify(engineArg)}\n`);
  process.exit(2);
}
const latency: LatencyOptions | undefined =
  queries === undefined
    ? undefined
    : {
        queries: positiveIntArg(queries, 'queries'),
        warmup: positiveIntArg(warmup, 'warmup'),
        budgetMs: positiveIntArg(budgetMs, 'budgetMs'),
        minSamples: positiveIntArg(minSamples, 'minSamples'),
        agreement: positiveIntArg(agreement, 'agreement'),
      };
const result = runEngineBench(engineArg as Engine, positiveIntArg(sizeArg, 'size'), latency, (line) => process.stderr.write(`${line}\n`));
process.stdout.write(`${JSON.stringify(result)}\n`);
