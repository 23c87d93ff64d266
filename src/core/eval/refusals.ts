/**
 * Every refused true answer, explained (issue 33): a case whose runbook is in the catalog and
 * recall stayed silent. Which gate refused, by how much, and which runbook it was weighed
 * against — so the rule that costs coverage is visible, case by case and counted.
 */
import type { GateTraceStep } from '../types.js';
import { fmt } from './metrics.js';
import type { CaseRun } from './run-cases.js';

/** What stopped a true answer. */
export type RefusingGate = 'sibling' | 'margin' | 'min_score' | 'solo_floor' | 'outcome' | 'structural' | 'not a candidate';

export interface Refusal {
  id: string;
  variant: string;
  /** Held-out fold it was measured on (cross-validation), else absent. */
  fold?: number;
  expected: string;
  /** The expected entry's place among the candidates (0 = first), null when it was none. */
  expectedRank: number | null;
  expectedScore: number | null;
  /** The candidate the refusing gate judged: the expected runbook itself, or a leader ahead of it. */
  judged: string | null;
  /** True when the refused candidate was the expected runbook (or a page of its pointer family). */
  judgedWasRight: boolean;
  gate: RefusingGate;
  /** The gate's value and threshold (margin share, score, or the sibling rule's said shares). */
  value: number | null;
  threshold: number | null;
  /** How far short of passing: threshold − value (margin, scores); own − rival share (sibling). */
  shortBy: number | null;
  /** The near-sibling (sibling gate) or runner-up (margin gate) it was weighed against. */
  rival: string | null;
  /** The rival is the expected runbook: recall led with a sibling of the right one. */
  rivalWasRight: boolean;
  reason: string;
}

const num = (v: GateTraceStep['value']): number | null => (typeof v === 'number' ? v : null);

/** The silent positives among `runs`, each with the gate that refused it. */
export function refusals(runs: readonly CaseRun[], fold?: number): Refusal[] {
  const out: Refusal[] = [];
  for (const r of runs) {
    if (r.expected === null || r.fired !== null) continue;
    const right = new Set([r.expected, ...(r.accepted ?? [])]);
    const score = r.scores.find((s) => right.has(s.entry));
    const head = {
      id: r.id,
      variant: r.variant,
      ...(fold === undefined ? {} : { fold }),
      expected: r.expected,
      expectedRank: score?.rank ?? null,
      expectedScore: score?.score ?? null,
    };
    const steps = r.trace as ReadonlyArray<Partial<GateTraceStep> & { gate: string; reason: string }>;
    const nm = r.nearMiss;
    const refusing = (t: (typeof steps)[number]): boolean => nm !== null && nm !== undefined && t.gate === nm.gate && t.entry === nm.entry && t.passed === false;
    // The step whose reason the near miss repeats (a sibling rule may judge several rivals).
    const stop = nm ? (steps.find((t) => refusing(t) && nm.reason.startsWith(t.reason)) ?? steps.find(refusing)) : undefined;
    if (nm && stop) {
      const value = num(stop.value ?? null);
      const threshold = num(stop.threshold ?? null);
      let gate: RefusingGate = nm.gate === 'sibling' || nm.gate === 'outcome' ? nm.gate : 'margin';
      if (gate === 'margin' && /min_score/.test(stop.reason)) gate = 'min_score';
      else if (gate === 'margin' && /solo_floor/.test(stop.reason)) gate = 'solo_floor';
      const judgement = gate === 'sibling' ? r.judgements?.find((j) => j.rival === stop.rival && !j.passed) : undefined;
      const rival = stop.rival ?? null;
      out.push({
        ...head,
        judged: nm.entry,
        judgedWasRight: right.has(nm.entry),
        gate,
        value: judgement ? judgement.ownShare : value,
        threshold: judgement ? judgement.rivalShare : threshold,
        shortBy: judgement ? judgement.rivalShare - judgement.ownShare : value !== null && threshold !== null ? threshold - value : null,
        rival,
        rivalWasRight: rival !== null && right.has(rival),
        reason: nm.reason,
      });
      continue;
    }
    // Nothing agreeing was judged: the expected runbook failed the structural gate, or was no candidate.
    const structural = score ? steps.find((t) => t.gate === 'structural' && t.entry !== undefined && t.entry !== null && right.has(t.entry)) : undefined;
    out.push({
      ...head,
      judged: structural?.entry ?? null,
      judgedWasRight: structural !== undefined,
      gate: structural ? 'structural' : 'not a candidate',
      value: null,
      threshold: null,
      shortBy: null,
      rival: null,
      rivalWasRight: false,
      reason: structural?.reason ?? 'the expected runbook was not among the candidates the search returned',
    });
  }
  return out;
}

/** Refusals counted by gate (most first), and by pair of runbooks weighed against each other. */
export function refusalCounts(rs: readonly Refusal[]): { byGate: Array<{ gate: RefusingGate; count: number }>; pairs: Array<{ judged: string; rival: string; gate: RefusingGate; count: number }> } {
  const byGate = new Map<RefusingGate, number>();
  const pairs = new Map<string, { judged: string; rival: string; gate: RefusingGate; count: number }>();
  for (const r of rs) {
    byGate.set(r.gate, (byGate.get(r.gate) ?? 0) + 1);
    if (r.judged === null || r.rival === null) continue;
    const key = `${r.gate}\u0000${r.judged}\u0000${r.rival}`;
    const p = pairs.get(key);
    if (p) p.count++;
    else pairs.set(key, { judged: r.judged, rival: r.rival, gate: r.gate, count: 1 });
  }
  return {
    byGate: [...byGate].map(([gate, count]) => ({ gate, count })).sort((a, b) => b.count - a.count || (a.gate < b.gate ? -1 : 1)),
    pairs: [...pairs.values()].sort((a, b) => b.count - a.count || (a.judged < b.judged ? -1 : a.judged > b.judged ? 1 : 0)),
  };
}

const n3 = (n: number | null): string => (n === null ? '—' : fmt(n));

/** "margin 0.031 vs 0.05 (short by 0.019)" / "sibling: said 0.000 of its own words vs 0.500 of the sibling's". */
function howMuch(r: Refusal): string {
  if (r.gate === 'sibling') return `said ${n3(r.value)} of its own name words vs ${n3(r.threshold)} of the sibling's`;
  if (r.value === null) return '';
  return `${n3(r.value)} vs ${n3(r.threshold)} (short by ${n3(r.shortBy)})`;
}

function whoLine(r: Refusal): string {
  const expected = `${r.expected} (${r.expectedRank === null ? 'not a candidate' : `#${r.expectedRank + 1}, ${n3(r.expectedScore)}`})`;
  const judged = r.judged === null ? '' : r.judgedWasRight ? ' itself' : `; the gate judged ${r.judged}, ahead of it`;
  const rival = r.rival === null ? '' : ` against ${r.rival}${r.rivalWasRight ? ' (the right one)' : ''}`;
  return `expected ${expected}${judged}: ${r.gate}${rival}`;
}

/** Plain text for the terminal: one block per refusal, then the counts. */
export function refusalsText(rs: readonly Refusal[], title: string): string {
  const lines = [`${title}: ${rs.length} refused true answer${rs.length === 1 ? '' : 's'}`];
  for (const r of rs) {
    const much = howMuch(r);
    lines.push(`  ${r.id} [${r.variant}${r.fold === undefined ? '' : `, fold ${r.fold + 1}`}]: ${whoLine(r)}${much ? `, ${much}` : ''}`);
    lines.push(`      ${r.reason}`);
  }
  const { byGate, pairs } = refusalCounts(rs);
  if (byGate.length > 0) lines.push(`  by gate: ${byGate.map((g) => `${g.gate} ${g.count}`).join(' · ')}`);
  if (pairs.length > 0) {
    lines.push('  weighed against (judged → rival):');
    for (const p of pairs) lines.push(`    ${p.count}× ${p.gate}: ${p.judged} → ${p.rival}`);
  }
  return `${lines.join('\n')}\n`;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** Markdown: one row per refusal, then the counts by gate and by pair. */
export function refusalsMarkdown(rs: readonly Refusal[], title: string): string {
  const lines = [`### ${title}: ${rs.length} refused true answer${rs.length === 1 ? '' : 's'}`, ''];
  if (rs.length > 0) {
    lines.push('| case | variant | fold | expected (rank, score) | gate | judged | weighed against | by how much | reason |', '|---|---|---|---|---|---|---|---|---|');
    for (const r of rs) {
      const expected = `${r.expected} (${r.expectedRank === null ? 'not a candidate' : `#${r.expectedRank + 1}, ${n3(r.expectedScore)}`})`;
      const judged = r.judged === null ? '—' : r.judgedWasRight ? 'the expected one' : r.judged;
      const rival = r.rival === null ? '—' : `${r.rival}${r.rivalWasRight ? ' (expected)' : ''}`;
      lines.push(
        `| ${r.id} | ${r.variant} | ${r.fold === undefined ? '—' : r.fold + 1} | ${cell(expected)} | ${r.gate} | ${cell(judged)} | ${cell(rival)} | ${cell(howMuch(r) || '—')} | ${cell(r.reason)} |`,
      );
    }
    const { byGate, pairs } = refusalCounts(rs);
    lines.push('', `By gate: ${byGate.map((g) => `${g.gate} ${g.count}`).join(' · ')}.`);
    if (pairs.length > 0) {
      lines.push('', '| gate | judged | weighed against | times |', '|---|---|---|---|');
      for (const p of pairs) lines.push(`| ${p.gate} | ${p.judged} | ${p.rival} | ${p.count} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
