/**
 * Turn zod issues into sentences that name the field, the rule and the value:
 * `alerts[2].status must be "firing" or "resolved", got "pending"`.
 */
import type { z } from 'zod';

/** `['alerts', 2, 'labels', 'a.b']` → `alerts[2].labels["a.b"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (typeof p === 'string' && /^[A-Za-z_$][\w$]*$/.test(p)) out += out ? `.${p}` : p;
    else out += `[${JSON.stringify(String(p))}]`;
  }
  return out || 'body';
}

/** A short, bounded rendering of a bad value for an error message. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') {
    const s = v.length > 60 ? `${v.slice(0, 57)}...` : v;
    return JSON.stringify(s);
  }
  return `${typeof v} ${String(v)}`;
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/** One issue → one sentence (needs `reportInput: true` at parse time for the "got" part). */
export function formatIssue(issue: z.core.$ZodIssue): string {
  const where = formatPath(issue.path);
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return `${where} is required`;
      return `${where} must be ${article(issue.expected)}, got ${describeValue(input)}`;
    case 'invalid_value':
      return `${where} must be ${issue.values.map((x) => JSON.stringify(x)).join(' or ')}, got ${describeValue(input)}`;
    case 'too_small':
      if (issue.origin === 'array') return `${where} must have at least ${String(issue.minimum)} item(s)`;
      if (issue.origin === 'string') return `${where} must not be empty`;
      return `${where} must be >= ${String(issue.minimum)}`;
    case 'too_big':
      if (issue.origin === 'array') return `${where} must have at most ${String(issue.maximum)} item(s)`;
      return `${where} is too long`;
    case 'custom':
      // Our refinements phrase their message as a rule ("must be ..."), so it reads on.
      return input === undefined ? `${where} ${issue.message}` : `${where} ${issue.message}, got ${describeValue(input)}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

/** All issues, first few joined with "; " (bounded so a 10k-alert payload cannot flood). */
export function formatIssues(issues: readonly z.core.$ZodIssue[], max = 5): string {
  const shown = issues.slice(0, max).map(formatIssue);
  const more = issues.length > max ? `; and ${issues.length - max} more problem(s)` : '';
  return shown.join('; ') + more;
}
