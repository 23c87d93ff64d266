import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../../src/core/eval/prng.js';
import { recallOptions } from '../../src/runtime/recall-options.js';
import { loadCatalog } from '../../src/core/catalog/load-catalog.js';
import { CALIBRATION_START, GRID } from '../../src/core/eval/calibrate.js';
import { crossValidate, SettingEvaluator, type CrossValidation } from '../../src/core/eval/cross-validate.js';
import { expectedEntry, parseCases, withLeaveOneOut } from '../../src/core/eval/eval-cases.js';
import { runbookFolds } from '../../src/core/eval/folds.js';
import { metricsByVariant, type VariantMetrics } from '../../src/core/eval/metrics.js';
import { createEvalRunner } from '../../src/core/eval/run-cases.js';

/**
 * Regression guard for ranking changes (eval/README.md): every dev case, its leave-one-out
 * twin and the expression variant, at the shipped defaults (chosen on the runbook-grouped
 * folds), with the targets of issue 33 — precision AND coverage floors — held on the whole set
 * and on average over the same 5 runbook folds `--cv 5` uses (seed 1): every case of one
 * runbook in one fold. Precision is held on every fold too, not only on average.
 *
 * Then the targets themselves, which are about calibration on runbooks it never saw: the same
 * runbook-grouped 5-fold cross-validation as `reprise eval recall … --cv 5` (seed 1), each fold
 * calibrated on the other four and measured on it, with the full search (`GRID`, then the
 * coordinate search): ~1,700 settings × 563 cases, about 40 s of CPU, the slowest test in the
 * suite. REPRISE_QUALITY_CV=fast skips the grid (~500 settings, ~17 s): on the shipped code the
 * same held-out figures, but with the sibling rule off it misses the wrong fires the full
 * search makes (eval/README.md, regression guard), so CI runs the full one.
 */
const here = dirname(fileURLToPath(import.meta.url));
const corpus = resolve(here, '../../../shared/corpus');
const hasCorpus = existsSync(resolve(corpus, 'cases-dev.jsonl')) && existsSync(resolve(corpus, 'cases-dev-expr.jsonl'));
/**
 * Where the corpus must be found (a release check sets REPRISE_REQUIRE_CORPUS=1), a missing one
 * fails; otherwise the guard is skipped, loudly — as the other corpus suites are.
 */
const required = process.env['REPRISE_REQUIRE_CORPUS'] === '1';

const fullSearch = process.env['REPRISE_QUALITY_CV'] !== 'fast';

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

describe.runIf(hasCorpus)('recall quality on the dev cases (shared/corpus)', () => {
  let whole: VariantMetrics[] = [];
  let perFold: VariantMetrics[][] = [];
  let cv: CrossValidation | undefined;
  const foldsOfRunbook = new Map<string, Set<number>>();
  // Loaded in beforeAll: a skipped describe still runs its body, and the corpus may be absent.
  beforeAll(async () => {
    const read = (f: string) => parseCases(readFileSync(resolve(corpus, f), 'utf8')).cases;
    const cases = withLeaveOneOut([...read('cases-dev.jsonl'), ...read('cases-dev-expr.jsonl')]);
    const { entries } = await loadCatalog(resolve(corpus, 'runbooks'));
    // The engine `serve` answers with (the runner's default index).
    const runner = createEvalRunner(entries, {});
    const opts = recallOptions();
    const outcomes = cases.map((c) => runner.run(c, opts));
    const folds = runbookFolds(cases, 5, createRng(1), (id) => runner.familyOf(id));
    perFold = [0, 1, 2, 3, 4].map((f) => metricsByVariant(outcomes.filter((_, i) => folds[i] === f)));
    whole = metricsByVariant(outcomes);
    cases.forEach((c, i) => {
      const expected = expectedEntry(c);
      if (expected === null) return;
      const family = runner.familyOf(expected);
      foldsOfRunbook.set(family, (foldsOfRunbook.get(family) ?? new Set()).add(folds[i]!));
    });
    const evaluator = new SettingEvaluator(createEvalRunner(entries, { memo: true }), cases, opts);
    cv = crossValidate(evaluator, { start: CALIBRATION_START, split: 'runbook', folds, grid: fullSearch ? GRID : {} });
  }, 600_000);

  /** Held-out mean over the runbook folds of one variant's metric, each fold at its own calibration. */
  const heldOut = (variant: string, pick: (v: CrossValidation['byVariant'][number]) => { mean: number }): number => {
    const v = cv?.byVariant.find((m) => m.variant === variant);
    if (!v) throw new Error(`no ${variant} in the cross-validation`);
    return pick(v).mean;
  };

  /** The metric on the whole set, and its mean over the held-out folds. */
  const both = (variant: string, pick: (m: VariantMetrics) => number): number[] => {
    const all = whole.find((m) => m.variant === variant);
    if (!all) throw new Error(`no ${variant} cases`);
    const fold = perFold
      .map((ms) => ms.find((m) => m.variant === variant))
      .filter((m): m is VariantMetrics => m !== undefined)
      .map(pick)
      .filter(Number.isFinite);
    return [pick(all), mean(fold)];
  };

  it('has the cases it guards', () => {
    expect(whole.find((m) => m.variant === 'name-visible')?.negatives).toBeGreaterThan(300);
    expect(whole.find((m) => m.variant === 'name-hidden')?.positives).toBeGreaterThan(50);
    expect(whole.find((m) => m.variant === 'name-hidden+expr')?.positives).toBeGreaterThan(50);
  });

  it('name-visible: precision ≥ 0.99 at coverage ≥ 0.97, false-fire ≤ 1%', () => {
    for (const v of both('name-visible', (m) => m.precision)) expect(v).toBeGreaterThanOrEqual(0.99);
    for (const v of both('name-visible', (m) => m.coverage)) expect(v).toBeGreaterThanOrEqual(0.97);
    for (const v of both('name-visible', (m) => m.falseFireRate)) expect(v).toBeLessThanOrEqual(0.01);
    for (const v of both('name-visible+expr', (m) => m.falseFireRate)) expect(v).toBeLessThanOrEqual(0.01);
  });

  it('leave-one-out: fires ≤ 5%', () => {
    for (const v of both('leave-one-out', (m) => m.fireRate)) expect(v).toBeLessThanOrEqual(0.05);
  });

  it('name-hidden: precision ≥ 0.96 at coverage ≥ 0.88', () => {
    for (const v of both('name-hidden', (m) => m.precision)) expect(v).toBeGreaterThanOrEqual(0.96);
    for (const v of both('name-hidden', (m) => m.coverage)) expect(v).toBeGreaterThanOrEqual(0.88);
  });

  it('expression variant: precision ≥ 0.96 at coverage ≥ 0.92', () => {
    for (const v of both('name-hidden+expr', (m) => m.precision)) expect(v).toBeGreaterThanOrEqual(0.96);
    for (const v of both('name-hidden+expr', (m) => m.coverage)) expect(v).toBeGreaterThanOrEqual(0.92);
  });

  it('hard variants: precision ≥ 0.96 on every runbook fold at the defaults, and no wrong runbook', () => {
    for (const variant of ['name-hidden', 'name-hidden+expr']) {
      for (const ms of perFold) {
        const m = ms.find((x) => x.variant === variant);
        if (m && Number.isFinite(m.precision)) expect(m.precision, `${variant} on a fold`).toBeGreaterThanOrEqual(0.96);
      }
      expect(whole.find((m) => m.variant === variant)?.wrong).toBe(0);
    }
  });

  describe('runbook-grouped cross-validation of the calibration (issue 33 targets, held-out means)', () => {
    it('name-visible: precision ≥ 0.99 at coverage ≥ 0.97, false-fire on `none` ≤ 1%', () => {
      expect(heldOut('name-visible', (m) => m.precision)).toBeGreaterThanOrEqual(0.99);
      expect(heldOut('name-visible', (m) => m.coverage)).toBeGreaterThanOrEqual(0.97);
      expect(heldOut('name-visible', (m) => m.falseFireRate)).toBeLessThanOrEqual(0.01);
      expect(heldOut('name-visible+expr', (m) => m.falseFireRate)).toBeLessThanOrEqual(0.01);
    });

    it('name-hidden: precision ≥ 0.96 at coverage ≥ 0.88', () => {
      expect(heldOut('name-hidden', (m) => m.precision)).toBeGreaterThanOrEqual(0.96);
      expect(heldOut('name-hidden', (m) => m.coverage)).toBeGreaterThanOrEqual(0.88);
    });

    it('name-hidden+expr: precision ≥ 0.96 at coverage ≥ 0.92', () => {
      expect(heldOut('name-hidden+expr', (m) => m.precision)).toBeGreaterThanOrEqual(0.96);
      expect(heldOut('name-hidden+expr', (m) => m.coverage)).toBeGreaterThanOrEqual(0.92);
    });

    it('no wrong runbook on any held-out fold', () => {
      expect(cv?.wrongFires.filter((w) => w.expected !== null || !w.variant.startsWith('leave-one-out'))).toEqual([]);
    });

    it('leave-one-out: fires ≤ 5%', () => {
      expect(heldOut('leave-one-out', (m) => m.fireRate)).toBeLessThanOrEqual(0.05);
    });

    it('held out by runbook: no expected runbook is in two folds', () => {
      expect(cv?.folds).toHaveLength(5);
      expect([...foldsOfRunbook.values()].filter((fs) => fs.size > 1)).toEqual([]);
      expect(foldsOfRunbook.size).toBeGreaterThan(40);
    });
  });
});

describe.skipIf(hasCorpus)('recall quality (corpus missing)', () => {
  it(
    required
      ? 'fails: REPRISE_REQUIRE_CORPUS=1 and the corpus is not beside the checkout (../shared/corpus)'
      : `SKIPPED: the recall quality guard needs ${corpus} (../shared/corpus beside the checkout)`,
    () => {
      expect(required, `recall quality cannot be checked: ${corpus} has no cases-dev.jsonl / cases-dev-expr.jsonl`).toBe(false);
    },
  );
});
