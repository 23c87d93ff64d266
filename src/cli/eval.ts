import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseAlertmanagerPayload } from '../core/alertmanager.js';
import { createLedgerState, trackRecord } from '../core/ledger/ledger-state.js';
import { recall, type RecallOptions } from '../core/recall/recall.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import { fmt, metricsByVariant, type CaseOutcome, type SweepPoint, type VariantMetrics } from '../core/eval/metrics.js';
import { renderEvalReport } from '../core/eval/report.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import { loadSnapshot, withoutEntry } from './catalog-context.js';
import type { CliCommand, CliIO } from './io.js';
import { recallOptions } from './recall-options.js';

const USAGE = 'reprise eval recall --catalog DIR --cases FILE [--out FILE] [--json] [--report DIR] [--loo] [--config FILE]';

/** One line of a cases file. */
export interface EvalCase {
  id: string;
  variant: string;
  expect: { runbook?: string; entry?: string; none?: boolean };
  payload: unknown;
  /** Evaluate with this entry taken out of the catalog (leave-one-out). */
  remove?: string;
}

/** margin_gap values swept (the gate that trades coverage for precision). */
export const SWEEP_GAPS = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6];

export function parseCases(text: string): { cases: EvalCase[]; problems: string[] } {
  const cases: EvalCase[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const c = JSON.parse(line) as Partial<EvalCase>;
      if (typeof c.id !== 'string' || typeof c.expect !== 'object' || c.expect === null || c.payload === undefined) {
        problems.push(`line ${i + 1}: needs "id", "expect" and "payload"`);
        return;
      }
      cases.push({ variant: 'default', ...c } as EvalCase);
    } catch (err) {
      problems.push(`line ${i + 1}: ${(err as Error).message}`);
    }
  });
  return { cases, problems };
}

/** Adds a leave-one-out twin for each name-visible positive: its runbook removed, nothing expected. */
export function withLeaveOneOut(cases: readonly EvalCase[]): EvalCase[] {
  const loo = cases
    .filter((c) => c.variant === 'name-visible' && (c.expect.runbook ?? c.expect.entry) && !c.remove)
    .map((c) => ({ ...c, id: `${c.id}:loo`, variant: 'leave-one-out', remove: (c.expect.runbook ?? c.expect.entry)!, expect: { none: true } }));
  return [...cases, ...loo];
}

interface Runner {
  run(c: EvalCase, opts: RecallOptions): CaseOutcome & { trace: unknown; answer: unknown };
}

function makeRunner(base: CatalogSnapshot): Runner {
  const empty = createLedgerState();
  const track = (e: string, k: 'incident' | 'runbook') => trackRecord(empty, e, k);
  const reduced = new Map<string, CatalogSnapshot>();
  const now = new Date();
  return {
    run(c, opts) {
      let snap = base;
      if (c.remove) {
        snap = reduced.get(c.remove) ?? withoutEntry(base, c.remove);
        reduced.set(c.remove, snap);
      }
      const expected = c.expect.none ? null : (c.expect.runbook ?? c.expect.entry ?? null);
      let incident;
      try {
        incident = parseAlertmanagerPayload(c.payload).incidents[0];
      } catch {
        incident = undefined;
      }
      if (!incident) return { id: c.id, variant: c.variant, expected, fired: null, confidence: null, ranked: [], trace: [{ gate: 'input', reason: 'payload did not parse' }], answer: null };
      const r = recall(incident, snap, track, opts, now);
      return { id: c.id, variant: c.variant, expected, fired: r.answer?.entry ?? null, confidence: r.answer?.confidence ?? null, ranked: r.ranked, trace: r.trace, answer: r.answer };
    },
  };
}

/** Runs every case once at the configured thresholds and once per sweep scale. */
export function runEval(snapshot: CatalogSnapshot, cases: readonly EvalCase[], opts: RecallOptions, progress?: (done: number, total: number) => void) {
  const runner = makeRunner(snapshot);
  const total = cases.length * (1 + SWEEP_GAPS.length);
  let done = 0;
  const tick = (): void => {
    done++;
    if (progress && (done % 50 === 0 || done === total)) progress(done, total);
  };
  const lines = cases.map((c) => {
    const o = runner.run(c, opts);
    tick();
    return o;
  });
  const sweep = new Map<string, SweepPoint[]>();
  for (const gap of SWEEP_GAPS) {
    const scaled = { ...opts, marginGap: gap };
    const outcomes = cases.map((c) => {
      const o = runner.run(c, scaled);
      tick();
      return o;
    });
    for (const m of metricsByVariant(outcomes)) {
      const pts = sweep.get(m.variant) ?? [];
      pts.push({ setting: gap, precision: m.precision, coverage: m.coverage, falseFireRate: m.falseFireRate });
      sweep.set(m.variant, pts);
    }
  }
  return { lines, metrics: metricsByVariant(lines), sweep };
}

function table(metrics: readonly VariantMetrics[]): string {
  const head = ['variant', 'cases', 'R@1', 'R@3', 'MRR', 'fire', 'precision', 'coverage', 'false-fire'];
  const rows = metrics.map((m) => [m.variant, String(m.cases), fmt(m.recallAt1), fmt(m.recallAt3), fmt(m.mrr), fmt(m.fireRate), fmt(m.precision), fmt(m.coverage), fmt(m.falseFireRate)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n');
}

export const evalCommand: CliCommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout(`usage: ${USAGE}\n`);
    return 0;
  }
  if (sub === 'investigate') return (await import('./eval-investigate.js')).evalInvestigate(rest, io);
  if (sub !== 'recall') {
    io.stderr(`reprise eval: unknown subcommand ${sub ?? '(none)'}\nusage: ${USAGE}\n`);
    return 2;
  }
  const parsed = parseCli(rest, { catalog: { type: 'string' }, cases: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' }, report: { type: 'string' }, loo: { type: 'boolean' }, config: { type: 'string' } }, USAGE, io);
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  if (!values.catalog || !values.cases) {
    io.stderr(`reprise eval recall: --catalog and --cases are required\nusage: ${USAGE}\n`);
    return 2;
  }
  const loaded = loadCliConfig(values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const opts = recallOptions(loaded.config);
  return evalRecall(io, resolve(io.cwd, values.catalog), resolve(io.cwd, values.cases), opts, values);
};

async function evalRecall(io: CliIO, catalogDir: string, casesFile: string, opts: RecallOptions, flags: { out?: string | undefined; json?: boolean | undefined; report?: string | undefined; loo?: boolean | undefined }): Promise<number> {
  const { cases: parsed, problems } = parseCases(await readFile(casesFile, 'utf8'));
  for (const p of problems) io.stderr(`warning: skipped case at ${p}\n`);
  const cases = flags.loo ? withLeaveOneOut(parsed) : parsed;
  const { snapshot, skipped } = await loadSnapshot(catalogDir);
  for (const p of skipped) io.stderr(`warning: skipped entry ${p.file}:${p.line} (${p.rule})\n`);
  const started = Date.now();
  let shown = -1;
  const result = runEval(snapshot, cases, opts, (d, t) => {
    const pct = Math.floor((10 * d) / t) * 10;
    if (pct === shown) return;
    shown = pct;
    io.stderr(`eval: ${d}/${t} recalls (${pct}%)\n`);
  });
  io.stderr(`eval: ${cases.length} cases × ${1 + SWEEP_GAPS.length} settings in ${Date.now() - started} ms\n`);
  if (flags.out) {
    const out = resolve(io.cwd, flags.out);
    const body = result.lines.map((l) => JSON.stringify({ id: l.id, answer: l.answer, ranked: l.ranked, trace: l.trace })).join('\n');
    await writeFile(out, `${body}\n`);
  }
  if (flags.json) {
    io.stdout(`${JSON.stringify({ options: opts, metrics: result.metrics, sweep: Object.fromEntries(result.sweep) }, null, 2)}\n`);
  } else {
    io.stdout(`${table(result.metrics)}\n\nsweep of margin_gap — precision / coverage / false-fire:\n`);
    for (const [variant, pts] of result.sweep) {
      io.stdout(`  ${variant}:\n${pts.map((p) => `    gap ${p.setting.toFixed(2)}  ${fmt(p.precision)} / ${fmt(p.coverage)} / ${fmt(p.falseFireRate)}`).join('\n')}\n`);
    }
  }
  if (flags.report) {
    const dir = resolve(io.cwd, flags.report);
    await mkdir(dir, { recursive: true });
    const { markdown, svg } = renderEvalReport({ metrics: result.metrics, sweep: result.sweep, options: opts, catalogDir, casesFile, date: new Date() });
    await writeFile(join(dir, 'recall-sweep.svg'), svg);
    await writeFile(join(dir, 'recall-report.md'), markdown);
    io.stderr(`report written to ${join(dir, 'recall-report.md')}\n`);
  }
  return 0;
}
