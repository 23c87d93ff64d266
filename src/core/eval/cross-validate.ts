/**
 * K-fold cross-validation of calibration (issue 8): calibrate on K−1 folds, measure on the
 * held-out one, report the spread. Folds split by alert rule (`ruleFolds`).
 */
import type { RecallOptions } from '../recall/confidence.js';
import { assess, calibrate, GRID, TRAIN_FLOORS, settingKey, withSetting, type Assessment, type Floors, type SearchSpace, type Setting, SEARCH_SPACE } from './calibrate.js';
import type { EvalCase } from './eval-cases.js';
import { metricsByVariant, type CaseOutcome, type VariantMetrics } from './metrics.js';
import type { CaseRun, EvalRunner } from './run-cases.js';
import type { Entry } from '../types.js';
import { wrongFires, type WrongFire } from './wrong-fires.js';
import { refusals, type Refusal } from './refusals.js';

/** Runs every case once per setting and remembers the outcomes. */
export class SettingEvaluator {
  private readonly cache = new Map<string, CaseOutcome[]>();

  constructor(
    private readonly runner: EvalRunner,
    readonly cases: readonly EvalCase[],
    private readonly base: RecallOptions,
  ) {}

  /** Outcomes of every case at `s` (same order as `cases`). */
  outcomes(s: Setting): CaseOutcome[] {
    const key = settingKey(s);
    let hit = this.cache.get(key);
    if (hit === undefined) {
      const opts = withSetting(this.base, s);
      hit = this.cases.map((c) => {
        const { trace: _t, answer: _a, scores: _s, nearMiss: _n, judgements: _j, ...o } = this.runner.run(c, opts);
        // Thousands of settings are kept: of the ranking only the part up to the first right
        // answer, which is all the metrics read.
        const ok = o.expected === null ? [] : [o.expected, ...(o.accepted ?? [])];
        const first = o.ranked.findIndex((id) => ok.includes(id));
        return { ...o, ranked: o.ranked.slice(0, first + 1) };
      });
      this.cache.set(key, hit);
    }
    return hit;
  }

  /** Full runs (trace, scores) of the cases `pick` selects at `s`: for the wrong-fire report, not cached. */
  runs(s: Setting, pick: (index: number) => boolean): CaseRun[] {
    const opts = withSetting(this.base, s);
    return this.cases.flatMap((c, i) => (pick(i) ? [this.runner.run(c, opts)] : []));
  }

  entry(id: string): Entry | undefined {
    return this.runner.entry(id);
  }

  get settingsRun(): number {
    return this.cache.size;
  }
}

/** Mean, sample standard deviation and range of one metric over folds (NaN folds left out). */
export interface Spread {
  mean: number;
  sd: number;
  min: number;
  max: number;
  /** Folds where the metric was defined. */
  n: number;
}

export function spread(values: readonly number[]): Spread {
  const xs = values.filter(Number.isFinite);
  const n = xs.length;
  if (n === 0) return { mean: Number.NaN, sd: Number.NaN, min: Number.NaN, max: Number.NaN, n };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = n < 2 ? 0 : Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  return { mean, sd, min: Math.min(...xs), max: Math.max(...xs), n };
}

export interface FoldResult {
  fold: number;
  trainCases: number;
  testCases: number;
  /** The setting calibrated on the other folds. */
  chosen: Setting;
  train: Assessment;
  /** Held-out metrics at `chosen`. */
  test: VariantMetrics[];
}

export interface VariantSpread {
  variant: string;
  precision: Spread;
  coverage: Spread;
  falseFireRate: Spread;
  fireRate: Spread;
}

/** How cases were dealt into folds: by expected runbook (`runbookFolds`) or by alert rule (`ruleFolds`). */
export type FoldSplit = 'runbook' | 'rule';

export interface CrossValidation {
  k: number;
  split: FoldSplit;
  folds: FoldResult[];
  /** Per variant, the held-out metrics across folds. */
  byVariant: VariantSpread[];
  /** The fold choice that does best across folds (`bestAcrossFolds`): the defaults to ship. */
  consensus: Setting;
  consensusScore: AcrossFolds;
  /** The consensus on every case at once. */
  consensusInSample: Assessment;
  /**
   * Held-out fold metrics at the consensus setting. Not an unbiased estimate (every fold had a
   * say in picking it); `byVariant` is.
   */
  consensusByFold: VariantSpread[];
  /** Every wrong fire on a held-out fold at that fold's chosen setting. */
  wrongFires: WrongFire[];
  /** Every refused true answer on a held-out fold at that fold's chosen setting (issue 33). */
  refusals: Refusal[];
  settingsRun: number;
}

/** Both cross-validations of one run: the one that matches the question, and the by-rule split beside it. */
export interface CrossValidations {
  /** Folds by expected runbook: a held-out fold's runbooks are unseen by its calibration. */
  byRunbook: CrossValidation;
  /** Folds by alert rule (issue 8): rules sharing a runbook may straddle folds. */
  byRule: CrossValidation;
}

export interface CrossValidateOptions {
  /** Fold index of each case (`runbookFolds` or `ruleFolds`). */
  folds: readonly number[];
  /** How `folds` were dealt (reported; default `runbook`). */
  split?: FoldSplit;
  /** Where each fold's search starts (the current defaults). */
  start: Setting;
  space?: Readonly<SearchSpace>;
  /** Settings searched exhaustively first (default `GRID`). */
  grid?: Readonly<Partial<SearchSpace>>;
  /** Floors calibration must hold on the training folds. */
  trainFloors?: Readonly<Floors>;
  /** Called after each fold. */
  progress?: (fold: number, k: number) => void;
}

function spreadByVariant(perFold: readonly VariantMetrics[][]): VariantSpread[] {
  const variants = [...new Set(perFold.flatMap((ms) => ms.map((m) => m.variant)))];
  return variants.map((variant) => {
    const ms = perFold.map((f) => f.find((m) => m.variant === variant)).filter((m): m is VariantMetrics => m !== undefined);
    return {
      variant,
      precision: spread(ms.map((m) => m.precision)),
      coverage: spread(ms.map((m) => m.coverage)),
      falseFireRate: spread(ms.map((m) => m.falseFireRate)),
      fireRate: spread(ms.map((m) => m.fireRate)),
    };
  });
}

/** How a setting does across folds: on how many held-out folds it holds every floor, its mean cost, coverage and precision. */
export interface AcrossFolds {
  feasibleFolds: number;
  cost: number;
  coverage: number;
  precision: number;
}

/**
 * The defaults: of the settings the folds chose, the one that does best across all held-out
 * folds — holds the floors on the most folds, then the least mean cost (a wrong fire weighs
 * WRONG_FIRE_COST silences), then the most precision; a remaining tie goes to the setting
 * more folds chose, then to the earlier fold. The fold choices are combinations that were
 * calibrated together; a per-setting median would mix them into one nobody chose.
 */
export function bestAcrossFolds(chosen: readonly Setting[], heldOut: (s: Setting, fold: number) => Assessment, k: number): { setting: Setting; score: AcrossFolds } {
  const votes = new Map<string, number>();
  for (const s of chosen) votes.set(settingKey(s), (votes.get(settingKey(s)) ?? 0) + 1);
  const E = 1e-9;
  let best: { setting: Setting; score: AcrossFolds; votes: number } | undefined;
  for (const s of chosen) {
    const as = Array.from({ length: k }, (_, f) => heldOut(s, f));
    const score: AcrossFolds = {
      feasibleFolds: as.filter((a) => a.violation === 0).length,
      cost: as.reduce((x, a) => x + a.cost, 0) / k,
      coverage: as.reduce((x, a) => x + a.coverage, 0) / k,
      precision: as.reduce((x, a) => x + a.precision, 0) / k,
    };
    const v = votes.get(settingKey(s)) ?? 0;
    const b = best?.score;
    const wins =
      b === undefined ||
      score.feasibleFolds > b.feasibleFolds ||
      (score.feasibleFolds === b.feasibleFolds &&
        (score.cost < b.cost - E ||
          (Math.abs(score.cost - b.cost) <= E && (score.precision > b.precision + E || (Math.abs(score.precision - b.precision) <= E && v > best!.votes)))));
    if (wins) best = { setting: s, score, votes: v };
  }
  if (best === undefined) throw new Error('bestAcrossFolds: no settings');
  return { setting: best.setting, score: best.score };
}

export function crossValidate(evaluator: SettingEvaluator, o: CrossValidateOptions): CrossValidation {
  const k = Math.max(...o.folds) + 1;
  const pick = (fold: number, inFold: boolean) => (s: Setting): CaseOutcome[] =>
    evaluator.outcomes(s).filter((_, i) => (o.folds[i] === fold) === inFold);
  const folds: FoldResult[] = [];
  for (let f = 0; f < k; f++) {
    const train = pick(f, false);
    // The training folds, so precision is held on each of them (issue 33).
    const trainFolds = o.folds.filter((x) => x !== f);
    const cal = calibrate((s) => assess(train(s), o.trainFloors ?? TRAIN_FLOORS, trainFolds), o.start, o.space ?? SEARCH_SPACE, o.grid ?? GRID);
    const test = pick(f, true)(cal.setting);
    folds.push({ fold: f, trainCases: o.folds.filter((x) => x !== f).length, testCases: test.length, chosen: cal.setting, train: cal.assessment, test: metricsByVariant(test) });
    o.progress?.(f + 1, k);
  }
  const { setting: consensus, score: consensusScore } = bestAcrossFolds(folds.map((f) => f.chosen), (s, f) => assess(pick(f, true)(s)), k);
  const consensusByFold = spreadByVariant(folds.map((f) => metricsByVariant(pick(f.fold, true)(consensus))));
  const heldOutRuns = folds.map((f) => ({ fold: f.fold, runs: evaluator.runs(f.chosen, (i) => o.folds[i] === f.fold) }));
  const wrong = heldOutRuns.flatMap((h) => wrongFires(h.runs, (id) => evaluator.entry(id), h.fold));
  const refused = heldOutRuns.flatMap((h) => refusals(h.runs, h.fold));
  return {
    k,
    split: o.split ?? 'runbook',
    folds,
    byVariant: spreadByVariant(folds.map((f) => f.test)),
    consensus,
    consensusScore,
    consensusInSample: assess(evaluator.outcomes(consensus)),
    consensusByFold,
    wrongFires: wrong,
    refusals: refused,
    settingsRun: evaluator.settingsRun,
  };
}

