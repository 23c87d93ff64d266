/**
 * Ablation (eval/README.md): calibrate and cross-validate again with one signal switched off,
 * so each signal's effect is measured the same way as the whole.
 */
import type { RecallOptions } from '../recall/confidence.js';
import { CALIBRATION_START, SEARCH_SPACE, type CalibratedKey, type SearchSpace, type Setting } from './calibrate.js';

export const SIGNALS = ['expression', 'summary-weighting', 'label-names', 'name-boost', 'pointers', 'runbook-url', 'sibling'] as const;
export type Signal = (typeof SIGNALS)[number];

/** What each signal's absence pins (calibrated keys) — the value it had before it existed. */
const PINNED: Record<Signal, Partial<Setting>> = {
  expression: { exprMetrics: 0, exprLabels: 0 },
  'summary-weighting': { summary: 1, description: 1 },
  'label-names': { labelNames: 0 },
  'name-boost': { nameBoost: 0 },
  pointers: {},
  'runbook-url': {},
  sibling: {},
};

export function isSignal(s: string): s is Signal {
  return (SIGNALS as readonly string[]).includes(s);
}

export interface AblatedRun {
  start: Setting;
  space: SearchSpace;
  opts: RecallOptions;
  /** Pointer pages read as ordinary pages (and scored strictly). */
  ignorePointers: boolean;
}

/** Calibration start, search space, options and catalog reading with `without` switched off. */
export function ablate(opts: RecallOptions, without: readonly Signal[]): AblatedRun {
  const start: Setting = { ...CALIBRATION_START };
  const space: SearchSpace = { ...SEARCH_SPACE };
  let o = opts;
  for (const signal of without) {
    for (const [key, value] of Object.entries(PINNED[signal]) as Array<[CalibratedKey, number]>) {
      start[key] = value;
      space[key] = [value];
    }
    if (signal === 'runbook-url') o = { ...o, query: { ...o.query, runbookUrl: 0 } };
    // The sibling rule off: no two names are near enough (sibling_overlap above 1).
    if (signal === 'sibling') o = { ...o, siblingOverlap: 2 };
  }
  return { start, space, opts: o, ignorePointers: without.includes('pointers') };
}
