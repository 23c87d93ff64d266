/** Evaluation cases (eval/README.md): one JSON line each, an alert payload and what should answer. */

/** One line of a cases file. */
export interface EvalCase {
  id: string;
  variant: string;
  expect: { runbook?: string; entry?: string; none?: boolean };
  payload: unknown;
  /** Evaluate with this entry taken out of the catalog (leave-one-out). */
  remove?: string;
}

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

/** The entry a case expects, or null when nothing should answer. */
export function expectedEntry(c: EvalCase): string | null {
  return c.expect.none ? null : (c.expect.runbook ?? c.expect.entry ?? null);
}

/** Adds a leave-one-out twin for each name-visible positive: its runbook removed, nothing expected. */
export function withLeaveOneOut(cases: readonly EvalCase[]): EvalCase[] {
  const loo = cases
    .filter((c) => c.variant === 'name-visible' && (c.expect.runbook ?? c.expect.entry) && !c.remove)
    .map((c) => ({ ...c, id: `${c.id}:loo`, variant: 'leave-one-out', remove: (c.expect.runbook ?? c.expect.entry)!, expect: { none: true } }));
  return [...cases, ...loo];
}

/**
 * The alert rule a case was rendered from: its id up to the first `:` (`rule-0003`,
 * `rule-0003:hidden`, `rule-0003:hidden:expr` and `rule-0003:loo` are one rule). Cross-validation
 * keeps a rule's variants in one fold, so no fold is measured on a rule it was tuned on.
 */
export function ruleOf(caseId: string): string {
  const i = caseId.indexOf(':');
  return i < 0 ? caseId : caseId.slice(0, i);
}
