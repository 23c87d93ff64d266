import { basename } from 'node:path';
import type { RecallOptions } from '../recall/confidence.js';
import { fmt, type SweepPoint, type VariantMetrics } from './metrics.js';
import { wrongFiresMarkdown, type WrongFire } from './wrong-fires.js';
import { refusalsMarkdown, type Refusal } from './refusals.js';

export interface ReportInput {
  metrics: readonly VariantMetrics[];
  sweep: ReadonlyMap<string, readonly SweepPoint[]>;
  options: RecallOptions;
  /** Wrong fires at the configured settings. */
  wrong: readonly WrongFire[];
  /** Refused true answers at the configured settings. */
  refused?: readonly Refusal[];
  catalogDir: string;
  casesFile: string;
  date: Date;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Precision (y) against coverage (x) for each variant with positives, one point per threshold
 * scale, labelled with the scale. Hand-written SVG: a dozen points need no plotting library.
 */
export function sweepSvg(sweep: ReadonlyMap<string, readonly SweepPoint[]>): string {
  const W = 640;
  const H = 420;
  const m = { l: 60, r: 150, t: 30, b: 50 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const x = (v: number): number => m.l + v * pw;
  const y = (v: number): number => m.t + (1 - v) * ph;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${m.l}" y="18" font-size="14">Recall threshold sweep: precision of fired answers vs coverage</text>`,
  ];
  for (let i = 0; i <= 10; i++) {
    const v = i / 10;
    parts.push(`<line x1="${x(0)}" y1="${y(v)}" x2="${x(1)}" y2="${y(v)}" stroke="#eee"/>`);
    parts.push(`<line x1="${x(v)}" y1="${y(0)}" x2="${x(v)}" y2="${y(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${m.l - 8}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(1)}</text>`);
    parts.push(`<text x="${x(v)}" y="${y(0) + 16}" text-anchor="middle">${v.toFixed(1)}</text>`);
  }
  parts.push(`<text x="${m.l + pw / 2}" y="${H - 10}" text-anchor="middle">coverage (answered positives / positives)</text>`);
  parts.push(`<text x="16" y="${m.t + ph / 2}" transform="rotate(-90 16 ${m.t + ph / 2})" text-anchor="middle">precision</text>`);
  let ci = 0;
  for (const [variant, pts] of sweep) {
    const usable = pts.filter((p) => Number.isFinite(p.precision) && Number.isFinite(p.coverage));
    if (usable.length === 0) continue;
    const color = COLORS[ci++ % COLORS.length]!;
    const path = usable.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.coverage).toFixed(1)},${y(p.precision).toFixed(1)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const p of usable) {
      parts.push(`<circle cx="${x(p.coverage).toFixed(1)}" cy="${y(p.precision).toFixed(1)}" r="3" fill="${color}"><title>${esc(variant)} margin_gap ${p.setting}: precision ${fmt(p.precision)}, coverage ${fmt(p.coverage)}</title></circle>`);
    }
    parts.push(`<rect x="${W - m.r + 12}" y="${m.t + ci * 18 - 10}" width="10" height="10" fill="${color}"/>`);
    parts.push(`<text x="${W - m.r + 28}" y="${m.t + ci * 18}">${esc(variant)}</text>`);
  }
  parts.push('</svg>');
  return parts.join('\n');
}

/** Markdown report: the metrics table at the configured thresholds plus the sweep. */
export function renderEvalReport(input: ReportInput): { markdown: string; svg: string } {
  const o = input.options;
  const lines = [
    `# Recall evaluation — ${input.date.toISOString().slice(0, 10)}`,
    '',
    `Catalog \`${basename(input.catalogDir)}\`, cases \`${basename(input.casesFile)}\`, no model (margin gate).`,
    `Thresholds: min_score ${o.minScore}, margin_gap ${o.marginGap}, solo_floor ${o.soloFloor}, name_boost ${o.nameBoost}.`,
    `Sibling rule: names sharing at least ${o.siblingOverlap} of their words, scoring within ${o.siblingWindow} of the top.`,
    `Query weights: summary ${o.query.summary}, description ${o.query.description}, label names ${o.query.labelNames}, expression metrics ${o.query.exprMetrics}, expression labels ${o.query.exprLabels}, runbook_url ${o.query.runbookUrl}.`,
    '',
    '| variant | cases | R@1 | R@3 | MRR | fire rate | precision | coverage | false-fire |',
    '|---|---|---|---|---|---|---|---|---|',
    ...input.metrics.map((m) => `| ${m.variant} | ${m.cases} | ${fmt(m.recallAt1)} | ${fmt(m.recallAt3)} | ${fmt(m.mrr)} | ${fmt(m.fireRate)} | ${fmt(m.precision)} | ${fmt(m.coverage)} | ${fmt(m.falseFireRate)} |`),
    '',
    wrongFiresMarkdown(input.wrong, 'Wrong fires').trimEnd(),
    '',
    ...(input.refused ? [refusalsMarkdown(input.refused, 'Refused true answers').trimEnd(), ''] : []),
    '## Threshold sweep',
    '',
    'margin_gap swept, other thresholds at their defaults; precision / coverage / false-fire rate.',
    '',
    '![sweep](recall-sweep.svg)',
    '',
    '| variant | margin_gap | precision | coverage | false-fire |',
    '|---|---|---|---|---|',
  ];
  for (const [variant, pts] of input.sweep) {
    for (const p of pts) lines.push(`| ${variant} | ${p.setting} | ${fmt(p.precision)} | ${fmt(p.coverage)} | ${fmt(p.falseFireRate)} |`);
  }
  return { markdown: `${lines.join('\n')}\n`, svg: sweepSvg(input.sweep) };
}
