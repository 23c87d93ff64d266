/**
 * Adversarial input families for the linear-time checks (issue 13): each makes a string of about
 * `n` characters that would make a careless scanner, decoder or regex backtrack. The growth
 * benchmark times each at n and 4n; the unit tests feed each at 1 MiB and check the result.
 */

/** A named maker of hostile strings of about `n` characters. */
export interface HostileFamily {
  name: string;
  make: (n: number) => string;
}

const family = (name: string, make: (n: number) => string): HostileFamily => ({ name, make });

/** PromQL expressions: unbalanced brackets, open strings, endless alternations, comments. */
export const PROMQL_EXPRESSIONS: readonly HostileFamily[] = [
  family('{…', (n) => '{'.repeat(n)),
  family('(…', (n) => '('.repeat(n)),
  family('a…', (n) => 'a'.repeat(n)),
  family('"…', (n) => '"'.repeat(n)),
  family('{a="…', (n) => '{a="'.repeat(n / 4)),
  family('by (…', (n) => 'by ('.repeat(n / 4)),
  family('x{l=~"a|a|…', (n) => `x{l=~"${'a|'.repeat(n / 2)}"}`),
  family('#…', (n) => '#'.repeat(n)),
  family('1…', (n) => '1'.repeat(n)),
  family('a{b!~…', (n) => 'a{b!~'.repeat(Math.floor(n / 5))),
];

/** Percent-encoding garbage: lone and truncated escapes, broken UTF-8, form-encoded spaces. */
export const PERCENT_GARBAGE: readonly HostileFamily[] = [
  family('%…', (n) => '%'.repeat(n)),
  family('%F…', (n) => '%F'.repeat(n / 2)),
  family('%FF…', (n) => '%FF'.repeat(Math.floor(n / 3))),
  family('%C3…', (n) => '%C3'.repeat(Math.floor(n / 3))),
  family('+…', (n) => '+'.repeat(n)),
];

/** Prometheus generatorURLs whose query string is garbage. */
export const GENERATOR_URLS: readonly HostileFamily[] = [
  family('?&&&…', (n) => `http://p/graph?${'&'.repeat(n)}`),
  family('?g0.expr=%7B%7B…', (n) => `http://p/graph?g0.expr=${'%7B'.repeat(Math.floor(n / 3))}`),
  family('?g0.exp=x&…', (n) => `http://p/graph?${'g0.exp=x&'.repeat(Math.floor(n / 9))}`),
];

/** Alert text (alertname, labels, annotations) that makes tokenizer regexes backtrack. */
export const ALERT_TEXT: readonly HostileFamily[] = (
  [
    ['all capitals', 'A'],
    ['capital humps', 'AAb'],
    ['capitals and digits', 'A1'],
    ['slashes', '/'],
    ['question marks', '?'],
    ['percent escapes', '%2'],
    ['mixed separators', 'a-_.:'],
    ['bidi and capitals', '\u202EAB'],
  ] as const
).map(([name, unit]) => family(name, (n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n)));

/** Runbook URLs for the catalog's URL key: long runs of slashes or question marks. */
export const RUNBOOK_URLS: readonly HostileFamily[] = [family('a///…b', (n) => `a${'/'.repeat(n)}b`), family('???…', (n) => `${'?'.repeat(n)}\n`)];

/** Slack markup: an open `<` run before plain text. */
export const SLACK_MARKUP: readonly HostileFamily[] = [family('<<<…xxx…', (n) => '<'.repeat(n / 2) + 'x'.repeat(n / 2))];

/** A PromQL expression of `terms` distinct metrics, each with its own matcher (`m1_x{l1="v1"} or …`). */
export function manyTermExpression(terms: number): string {
  return Array.from({ length: terms }, (_, i) => `m${i}_x{l${i}="v${i}"}`).join(' or ');
}
