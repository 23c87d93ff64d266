/**
 * Turns zod issues into operator-facing problems: key path, the value as given (secrets
 * masked), the rule, and "did you mean" for unknown keys.
 */
import type { z } from 'zod';
import type { ConfigProblem } from './config-error.js';
import { MASK } from './config-error.js';
import { configFields, normalizePath } from './schema-fields.js';

type Segment = PropertyKey;

/** A problem plus the raw path it points at (to look up its line or env source). */
export interface LocatedProblem {
  problem: ConfigProblem;
  segments: Segment[];
}

/** `['trigger', 'match', 0, 'alertname']` → `trigger.match[0].alertname`. */
export function formatPath(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out === '' ? String(s) : `.${String(s)}`;
  }
  return out === '' ? '(root)' : out;
}

/** The raw value at a path, or `undefined`. */
export function valueAt(raw: unknown, segments: readonly Segment[]): unknown {
  let node = raw;
  for (const s of segments) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[s];
  }
  return node;
}

/**
 * One problem per zod issue, except an unknown key, which yields one problem per leaf under
 * it (`recal: {k: 20}` → `recal.k`) so the suggestion can name the exact key meant.
 */
export function issuesToProblems(issues: readonly z.core.$ZodIssue[], raw: unknown): LocatedProblem[] {
  const out: LocatedProblem[] = [];
  for (const issue of issues) {
    const base = issue.path as Segment[];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        for (const [segments, value] of leaves([...base, key], valueAt(raw, [...base, key]))) {
          out.push(unknownKey(segments, value));
        }
      }
      continue;
    }
    const path = formatPath(base);
    const value = valueAt(raw, base);
    out.push({ problem: { path, value: mask(path, value), rule: issue.message }, segments: base });
  }
  return out;
}

const MAX_LEAVES = 20;

function leaves(segments: Segment[], value: unknown): Array<[Segment[], unknown]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0) {
    return [[segments, value]];
  }
  const out: Array<[Segment[], unknown]> = [];
  for (const [k, v] of Object.entries(value)) out.push(...leaves([...segments, k], v));
  return out.slice(0, MAX_LEAVES);
}

function unknownKey(segments: Segment[], value: unknown): LocatedProblem {
  const path = formatPath(segments);
  const suggestion = suggestKey(path);
  const secret = SECRET_NAME.test(path) || (suggestion !== undefined && isSecret(suggestion));
  const rule = suggestion ? `unknown key; did you mean \`${suggestion}\`?` : 'unknown key';
  return { problem: { path, value: secret ? MASK : mask(path, value), rule }, segments };
}

const SECRET_NAME = /token|secret|password|api_?key/i;

/** A secret key, or an object holding one (a string put where a secret block goes is likely a secret). */
function isSecret(path: string): boolean {
  const normal = normalizePath(path);
  return configFields().some((f) => f.secret === true && (f.path === normal || f.path.startsWith(`${normal}.`)));
}

/** Masks secrets, including secret-looking keys inside object values. */
export function mask(path: string, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (isSecret(path)) return MASK;
  return maskDeep(value);
}

function maskDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskDeep);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_NAME.test(k) ? MASK : maskDeep(v)]));
}

/**
 * The known key closest to a mistyped one: by edit distance over the whole path (catches
 * `recal.k`), else the same key name in another section (`server.min_score` → `recall.min_score`).
 */
export function suggestKey(path: string): string | undefined {
  const normal = normalizePath(path);
  const known = configFields().map((f) => f.path);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(normal, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  const leaf = normal.slice(normal.lastIndexOf('.') + 1);
  const limit = Math.max(2, Math.floor(leaf.length / 3));
  if (best === undefined || bestDistance > limit) best = known.find((k) => k.endsWith(`.${leaf}`));
  if (best === undefined) return undefined;
  // Put the real list indices back: `trigger.match[].alertnme` → `trigger.match[0].alertname`.
  const indices = [...path.matchAll(/\[(\d+)\]/g)].map((m) => m[1]);
  return best.replace(/\[\]/g, () => `[${indices.shift() ?? ''}]`);
}

/** Levenshtein distance. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur.push(Math.min(sub, (prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
