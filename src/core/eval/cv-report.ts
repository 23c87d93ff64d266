import { CALIBRATED_KEYS, type Setting } from './calibrate.js';
import type { CrossValidation, CrossValidations, FoldSplit, Spread, VariantSpread } from './cross-validate.js';
import { fmt, type VariantMetrics } from './metrics.js';
import { wrongFiresMarkdown, wrongFiresText, type WrongFire } from './wrong-fires.js';
import { refusalsMarkdown, refusalsText, type Refusal } from './refusals.js';

const SPLIT: Record<FoldSplit, string> = {
  runbook: 'folds by expected runbook: every case of a runbook in one fold, so a held-out fold’s runbooks are unseen by its calibration',
  rule: 'folds by alert rule: rules that share a runbook may fall in different folds',
};

/** `0.962 ± 0.041` (mean ± sample sd over folds), or `—`. */
export function fmtSpread(s: Spread): string {
  return Number.isFinite(s.mean) ? `${fmt(s.mean)} ± ${fmt(s.sd)}` : '—';
}

/** Held-out precision / coverage of each variant with positives: `name-hidden 1.000 / 0.900 · …`. */
function heldOutLine(ms: readonly VariantMetrics[]): string {
  return ms
    .filter((m) => m.positives > 0)
    .map((m) => `${m.variant} ${fmt(m.precision)} / ${fmt(m.coverage)} (${m.positives})`)
    .join(' · ');
}

/** `marginGap 0.25 · minScore 6 · …` */
export function fmtSetting(s: Setting): string {
  return CALIBRATED_KEYS.map((k) => `${k} ${s[k]}`).join(' · ');
}

function pad(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

/**
 * Per variant: in-sample metrics at the given options beside the held-out mean ± sd over
 * folds. Negative-only variants show fire rates instead of precision and coverage.
 */
export function cvTable(inSample: readonly VariantMetrics[], cv: readonly VariantSpread[]): string {
  const head = ['variant', 'cases', 'in-sample precision', 'in-sample coverage', 'in-sample false-fire', 'CV precision', 'CV coverage', 'CV false-fire'];
  const rows = inSample.map((m) => {
    const s = cv.find((v) => v.variant === m.variant);
    const negOnly = m.positives === 0;
    const ff = (x: number): string => fmt(x);
    return [
      m.variant,
      String(m.cases),
      negOnly ? '—' : fmt(m.precision),
      negOnly ? '—' : fmt(m.coverage),
      m.negatives > 0 ? ff(m.variant === 'leave-one-out' ? m.fireRate : m.falseFireRate) : '—',
      s && !negOnly ? fmtSpread(s.precision) : '—',
      s && !negOnly ? fmtSpread(s.coverage) : '—',
      s && m.negatives > 0 ? fmtSpread(m.variant === 'leave-one-out' ? s.fireRate : s.falseFireRate) : '—',
    ];
  });
  return pad([head, ...rows]);
}

/** "answered as one of N related runbooks (in-sample): name-hidden 2 (2 right) · …", or "" when none was. */
export function relatedLine(ms: readonly VariantMetrics[]): string {
  const parts = ms.filter((m) => m.related > 0).map((m) => `${m.variant} ${m.related} (${m.relatedCorrect} right)`);
  return parts.length === 0 ? 'answered as one of N related runbooks (in-sample): none' : `answered as one of N related runbooks (in-sample): ${parts.join(' · ')}`;
}

/** Text summary of a cross-validation run: the table, each fold's choice, the consensus. */
export function cvText(cv: CrossValidation, inSample: readonly VariantMetrics[], inSampleLabel: string): string {
  const lines = [
    `${cv.k}-fold cross-validation (${SPLIT[cv.split]}; calibrated on ${cv.k - 1} folds, measured on the held-out one; mean ± sd over folds)`,
    `in-sample: ${inSampleLabel}`,
    '',
    cvTable(inSample, cv.byVariant),
    relatedLine(inSample),
    '',
    'settings chosen per fold, and what they give on the held-out fold (precision / coverage per hard variant):',
    ...cv.folds.flatMap((f) => [`  fold ${f.fold + 1} (${f.testCases} held-out cases): ${fmtSetting(f.chosen)}`, `    held out: ${heldOutLine(f.test)}`]),
    '',
    `defaults — the fold choice that does best across folds (floors held on ${cv.consensusScore.feasibleFolds}/${cv.k} held-out folds): ${fmtSetting(cv.consensus)}`,
    cvTable(cv.consensusInSample.metrics, cv.consensusByFold),
    `(${cv.settingsRun} settings evaluated)`,
    '',
    wrongFiresText(cv.wrongFires, `held-out folds (${cv.split} split), each at its own fold's choice`).trimEnd(),
    '',
    refusalsText(cv.refusals, `held-out folds (${cv.split} split), each at its own fold's choice`).trimEnd(),
  ];
  return `${lines.join('\n')}\n`;
}

/** One split's section of `recall-cv.md`. */
function cvSection(cv: CrossValidation, inSample: readonly VariantMetrics[], heading: string): string[] {
  const row = (m: VariantMetrics, s: VariantSpread | undefined): string => {
    const neg = m.positives === 0;
    const loo = m.variant === 'leave-one-out';
    const ff = m.negatives > 0 ? fmt(loo ? m.fireRate : m.falseFireRate) : '—';
    const cvff = s && m.negatives > 0 ? fmtSpread(loo ? s.fireRate : s.falseFireRate) : '—';
    return `| ${m.variant} | ${m.cases} | ${neg ? '—' : fmt(m.precision)} | ${neg ? '—' : fmt(m.coverage)} | ${ff} | ${s && !neg ? fmtSpread(s.precision) : '—'} | ${s && !neg ? fmtSpread(s.coverage) : '—'} | ${cvff} |`;
  };
  const head = ['| variant | cases | in-sample precision | in-sample coverage | in-sample false-fire (LOO: fire) | CV precision | CV coverage | CV false-fire (LOO: fire) |', '|---|---|---|---|---|---|---|---|'];
  return [
    `## ${heading}`,
    '',
    `${cv.k} ${SPLIT[cv.split]}. Each fold's settings calibrated on the other ${cv.k - 1} folds, measured on it; CV columns are mean ± sd over folds. In-sample: the configured settings on every case.`,
    '',
    ...head,
    ...inSample.map((m) => row(m, cv.byVariant.find((v) => v.variant === m.variant))),
    '',
    `${relatedLine(inSample)}.`,
    '',
    '### Settings chosen per fold',
    '',
    ...cv.folds.map((f) => `- fold ${f.fold + 1} (${f.testCases} held-out cases): ${fmtSetting(f.chosen)} — held out: ${heldOutLine(f.test)}`),
    '',
    `### Defaults: the fold choice that does best across folds (floors held on ${cv.consensusScore.feasibleFolds}/${cv.k} held-out folds)`,
    '',
    fmtSetting(cv.consensus),
    '',
    ...head,
    ...cv.consensusInSample.metrics.map((m) => row(m, cv.consensusByFold.find((v) => v.variant === m.variant))),
    '',
    wrongFiresMarkdown(cv.wrongFires, 'Wrong fires on the held-out folds (each at its own fold’s choice)').trimEnd(),
    '',
    refusalsMarkdown(cv.refusals, 'Refused true answers on the held-out folds (each at its own fold’s choice)').trimEnd(),
    '',
  ];
}

/**
 * Markdown for `eval/reports/recall-cv.md`: for each split (by runbook first, the figure that
 * matters; by rule beside it) the cross-validated figures beside the in-sample ones, each
 * fold's choice, the defaults the folds agree on and every held-out wrong fire; then the
 * in-sample wrong fires at the configured settings.
 */
export function cvMarkdown(
  cv: CrossValidations,
  inSample: readonly VariantMetrics[],
  meta: { date: Date; command: string; seed: number; inSampleWrong: readonly WrongFire[]; inSampleRefused?: readonly Refusal[] },
): string {
  const lines = [
    `# Recall cross-validation — ${meta.date.toISOString().slice(0, 10)}`,
    '',
    `\`${meta.command}\` (seed ${meta.seed})`,
    '',
    ...cvSection(cv.byRunbook, inSample, 'Folds by runbook'),
    ...cvSection(cv.byRule, inSample, 'Folds by alert rule'),
    '## In-sample',
    '',
    wrongFiresMarkdown(meta.inSampleWrong, 'The configured settings on every case').trimEnd(),
    '',
    ...(meta.inSampleRefused ? [refusalsMarkdown(meta.inSampleRefused, 'The configured settings on every case').trimEnd(), ''] : []),
    `${cv.byRunbook.settingsRun} settings evaluated.`,
  ];
  return `${lines.join('\n')}\n`;
}
