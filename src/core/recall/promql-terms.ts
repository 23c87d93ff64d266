/**
 * What a Prometheus alert's expression says about it. A Prometheus-generated alert carries
 * its rule's PromQL in `generatorURL` (`/graph?g0.expr=<url-encoded PromQL>&g0.tab=1`):
 * metric names and label matchers name the failing thing whatever the alert is called.
 *
 * Everything here is a single forward pass: the URL and the expression come from the network,
 * may be huge or hostile, and must never throw or backtrack.
 */
import { percentDecode } from './percent-decode.js';

/** The raw pieces of an expression, each once, in order of appearance. */
export interface PromqlTerms {
  /** Metric names (`kube_pod_container_status_waiting_reason`), also from `{__name__="…"}`. */
  metrics: string[];
  /** Label names used in matchers and in `by`/`without`/`on`/`ignoring` lists. */
  labelNames: string[];
  /**
   * Values of positive matchers (`=` and the plain alternatives of `=~`). Negative matchers
   * (`!=`, `!~`) say what the alert is *not* about (`reason!="CrashLoopBackOff"`), so their
   * values are left out; their label names are kept.
   */
  labelValues: string[];
}

/** Keywords and modifiers that are not metric names. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2', 'start', 'end']);
/** Aggregation operators: `sum by (job) (…)` puts a keyword, not `(`, after the name. */
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);
/** Keywords followed by a parenthesised list of label names. */
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
/** A regex alternative is a plain value when it holds no regex syntax. */
const PLAIN_VALUE = /^[A-Za-z0-9_\-/ ]+$/;

const isIdentStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdentPart = (c: number): boolean => isIdentStart(c) || (c >= 48 && c <= 57) || c === 58;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * The PromQL expression of a `generatorURL`: the first `g<N>.expr` (or `expr`) query parameter,
 * URL-decoded. Empty when there is none.
 */
export function expressionFromGeneratorUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return '';
  const hash = url.indexOf('#', q);
  const stop = hash < 0 ? url.length : hash;
  let start = q + 1;
  while (start < stop) {
    let end = url.indexOf('&', start);
    if (end < 0 || end > stop) end = stop;
    // Look for `=` inside this parameter only: searching the rest of the URL for every
    // parameter would be quadratic on `?&&&&…`.
    const param = url.slice(start, end);
    const eq = param.indexOf('=');
    const name = eq < 0 ? param : param.slice(0, eq);
    if (eq > 0 && (name === 'expr' || /^g\d{1,4}\.expr$/.test(name))) return percentDecode(param.slice(eq + 1));
    start = end + 1;
  }
  return '';
}

/**
 * Scans a PromQL expression for metric names, label names and positive label values. Never
 * throws; unbalanced braces and parentheses, unterminated strings and garbage are read as far
 * as they make sense. Stops collecting after `maxTerms` distinct pieces in total.
 */
export function scanPromql(expr: string, maxTerms = 200): PromqlTerms {
  const metrics = new Set<string>();
  const labelNames = new Set<string>();
  const labelValues = new Set<string>();
  const full = (): boolean => metrics.size + labelNames.size + labelValues.size >= maxTerms;
  const n = expr.length;
  let i = 0;
  let braces = 0;
  let parens = 0;
  /** Paren depth of an open `by (…)` list, or -1. */
  let groupingDepth = -1;
  let groupingPending = false;
  /** Inside braces: the label name and operator waiting for their value. */
  let matcherName: string | null = null;
  let matcherOp: string | null = null;

  while (i < n && !full()) {
    const c = expr.charCodeAt(i);
    if (c === 35 /* # */) {
      const nl = expr.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    if (c === 34 /* " */ || c === 39 /* ' */ || c === 96 /* ` */) {
      const { value, next } = readString(expr, i);
      i = next;
      if (braces > 0 && matcherName !== null && matcherOp !== null) {
        addValue(matcherName, matcherOp, value, metrics, labelValues, maxTerms);
      }
      matcherName = null;
      matcherOp = null;
      continue;
    }
    if (isDigit(c) || (c === 46 /* . */ && isDigit(expr.charCodeAt(i + 1)))) {
      // Numbers, durations (5m, 1h30m), hex, exponents: one token, never a name.
      i++;
      while (i < n && (isIdentPart(expr.charCodeAt(i)) || expr.charCodeAt(i) === 46)) i++;
      continue;
    }
    if (isIdentStart(c)) {
      const start = i;
      while (i < n && isIdentPart(expr.charCodeAt(i))) i++;
      const ident = expr.slice(start, i);
      if (braces > 0) {
        matcherName = ident;
        matcherOp = null;
        if (ident !== '__name__') labelNames.add(ident);
        continue;
      }
      if (groupingDepth >= 0) {
        labelNames.add(ident);
        continue;
      }
      const lower = ident.toLowerCase();
      if (GROUPING.has(lower)) {
        groupingPending = true;
        continue;
      }
      let j = i;
      while (j < n && isSpace(expr.charCodeAt(j))) j++;
      if (expr.charCodeAt(j) === 40 /* ( */ || KEYWORDS.has(lower) || AGGREGATIONS.has(lower)) continue;
      metrics.add(ident);
      continue;
    }
    i++;
    switch (c) {
      case 123 /* { */:
        braces++;
        matcherName = null;
        matcherOp = null;
        break;
      case 125 /* } */:
        braces = Math.max(0, braces - 1);
        break;
      case 40 /* ( */:
        parens++;
        if (groupingPending) groupingDepth = parens;
        groupingPending = false;
        break;
      case 41 /* ) */:
        if (parens === groupingDepth) groupingDepth = -1;
        parens = Math.max(0, parens - 1);
        break;
      case 91 /* [ */: {
        // Range and subquery selectors hold durations only.
        const close = expr.indexOf(']', i);
        i = close < 0 ? n : close + 1;
        break;
      }
      case 61 /* = */:
      case 33 /* ! */:
        if (braces > 0 && matcherName !== null) {
          const op = c === 33 ? '!' : '=';
          const nextC = expr.charCodeAt(i);
          const tail = nextC === 126 /* ~ */ ? '~' : nextC === 61 /* = */ ? '=' : '';
          if (tail) i++;
          matcherOp = op === '=' ? (tail === '~' ? '=~' : '=') : tail === '~' ? '!~' : '!=';
        }
        break;
      default:
        break;
    }
  }
  return { metrics: [...metrics], labelNames: [...labelNames], labelValues: [...labelValues] };
}

/** Reads a quoted string starting at `start` (its quote); backslash escapes except in backticks. */
function readString(s: string, start: number): { value: string; next: number } {
  const quote = s.charCodeAt(start);
  let i = start + 1;
  let out = '';
  let chunk = i;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === quote) {
      out += s.slice(chunk, i);
      return { value: out, next: i + 1 };
    }
    if (c === 92 /* \ */ && quote !== 96) {
      out += s.slice(chunk, i);
      // The escaped character stands for itself; `\n` and friends carry no words anyway.
      out += s[i + 1] ?? '';
      i += 2;
      chunk = i;
      continue;
    }
    i++;
  }
  out += s.slice(chunk, Math.min(i, s.length));
  return { value: out, next: s.length };
}

function addValue(name: string, op: string, value: string, metrics: Set<string>, values: Set<string>, max: number): void {
  if (op === '!=' || op === '!~' || value === '') return;
  if (name === '__name__') {
    if (op === '=' && /^[A-Za-z_:][A-Za-z0-9_:]*$/.test(value)) metrics.add(value);
    return;
  }
  if (op === '=') {
    values.add(value);
    return;
  }
  // `=~`: keep the alternatives that are plain words (`Failed|Pending`), not regex syntax.
  for (const alt of value.split('|')) {
    if (values.size >= max) return;
    if (PLAIN_VALUE.test(alt)) values.add(alt);
  }
}
