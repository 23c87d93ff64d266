/** Evaluation cases (eval/README.md): one JSON line each, an alert payload and what should answer. */

/** One line of a cases file. */
export interface EvalCase {
  id: string;
  variant: string;
  expect: { runbook?: string; entry?: string; none?: boolean };
  payload: unknown;
  /** Evaluate with this entry, and the pages of its pointer family, taken out of the catalog (leave-one-out). */
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

/** Variant of a leave-one-out twin: `leave-one-out` for a name-visible case, `leave-one-out (name-hidden)` and so on. */
export function looVariant(variant: string): string {
  return variant === 'name-visible' ? 'leave-one-out' : `leave-one-out (${variant})`;
}

/**
 * Adds a leave-one-out twin for each name-visible positive (and with `hidden`, each name-hidden
 * one): the same alert with its runbook removed from the catalog, nothing expected. A
 * name-visible twin asks whether recall posts some other runbook for a named alert it has none
 * for; a name-hidden twin whether, with the right runbook gone, a runbook that shares its words
 * takes its place. Calibration holds the name-visible twins to a floor; the name-hidden ones
 * are reported only (a catalog missing the runbook of an alert with an opaque name is not what
 * the targets are about, and nothing but the missing runbook could tell recall to stay silent).
 */
export function withLeaveOneOut(cases: readonly EvalCase[], o: { hidden?: boolean } = {}): EvalCase[] {
  const twinned = (v: string): boolean => v === 'name-visible' || (o.hidden === true && v.startsWith('name-hidden'));
  const loo = cases
    .filter((c) => twinned(c.variant) && (c.expect.runbook ?? c.expect.entry) && !c.remove)
    .map((c) => ({ ...c, id: `${c.id}:loo`, variant: looVariant(c.variant), remove: (c.expect.runbook ?? c.expect.entry)!, expect: { none: true } }));
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
