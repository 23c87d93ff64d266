/**
 * Building blocks for the config schema. Each one carries the rule text an operator sees
 * when a value is wrong, so a zod issue's message *is* the rule ("must be a number ≥ 0").
 */
import { z } from 'zod';
import { DURATION_RULE, tryParseDuration } from '../core/duration.js';

/**
 * Extra facts the schema records per key, read back by the defaults printer and the loader
 * (so env names, secrecy and path resolution are declared once, next to the key).
 */
export interface FieldMeta {
  /** Masked as `***` in errors and in `config show`. */
  secret?: boolean;
  /** Env vars that override the key, strongest first. */
  env?: readonly string[];
  /** A filesystem path: relative values resolve against the config file's folder. */
  fsPath?: boolean;
  /** A duration: the parsed value also appears as `<key>_ms`. */
  duration?: boolean;
  /**
   * Setting this key's env var switches its optional block on even when the file leaves the
   * block out (`REPRISE_MODEL` configures a model without a file; a stray API key does not).
   */
  opensBlock?: boolean;
  /** Placeholder shown in the commented-out defaults for keys that have no default. */
  example?: unknown;
}

const required = (rule: string) => (iss: { input?: unknown }) => (iss.input === undefined ? 'is required' : rule);

/** A number; `min`/`max` inclusive. */
export function num(min: number, max?: number) {
  const rule = max === undefined ? `must be a number ≥ ${min}` : `must be a number between ${min} and ${max}`;
  const s = z.number({ error: required(rule) }).min(min, { error: rule });
  return max === undefined ? s : s.max(max, { error: rule });
}

/** A whole number; `min`/`max` inclusive. */
export function int(min: number, max?: number, note = '') {
  const rule = (max === undefined ? `must be a whole number ≥ ${min}` : `must be a whole number between ${min} and ${max}`) + note;
  const s = z
    .number({ error: required(rule) })
    .int({ error: rule })
    .min(min, { error: rule });
  return max === undefined ? s : s.max(max, { error: rule });
}

/** A fraction in [0, 1] (confidences, factors, floors). */
export const fraction = () => num(0, 1);

/** A non-empty string. YAML reads `token: 12345` as a number, so say how to fix that. */
export function str(rule = 'must be a non-empty string') {
  const typeRule = (iss: { input?: unknown }) =>
    typeof iss.input === 'number' || typeof iss.input === 'boolean' ? `${rule} (YAML read a ${typeof iss.input}: quote it)` : required(rule)(iss);
  return z.string({ error: typeRule }).min(1, { error: rule });
}

/** An http(s) URL. */
export function httpUrl() {
  const rule = 'must be an http(s) URL like https://example.com';
  return z.url({ protocol: /^https?$/, error: required(rule) });
}

export function bool() {
  return z.boolean({ error: required('must be true or false') });
}

/** One of a fixed set of words. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: required(`must be one of ${values.join(', ')}`) });
}

/**
 * A duration string (`30s`, `5m`, `1h`, `7d`); YAML's bare `0` is accepted as `'0'`.
 * `positive` forbids zero where "off" makes no sense (timeouts, poll intervals).
 */
export function duration(opts: { positive?: boolean } = {}) {
  const rule = opts.positive ? 'must be a positive duration like 30s, 5m, 1h, 7d' : DURATION_RULE;
  return z.preprocess(
    (v) => (typeof v === 'number' && v === 0 ? '0' : v),
    z.string({ error: required(rule) }).refine(
      (s) => {
        const ms = tryParseDuration(s);
        return ms !== undefined && (!opts.positive || ms > 0);
      },
      { error: rule },
    ),
  );
}

/**
 * A section or block: YAML's empty `recall:` (every line under it commented out) reads as
 * null, which means "nothing set here", not a type error.
 */
export function block<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => (v === null ? undefined : v), schema);
}

/** Glob over alert fields (src/core/glob.ts): `*` any run, `?` one character, `[abc]`, `{a,b}`, a leading `!` negates. */
export function glob() {
  return str('must be a non-empty glob pattern like "Kube*"');
}

type MsKeys<T, K extends keyof T & string> = { [P in K as `${P}_ms`]: number };

/**
 * Adds `<key>_ms` for each duration key, so callers never parse durations themselves while
 * YAML and `config show` keep the human text.
 */
export function withMs<T extends Record<string, unknown>, K extends keyof T & string>(value: T, keys: readonly K[]): T & MsKeys<T, K> {
  const out: Record<string, unknown> = { ...value };
  for (const k of keys) out[`${k}_ms`] = tryParseDuration(value[k] as string) ?? 0;
  return out as T & MsKeys<T, K>;
}
