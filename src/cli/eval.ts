import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createRng } from '../core/eval/prng.js';
import { loadCatalog } from '../core/catalog/load-catalog.js';
import { ablate, isSignal, SIGNALS, type Signal } from '../core/eval/ablation.js';
import { crossValidate, SettingEvaluator, type CrossValidations } from '../core/eval/cross-validate.js';
import { cvMarkdown, cvText } from '../core/eval/cv-report.js';
import { parseCases, withLeaveOneOut, type EvalCase } from '../core/eval/eval-cases.js';
import { ruleFolds, runbookFolds } from '../core/eval/folds.js';
import { fmt, metricsByVariant, type SweepPoint, type VariantMetrics } from '../core/eval/metrics.js';
import { renderEvalReport } from '../core/eval/report.js';
import { createEvalRunner, type CaseRun } from '../core/eval/run-cases.js';
import { wrongFires, wrongFiresText } from '../core/eval/wrong-fires.js';
import { refusals, refusalsText } from '../core/eval/refusals.js';
import type { RecallOptions } from '../core/recall/recall.js';
import type { Entry } from '../core/types.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';
import { recallOptions } from '../runtime/recall-options.js';

export { parseCases, withLeaveOneOut, type EvalCase } from '../core/eval/eval-cases.js';

const USAGE = `reprise eval recall --catalog DIR --cases FILE [--cases FILE …] [--loo [--loo-hidden]] [--cv K [--seed N] [--without SIGNAL …]] [--out FILE] [--json] [--report DIR] [--config FILE]
reprise eval recurrence [--histories FILE|DIR] [--catalog DIR] [--json] [--config FILE]
  SIGNAL: ${SIGNALS.join(', ')}`;

/** margin_gap values swept (the gate that trades coverage for precision). */
export const SWEEP_GAPS = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6];

/** Runs every case once at the given options and once per swept margin_gap. */
export function runEval(entries: readonly Entry[], cases: readonly EvalCase[], opts: RecallOptions, progress?: (done: number, total: number) => void) {
  const runner = createEvalRunner(entries, { memo: true });
  const total = cases.length * (1 + SWEEP_GAPS.length);
  let done = 0;
  const tick = (): void => {
    done++;
    if (progress && (done % 50 === 0 || done === total)) progress(done, total);
  };
  const lines: CaseRun[] = cases.map((c) => {
    const o = runner.run(c, opts);
    tick();
    return o;
  });
  const sweep = new Map<string, SweepPoint[]>();
  for (const gap of SWEEP_GAPS) {
    const outcomes = cases.map((c) => {
      const o = runner.run(c, { ...opts, marginGap: gap });
      tick();
      return o;
    });
    for (const m of metricsByVariant(outcomes)) {
      const pts = sweep.get(m.variant) ?? [];
      pts.push({ setting: gap, precision: m.precision, coverage: m.coverage, falseFireRate: m.falseFireRate });
      sweep.set(m.variant, pts);
    }
  }
  return { lines, metrics: metricsByVariant(lines), sweep, wrong: wrongFires(lines, (id) => runner.entry(id)), refused: refusals(lines) };
}

/**
 * K-fold cross-validation of the calibration over `cases`, twice on the same seed: folds by
 * expected runbook (the figure that matters), then by alert rule; with the `without` signals
 * switched off (ablation). Both share one evaluator, so a setting is run once.
 */
export function runCrossValidation(
  entries: readonly Entry[],
  cases: readonly EvalCase[],
  opts: RecallOptions,
  k: number,
  seed: number,
  without: readonly Signal[] = [],
  progress?: (split: string, fold: number, k: number) => void,
): CrossValidations {
  const run = ablate(opts, without);
  const runner = createEvalRunner(entries, { memo: true, ignorePointers: run.ignorePointers });
  const evaluator = new SettingEvaluator(runner, cases, run.opts);
  const common = { start: run.start, space: run.space };
  const byRunbook = crossValidate(evaluator, {
    ...common,
    split: 'runbook',
    folds: runbookFolds(cases, k, createRng(seed), (id) => runner.familyOf(id)),
    ...(progress ? { progress: (f: number, n: number) => progress('by runbook', f, n) } : {}),
  });
  const byRule = crossValidate(evaluator, {
    ...common,
    split: 'rule',
    folds: ruleFolds(cases, k, createRng(seed)),
    ...(progress ? { progress: (f: number, n: number) => progress('by rule', f, n) } : {}),
  });
  return { byRunbook, byRule };
}

function table(metrics: readonly VariantMetrics[]): string {
  const head = ['variant', 'cases', 'R@1', 'R@3', 'MRR', 'fire', 'precision', 'coverage', 'false-fire', 'one of N (right)'];
  const rows = metrics.map((m) => [
    m.variant,
    String(m.cases),
    fmt(m.recallAt1),
    fmt(m.recallAt3),
    fmt(m.mrr),
    fmt(m.fireRate),
    fmt(m.precision),
    fmt(m.coverage),
    fmt(m.falseFireRate),
    m.related > 0 ? `${m.related} (${m.relatedCorrect})` : '—',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n');
}

interface Flags {
  out?: string | undefined;
  json?: boolean | undefined;
  report?: string | undefined;
  loo?: boolean | undefined;
  'loo-hidden'?: boolean | undefined;
  cv?: number | undefined;
  seed: number;
  without: Signal[];
}

export const evalCommand: CliCommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout(`usage: ${USAGE}\n`);
    return 0;
  }
  if (sub === 'investigate') return (await import('./eval-investigate.js')).evalInvestigate(rest, io);
  if (sub === 'recurrence') return (await import('./eval-recurrence.js')).evalRecurrence(rest, io);
  if (sub !== 'recall') {
    io.stderr(`reprise eval: unknown subcommand ${sub ?? '(none)'}\nusage: ${USAGE}\n`);
    return 2;
  }
  const parsed = parseCli(
    rest,
    {
      catalog: { type: 'string', description: 'catalog directory (default: the configured or bundled catalog)', valueName: 'DIR' },
      cases: { type: 'string', multiple: true, description: 'eval cases file (JSON lines); repeatable', valueName: 'FILE' },
      out: { type: 'string', description: 'write to this file instead of stdout', valueName: 'FILE' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      report: {
        type: 'string',
        description: 'write recall-report.md and recall-sweep.svg (with --cv also recall-cv.md) into this directory',
        valueName: 'DIR',
      },
      loo: { type: 'boolean', description: 'leave-one-out: each case against the catalog without its own entry' },
      'loo-hidden': { type: 'boolean', description: 'also leave-one-out twins of the name-hidden cases (reported, not calibrated on)' },
      config: { type: 'string', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      cv: { type: 'string', description: 'k-fold cross-validation of the calibration with this many folds, by runbook and by rule', valueName: 'K' },
      seed: { type: 'string', description: 'seed for the folds', valueName: 'N' },
      without: { type: 'string', multiple: true, description: 'ablate one signal (repeatable)', valueName: 'SIGNAL' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  if (!values.catalog || !values.cases || values.cases.length === 0) {
    io.stderr(`reprise eval recall: --catalog and --cases are required\nusage: ${USAGE}\n`);
    return 2;
  }
  const cv = values.cv === undefined ? undefined : Number(values.cv);
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (cv !== undefined && (!Number.isInteger(cv) || cv < 2)) {
    io.stderr(`reprise eval recall: --cv must be a whole number of folds ≥ 2, got ${values.cv}\nusage: ${USAGE}\n`);
    return 2;
  }
  if (!Number.isInteger(seed)) {
    io.stderr(`reprise eval recall: --seed must be a whole number, got ${values.seed}\nusage: ${USAGE}\n`);
    return 2;
  }
  const without = values.without ?? [];
  const unknown = without.filter((w) => !isSignal(w));
  if (unknown.length > 0 || (without.length > 0 && cv === undefined)) {
    io.stderr(
      `reprise eval recall: --without needs --cv and one of ${SIGNALS.join(', ')}${unknown.length > 0 ? `; got ${unknown.join(', ')}` : ''}\nusage: ${USAGE}\n`,
    );
    return 2;
  }
  const loaded = loadCliConfig(values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const opts = recallOptions(loaded.config);
  const files = values.cases.map((f) => resolve(io.cwd, f));
  return evalRecall(io, resolve(io.cwd, values.catalog), files, opts, { ...values, cv, seed, without: without.filter(isSignal) });
};

async function evalRecall(io: CliIO, catalogDir: string, casesFiles: string[], opts: RecallOptions, flags: Flags): Promise<number> {
  const parsed: EvalCase[] = [];
  for (const file of casesFiles) {
    const { cases, problems } = parseCases(await readFile(file, 'utf8'));
    for (const p of problems) io.stderr(`warning: skipped case in ${file} at ${p}\n`);
    parsed.push(...cases);
  }
  const cases = flags.loo ? withLeaveOneOut(parsed, { hidden: flags['loo-hidden'] === true }) : parsed;
  const { entries, problems } = await loadCatalog(catalogDir);
  for (const p of problems.filter((x) => x.severity === 'error')) io.stderr(`warning: skipped entry ${p.file}:${p.line} (${p.rule})\n`);
  const started = Date.now();
  let shown = -1;
  const result = runEval(entries, cases, opts, (d, t) => {
    const pct = Math.floor((10 * d) / t) * 10;
    if (pct === shown) return;
    shown = pct;
    io.stderr(`eval: ${d}/${t} recalls (${pct}%)\n`);
  });
  io.stderr(`eval: ${cases.length} cases × ${1 + SWEEP_GAPS.length} settings in ${Date.now() - started} ms\n`);
  let cv: CrossValidations | undefined;
  if (flags.cv !== undefined) {
    const t0 = Date.now();
    cv = runCrossValidation(entries, cases, opts, flags.cv, flags.seed, flags.without, (split, f, k) =>
      io.stderr(`cv ${split}: fold ${f}/${k} calibrated (${Date.now() - t0} ms)\n`),
    );
  }
  if (flags.out) {
    const body = result.lines.map((l) => JSON.stringify({ id: l.id, answer: l.answer, ranked: l.ranked, trace: l.trace })).join('\n');
    await writeFile(resolve(io.cwd, flags.out), `${body}\n`);
  }
  if (flags.json) {
    io.stdout(
      `${JSON.stringify({ options: opts, metrics: result.metrics, sweep: Object.fromEntries(result.sweep), wrongFires: result.wrong, refusals: result.refused, ...(cv ? { cv } : {}) }, null, 2)}\n`,
    );
  } else if (cv) {
    if (flags.without.length > 0) io.stdout(`without: ${flags.without.join(', ')}\n`);
    io.stdout(cvText(cv.byRunbook, result.metrics, 'the configured settings'));
    io.stdout(`\n${cvText(cv.byRule, result.metrics, 'the configured settings')}`);
    io.stdout(`\n${wrongFiresText(result.wrong, 'in-sample, the configured settings')}`);
    io.stdout(`\n${refusalsText(result.refused, 'in-sample, the configured settings')}`);
  } else {
    io.stdout(
      `${table(result.metrics)}\n\n${wrongFiresText(result.wrong, 'wrong fires')}\n${refusalsText(result.refused, 'refused true answers')}\nsweep of margin_gap — precision / coverage / false-fire:\n`,
    );
    for (const [variant, pts] of result.sweep) {
      io.stdout(
        `  ${variant}:\n${pts.map((p) => `    gap ${p.setting.toFixed(2)}  ${fmt(p.precision)} / ${fmt(p.coverage)} / ${fmt(p.falseFireRate)}`).join('\n')}\n`,
      );
    }
  }
  if (flags.report) {
    const dir = resolve(io.cwd, flags.report);
    await mkdir(dir, { recursive: true });
    const { markdown, svg } = renderEvalReport({
      metrics: result.metrics,
      sweep: result.sweep,
      options: opts,
      wrong: result.wrong,
      refused: result.refused,
      catalogDir,
      casesFile: casesFiles.map((f) => basename(f)).join(', '),
      date: new Date(),
    });
    await writeFile(join(dir, 'recall-sweep.svg'), svg);
    await writeFile(join(dir, 'recall-report.md'), markdown);
    io.stderr(`report written to ${join(dir, 'recall-report.md')}\n`);
    if (cv) {
      const command = `reprise eval recall --cv ${flags.cv} --seed ${flags.seed}${flags.without.map((w) => ` --without ${w}`).join('')}${flags.loo ? ' --loo' : ''}${flags['loo-hidden'] ? ' --loo-hidden' : ''} --cases ${casesFiles.map((f) => basename(f)).join(' --cases ')}`;
      const name = flags.without.length > 0 ? `recall-cv-without-${flags.without.join('-')}.md` : 'recall-cv.md';
      await writeFile(
        join(dir, name),
        cvMarkdown(cv, result.metrics, { date: new Date(), command, seed: flags.seed, inSampleWrong: result.wrong, inSampleRefused: result.refused }),
      );
      io.stderr(`cross-validation report written to ${join(dir, name)}\n`);
    }
  }
  return 0;
}
