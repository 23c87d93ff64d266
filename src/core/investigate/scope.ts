/**
 * Scope rules (SPEC §7): label matchers on the incident bound what an investigation may read,
 * checked on a tool's arguments before the call ("only the alert's own namespace",
 * "staging never from a prod alert").
 */
import { globMatcher } from '../glob.js';
import type { Incident } from '../types.js';

export interface ScopeRule {
  /** Incident label globs that must all match for the rule to apply (empty = always). */
  when: Readonly<Record<string, string>>;
  /** Top-level argument names the rule checks. */
  args: readonly string[];
  /** Globs a value must match; `${label}` is replaced by the incident's label. */
  allow: readonly string[];
  /** Globs a value must not match. */
  deny: readonly string[];
  /**
   * Refuse a call that gives none of `args` to a tool that accepts one of them: an events list
   * without a namespace reads every namespace. Absent = false.
   */
  required?: boolean;
}

export type ScopeVerdict = { ok: true } | { ok: false; reason: string };

/** Case-insensitive, whole value (src/core/glob.ts). */
function globMatch(glob: string, value: string): boolean {
  return globMatcher(glob)(value);
}

/** The incident's labels, with namespace and cluster filled from its workload when absent. */
function labelsOf(incident: Incident): Record<string, string> {
  const out: Record<string, string> = { ...incident.labels };
  if (incident.workload?.namespace && !out['namespace']) out['namespace'] = incident.workload.namespace;
  if (incident.workload?.cluster && !out['cluster']) out['cluster'] = incident.workload.cluster;
  return out;
}

/**
 * Fills `${label}` from the incident; undefined when a label is unknown (such a pattern can
 * match nothing, so a rule whose every allow pattern is unknown refuses every value).
 */
function expand(pattern: string, labels: Record<string, string>): string | undefined {
  let missing = false;
  const out = pattern.replace(/\$\{([A-Za-z0-9_.-]+)\}/g, (_, name: string) => {
    const v = labels[name];
    if (v === undefined || v === '') missing = true;
    return (v ?? '').replace(/[*?]/g, '');
  });
  return missing ? undefined : out;
}

function valuesOf(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (typeof v === 'number') return [String(v)];
  if (Array.isArray(v)) return v.flatMap(valuesOf);
  return [];
}

/**
 * Checks one tool call's arguments against every rule that applies to the incident.
 * @param accepts the argument names the tool's input schema declares (for `required` rules).
 */
export function checkScope(
  rules: readonly ScopeRule[],
  incident: Incident,
  args: Readonly<Record<string, unknown>>,
  accepts: readonly string[] = [],
): ScopeVerdict {
  const labels = labelsOf(incident);
  for (const [i, rule] of rules.entries()) {
    const applies = Object.entries(rule.when).every(([k, g]) => labels[k] !== undefined && globMatch(g, labels[k]!));
    if (!applies) continue;
    if (rule.required) {
      const takes = rule.args.filter((a) => accepts.includes(a));
      if (takes.length > 0 && !takes.some((a) => valuesOf(args[a]).length > 0)) {
        return { ok: false, reason: `scope rule ${i + 1}: give ${takes.join(' or ')} (left out, the call would read beyond the incident's scope)` };
      }
    }
    const allow = rule.allow.map((p) => expand(p, labels));
    for (const name of rule.args) {
      for (const value of valuesOf(args[name])) {
        const denied = rule.deny.find((d) => {
          const g = expand(d, labels);
          return g !== undefined && globMatch(g, value);
        });
        if (denied !== undefined) return { ok: false, reason: `scope rule ${i + 1}: ${name}="${value}" matches deny "${denied}"` };
        if (rule.allow.length > 0 && !allow.some((g) => g !== undefined && globMatch(g, value))) {
          const shown = allow.map((g, j) => g ?? `${rule.allow[j]} (unknown for this incident)`).join(', ');
          return { ok: false, reason: `scope rule ${i + 1}: ${name}="${value}" is outside ${shown}` };
        }
      }
    }
  }
  return { ok: true };
}
