/**
 * A config that does not validate: every problem at once, each naming the key, the value
 * (secrets masked) and the rule, so one edit-and-retry fixes them all (SPEC §11).
 */

/** Exit status of a process that stops on a bad config (the caller exits with it). */
export const CONFIG_EXIT_CODE = 2;

/** One thing wrong with the config. */
export interface ConfigProblem {
  /** Dotted key path (`recall.min_score`, `trigger.match[0].alertname`), or `(file)` for the file itself. */
  path: string;
  /** The offending value as given, `***` for secrets, `undefined` when missing. */
  value: unknown;
  /** What the value must be (`must be a number ≥ 0`). */
  rule: string;
  /** Where the value came from: the config file (with line when known) or an env var. */
  source?: string;
}

/** What a secret looks like in errors and in `config show`. */
export const MASK = '***';

export const CONFIG_HINT = 'see `reprise config defaults` for every key, its default and its doc';

/** Thrown by the loader; `format()` is what an operator should read. */
export class ConfigError extends Error {
  readonly code = 'config_invalid' as const;
  readonly problems: readonly ConfigProblem[];
  /** The config file checked, when there was one. */
  readonly file: string | undefined;

  constructor(problems: readonly ConfigProblem[], file?: string) {
    super(`invalid config: ${problems.map(formatProblem).join('; ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
    this.file = file;
  }

  /** One line per problem plus a hint, ready for stderr. */
  format(): string {
    const n = this.problems.length;
    const head = `invalid config${this.file ? ` (${this.file})` : ''}: ${n} problem${n === 1 ? '' : 's'}`;
    const lines = this.problems.map((p) => `  ✗ ${formatProblem(p)}`);
    return [head, ...lines, `hint: ${CONFIG_HINT}`].join('\n') + '\n';
  }
}

/** `recall.min_score = "high": must be a number ≥ 0 (file line 4)`. */
export function formatProblem(p: ConfigProblem): string {
  const value = p.value === undefined ? ' (missing)' : ` = ${showValue(p.value)}`;
  const source = p.source ? ` [${p.source}]` : '';
  return `${p.path}${value}: ${p.rule}${source}`;
}

function showValue(v: unknown): string {
  const text = v === MASK ? MASK : safeJson(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
