/**
 * Every wrong fire, explained (issue 22): the runbook expected and the one posted, their
 * scores, the margin and the gate values that let it through, and which confusions are
 * near-siblings. A wrong runbook posted with confidence is the failure that matters most, so
 * the report names each one instead of folding it into a precision figure.
 */
import { nameDiff } from '../recall/siblings.js';
import type { Entry, GateTraceStep } from '../types.js';
import { fmt } from './metrics.js';
import type { CaseRun } from './run-cases.js';

export interface WrongFire {
  id: string;
  variant: string;
  /** Held-out fold it was measured on (cross-validation), else absent. */
  fold?: number;
  /** What should have answered; null = nothing (a `none` case or a leave-one-out twin). */
  expected: string | null;
  fired: string;
  confidence: number | null;
  firedScore: number | null;
  /** The expected entry's score and place among the candidates, when it was one. */
  expectedScore: number | null;
  expectedRank: number | null;
  /** The gate steps that passed the fired entry: `margin 0.31 ≥ 0.05 (…)`. */
  gates: string[];
  /** Share of name words the two runbooks share (null without an expected runbook or names). */
  nameOverlap: number | null;
}

const GATES = new Set(['structural', 'sibling', 'margin', 'outcome']);

/** The wrong fires among `runs`: a positive answered by another runbook, or anything fired where nothing should be. */
export function wrongFires(runs: readonly CaseRun[], entry: (id: string) => Entry | undefined, fold?: number): WrongFire[] {
  const out: WrongFire[] = [];
  for (const r of runs) {
    if (r.fired === null) continue;
    const right = r.expected === null ? [] : [r.expected, ...(r.accepted ?? [])];
    // One of N related runbooks is right when the expected one is among them.
    if ([r.fired, ...(r.related ?? [])].some((id) => right.includes(id))) continue;
    const score = (id: string | null) => (id === null ? undefined : r.scores.find((s) => s.entry === id));
    const steps = r.trace as ReadonlyArray<Partial<GateTraceStep> & { gate: string; reason: string }>;
    const gates = steps
      .filter((t) => t.entry === r.fired && GATES.has(t.gate))
      .map((t) => `${t.gate} ${t.value ?? '—'}${t.threshold === null || t.threshold === undefined ? '' : ` vs ${t.threshold}`} (${t.reason})`);
    const a = r.expected === null ? undefined : entry(r.expected);
    const b = entry(r.fired);
    out.push({
      id: r.id,
      variant: r.variant,
      ...(fold === undefined ? {} : { fold }),
      expected: r.expected,
      fired: r.fired,
      confidence: r.confidence,
      firedScore: score(r.fired)?.score ?? null,
      expectedScore: score(r.expected)?.score ?? null,
      expectedRank: score(r.expected)?.rank ?? null,
      gates,
      nameOverlap: a && b ? (nameDiff(a, b)?.overlap ?? null) : null,
    });
  }
  return out;
}

/** One confused pair of runbooks and how often. */
export interface Confusion {
  expected: string;
  fired: string;
  count: number;
  nameOverlap: number | null;
  /** Names share at least half their words (the sibling rule's default). */
  sibling: boolean;
}

/** Wrong fires with an expected runbook, counted by pair (most frequent first), siblings marked. */
export function confusions(wrong: readonly WrongFire[], siblingOverlap = 0.5): Confusion[] {
  const pairs = new Map<string, Confusion>();
  for (const w of wrong) {
    if (w.expected === null) continue;
    const key = `${w.expected}\u0000${w.fired}`;
    const c = pairs.get(key);
    if (c) c.count++;
    else pairs.set(key, { expected: w.expected, fired: w.fired, count: 1, nameOverlap: w.nameOverlap, sibling: w.nameOverlap !== null && w.nameOverlap >= siblingOverlap });
  }
  return [...pairs.values()].sort((a, b) => b.count - a.count || (a.expected < b.expected ? -1 : a.expected > b.expected ? 1 : 0));
}

const num = (n: number | null): string => (n === null ? '—' : fmt(n));
const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** Markdown: the wrong fires one per row, then the confusion count. */
export function wrongFiresMarkdown(wrong: readonly WrongFire[], title: string): string {
  const lines = [`### ${title}: ${wrong.length} wrong fire${wrong.length === 1 ? '' : 's'}`, ''];
  if (wrong.length > 0) {
    lines.push(
      '| case | variant | fold | expected (score, rank) | fired (score) | confidence | name overlap | gates that passed it |',
      '|---|---|---|---|---|---|---|---|',
    );
    for (const w of wrong) {
      const expected = w.expected === null ? 'nothing' : `${w.expected} (${num(w.expectedScore)}, ${w.expectedRank === null ? 'not a candidate' : `#${w.expectedRank + 1}`})`;
      lines.push(
        `| ${w.id} | ${w.variant} | ${w.fold === undefined ? '—' : w.fold + 1} | ${cell(expected)} | ${cell(w.fired)} (${num(w.firedScore)}) | ${num(w.confidence)} | ${num(w.nameOverlap)} | ${cell(w.gates.join('; '))} |`,
      );
    }
    const pairs = confusions(wrong);
    if (pairs.length > 0) {
      lines.push('', '| expected | fired instead | times | name overlap | near-siblings |', '|---|---|---|---|---|');
      for (const c of pairs) lines.push(`| ${c.expected} | ${c.fired} | ${c.count} | ${num(c.nameOverlap)} | ${c.sibling ? 'yes' : 'no'} |`);
      const sib = pairs.filter((c) => c.sibling).reduce((a, c) => a + c.count, 0);
      const all = pairs.reduce((a, c) => a + c.count, 0);
      lines.push('', `Sibling confusions: ${sib} of ${all} wrong runbooks.`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Plain text for the terminal: one line per wrong fire, then the pairs. */
export function wrongFiresText(wrong: readonly WrongFire[], title: string): string {
  const lines = [`${title}: ${wrong.length} wrong fire${wrong.length === 1 ? '' : 's'}`];
  for (const w of wrong) {
    const expected = w.expected === null ? 'nothing' : `${w.expected} (${num(w.expectedScore)}, ${w.expectedRank === null ? 'not a candidate' : `#${w.expectedRank + 1}`})`;
    lines.push(`  ${w.id} [${w.variant}${w.fold === undefined ? '' : `, fold ${w.fold + 1}`}]: expected ${expected}, fired ${w.fired} (${num(w.firedScore)}) at ${num(w.confidence)}, name overlap ${num(w.nameOverlap)}`);
    for (const g of w.gates) lines.push(`      ${g}`);
  }
  const pairs = confusions(wrong);
  if (pairs.length > 0) {
    lines.push('  confused pairs (expected → fired):');
    for (const c of pairs) lines.push(`    ${c.count}× ${c.expected} → ${c.fired}${c.sibling ? ' (near-siblings)' : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
