/**
 * `npm run bench [-- --quick] [-- --json]` → `node <TypeScript flags> bench/run.ts`: run from
 * source (see ts-resolve.js); the serve and storm parts spawn the built `dist/main.js`.
 *
 * Search, recall, update, memory and ledger-replay benchmarks on synthetic data, each beside
 * the baselines measured in the same run, and the resident memory of `reprise serve`. One table
 * on stdout (JSON with --json), progress on stderr.
 * --quick: catalogs of 1k and 10k only, a 200k-event ledger for serve (docs), a 12 s storm.
 * REPRISE_BENCH_ONLY=storm: only the storm run (10,000 alerts over 60 s, embedded and Redis,
 * with a local model answering in 200 ms, the storm coalescer on and the default rate limit).
 * REPRISE_BENCH_ONLY=drain: only the storm drain (10,000 groups, 2,000 with --quick, recorded while Slack
 * refuses posts, drained by a restarted serve): peak RSS beside the empty store, the outbox window.
 * REPRISE_BENCH_ONLY=growth: only how the work on hostile alert input grows from n to 4n.
 * REPRISE_BENCH_ONLY=hostile: only the served bot under a 1 MiB alertname and a 10,000-alert group.
 * REPRISE_BENCH_ONLY=ledger: only the ledger rows, over 200k events (in memory and through sqlite).
 * REPRISE_BENCH_ONLY=ui: only the memory view's pages, 10k entries / 1M events against a near-empty store.
 * REPRISE_BENCH_ONLY=serve: only `reprise serve`'s ready time and RSS over 10k entries and 1M events
 * (200k with --quick), first start and restart, beside an empty store.
 */
import { cpus } from 'node:os';
import { renderReport } from './bench-report.js';
import type { BenchReport } from './bench-report.js';
import { runChildJson } from './child-process.js';
import { renderGrowthBench, runGrowthBench } from './growth-bench.js';
import { renderHostileServeBench, runHostileServeBench } from './hostile-serve-bench.js';
import { runWebhookBench } from './webhook-bench.js';
import { ENGINES } from './engine-bench.js';
import type { EngineResult } from './engine-bench.js';
import { renderLedgerBench, runLedgerBench } from './ledger-bench.js';
import { renderPromptBench, runPromptBench } from './prompt-bench.js';
import { renderServeBench, runServeBench } from './serve-bench.js';
import { renderStormBench, runStormBench } from './storm-bench.js';
import { renderDrainBench, runDrainBench } from './storm-drain.js';
import { renderUiBench, runUiBench } from './ui-bench.js';

const FLAGS = ['--quick', '--json'] as const;
const QUERIES = 2000;
const WARMUP = 200;
/** Per timed series; the slow baselines stop there (the table says how many calls ran). */
const BUDGET_MS = 5000;
/**
 * Timed calls a series makes whatever the budget: ours all queries at every size (its p99 is
 * the target), FlexSearch all up to 10k and 200 at 100k; the baselines at 100k take up to
 * ~2 s a call, so 10 is their floor.
 */
function minSamples(engine: (typeof ENGINES)[number], size: number): number {
  if (engine === 'postings') return QUERIES;
  if (engine === 'flex') return size <= 10_000 ? QUERIES : 200;
  return 10;
}

/** Queries whose top 20 is compared with the full scan's (the full scan takes ~0.6 s a query at 100k). */
function agreementQueries(size: number): number {
  return size <= 10_000 ? 300 : 50;
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function main(argv: readonly string[]): Promise<number> {
  const unknown = argv.filter((a) => !(FLAGS as readonly string[]).includes(a));
  if (unknown.length > 0) {
    log(`bench: unknown argument ${unknown.join(' ')} (supported: ${FLAGS.join(' ')})`);
    return 2;
  }
  const quick = argv.includes('--quick');
  const storm = { alerts: quick ? 2000 : 10_000, seconds: quick ? 12 : 60, triggers: 500, namespaces: 50, modelLatencyMs: 200, log };
  const drain = { groups: quick ? 2000 : 10_000, log };
  const only = process.env['REPRISE_BENCH_ONLY'];
  if (only !== undefined && only !== '') {
    if (only === 'drain') {
      const result = await runDrainBench(drain);
      process.stdout.write(argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${renderDrainBench(result)}\n`);
      return 0;
    }
    if (only === 'growth') {
      const result = await runGrowthBench(log);
      process.stdout.write(argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${renderGrowthBench(result)}\n`);
      return 0;
    }
    if (only === 'hostile') {
      const result = await runHostileServeBench(log);
      process.stdout.write(argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${renderHostileServeBench(result)}\n`);
      return 0;
    }
    if (only === 'ledger') {
      const result = await runLedgerBench({ events: 200_000, storeEvents: 200_000, naiveSample: 10, log });
      process.stdout.write(argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${renderLedgerBench(result)}\n`);
      return 0;
    }
    if (only === 'ui') {
      const result = await runUiBench({ entries: 10_000, events: quick ? 200_000 : 1_000_000, requests: quick ? 100 : 300, log });
      process.stdout.write(argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${renderUiBench(result)}\n`);
      return 0;
    }
    if (only === 'serve') {
      const result = await runServeBench({ entries: 10_000, events: quick ? 200_000 : 1_000_000, webhooks: 1000, log });
      process.stdout.write(argv.includes('--json') ? `${JSON.stringify(result, null, 2)}\n` : `${renderServeBench(result)}\n`);
      return 0;
    }
    if (only !== 'storm') {
      log(`bench: REPRISE_BENCH_ONLY=${only} is not a part that runs alone (supported: storm, drain, growth, hostile, ledger, ui, serve)`);
      return 2;
    }
    const result = await runStormBench(storm);
    const drained = await runDrainBench(drain);
    process.stdout.write(
      argv.includes('--json') ? `${JSON.stringify({ ...result, drain: drained }, null, 2)}\n` : `${renderStormBench(result)}\n\n${renderDrainBench(drained)}\n`,
    );
    return 0;
  }
  const sizes = quick ? [1000, 10_000] : [1000, 10_000, 100_000];
  const started = Date.now();
  log(`bench: ${quick ? 'quick' : 'full'} run, catalogs of ${sizes.join(', ')} entries`);

  const engines: EngineResult[] = [];
  for (const size of sizes) {
    for (const engine of ENGINES) {
      const args = [engine, String(size), String(QUERIES), String(WARMUP), String(BUDGET_MS), String(minSamples(engine, size)), String(agreementQueries(size))];
      engines.push(await runChildJson<EngineResult>('mem-child', args, ['--expose-gc']));
    }
  }
  const ledger = await runLedgerBench({ events: 1_000_000, storeEvents: 100_000, naiveSample: quick ? 10 : 50, log });
  const webhook = await runWebhookBench(100, quick ? 5 : 10, log);
  log('bench: prompt tokens per path');
  const prompts = await runPromptBench();
  const growthResult = await runGrowthBench(log);
  const hostileResult = await runHostileServeBench(log);
  const serve = await runServeBench({ entries: 10_000, events: quick ? 200_000 : 1_000_000, webhooks: 1000, log });
  const stormResult = await runStormBench(storm);
  const drainResult = await runDrainBench(drain);
  const uiResult = await runUiBench({ entries: 10_000, events: quick ? 200_000 : 1_000_000, requests: quick ? 100 : 300, log });
  const report: BenchReport = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown CPU',
    cores: cpus().length,
    mode: quick ? 'quick' : 'full',
    sizes,
    engines,
    ledger,
    webhook,
    prompts,
    serve,
    storm: stormResult,
    growth: growthResult,
    hostile: hostileResult,
    ui: uiResult,
    wallSeconds: (Date.now() - started) / 1000,
  };
  process.stdout.write(
    argv.includes('--json')
      ? `${JSON.stringify({ ...report, drain: drainResult }, null, 2)}\n`
      : `${renderReport(report)}\n\n${renderPromptBench(prompts)}\n\n${renderGrowthBench(growthResult)}\n\n${renderHostileServeBench(hostileResult)}\n\n${renderStormBench(stormResult)}\n\n${renderDrainBench(drainResult)}\n\n${renderUiBench(uiResult)}\n`,
  );
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  },
);
