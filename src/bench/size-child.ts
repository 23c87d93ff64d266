/**
 * `node dist/bench/size-child.js <size> <queries> <warmup> <budgetMs> <minSamples>`: runs the build and
 * latency benchmark at one catalog size in its own process and prints the result as JSON.
 */
import { positiveIntArg } from './child-process.js';
import { runSizeBench } from './size-bench.js';

const [size, queries, warmup, budgetMs, minSamples] = process.argv.slice(2);
const result = runSizeBench(positiveIntArg(size, 'size'), {
  queries: positiveIntArg(queries, 'queries'),
  warmup: positiveIntArg(warmup, 'warmup'),
  budgetMs: positiveIntArg(budgetMs, 'budgetMs'),
  minSamples: positiveIntArg(minSamples, 'minSamples'),
  k: 20,
  log: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify(result)}\n`);
