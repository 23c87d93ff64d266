/**
 * Reads the YAML config file, applies env overrides, validates against the one schema and
 * resolves relative paths. Any problem → a ConfigError listing them all (SPEC §11).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import type { ConfigProblem } from './config-error.js';
import { ConfigError, MASK } from './config-error.js';
import type { EnvSources } from './env-overrides.js';
import { applyEnvOverrides } from './env-overrides.js';
import type { Config } from './schema.js';
import { configSchema, parseOneShot } from './schema.js';
import { configFields, normalizePath } from './schema-fields.js';
import { formatPath, issuesToProblems } from './to-problems.js';
import { maskUrl } from '../core/redact.js';

/** A top-level section of the config file (`store`, `catalog`, `transport`, …). */
export type ConfigSection = keyof Config;

export interface LoadConfigOptions {
  /** Config file (from `--config`); see {@link configFile} for where it is looked for without one. */
  file?: string | undefined;
  env: NodeJS.ProcessEnv;
  /** Base for a relative `file`, for env-given paths, and for all paths when there is no file. */
  cwd: string;
  /** A command that serves nothing: rules that guard the webhook port are not applied. */
  oneShot?: boolean;
  /**
   * A companion command that reads only these sections (and serves nothing): a problem in any
   * other section does not stop it — that section is read as its defaults instead — so a Slack
   * channel missing from the operator's shell does not stop `reprise catalog sync`.
   */
  sections?: readonly ConfigSection[];
}

/** The file looked for in the working directory when neither `--config` nor `REPRISE_CONFIG` names one. */
export const DEFAULT_CONFIG_FILE = 'reprise.yaml';

/**
 * Which config file a command reads: `--config FILE`, else `$REPRISE_CONFIG`, else
 * `./reprise.yaml` when there is one; undefined = defaults plus env. Absolute.
 */
export function configFile(opts: Pick<LoadConfigOptions, 'file' | 'env' | 'cwd'>): string | undefined {
  const given = nonEmpty(opts.file) ?? nonEmpty(opts.env.REPRISE_CONFIG);
  if (given !== undefined) return resolve(opts.cwd, given);
  const here = resolve(opts.cwd, DEFAULT_CONFIG_FILE);
  return existsSync(here) ? here : undefined;
}

/**
 * Loads and validates the config.
 * @throws ConfigError with every problem found (file unreadable, YAML syntax, schema, cross-field).
 */
export function loadConfig(opts: LoadConfigOptions): Config {
  const given = configFile(opts);
  const scope = {
    ...(opts.oneShot === true ? { oneShot: true } : {}),
    ...(opts.sections ? { sections: opts.sections } : {}),
  };
  if (given === undefined) return parseConfigText('', { env: opts.env, cwd: opts.cwd, ...scope });
  const file = given;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ConfigError([{ path: '(file)', value: file, rule: `cannot be read (${code})` }], file);
  }
  return parseConfigText(text, { env: opts.env, cwd: opts.cwd, file, ...scope });
}

export interface ParseConfigOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Absolute path the text was read from: named in errors and the base for relative paths. */
  file?: string;
  /** See {@link LoadConfigOptions.oneShot}. */
  oneShot?: boolean;
  /** See {@link LoadConfigOptions.sections}. */
  sections?: readonly ConfigSection[];
}

/**
 * Validates config YAML text (the loader without the file read; handy in tests).
 * @throws ConfigError listing every problem.
 */
export function parseConfigText(text: string, opts: ParseConfigOptions): Config {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e): ConfigProblem => {
      const pos = lines.linePos(e.pos[0]);
      const what = e.message.split('\n')[0] ?? e.code;
      return { path: '(file)', value: undefined, rule: `YAML syntax error at line ${pos.line}, column ${pos.col}: ${what}` };
    });
    throw new ConfigError(problems, opts.file);
  }
  const parsed: unknown = doc.toJS() ?? {};
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    const rule = 'must be a mapping of sections (server:, catalog:, recall:, …)';
    throw new ConfigError([{ path: '(root)', value: parsed, rule }], opts.file);
  }
  const raw = parsed as Record<string, unknown>;
  const envSources = applyEnvOverrides(raw, opts.env);

  const result = opts.sections ? parseSections(raw, opts.sections) : opts.oneShot === true ? parseOneShot(raw) : configSchema.safeParse(raw);
  if (!result.success) {
    const problems = issuesToProblems(result.error.issues, raw).map(({ problem, segments }) => ({
      ...problem,
      ...sourceOf(segments, envSources, (path) => lineOf(doc, lines, path)),
    }));
    throw new ConfigError(problems, opts.file);
  }
  resolvePaths(result.data, envSources, opts.file ? dirname(opts.file) : opts.cwd, opts.cwd);
  return result.data;
}

/** The section a problem belongs to: the one a cross-field rule names (`about`), else its path's first key. */
function sectionOf(issue: z.core.$ZodIssue): string | undefined {
  const about = issue.code === 'custom' ? (issue.params as { about?: string } | undefined)?.about : undefined;
  const first = issue.path[0];
  return about ?? (typeof first === 'string' ? first : undefined);
}

/**
 * The config as a command that reads only `sections` sees it ({@link LoadConfigOptions.sections}):
 * problems there are reported as ever; a section with problems the command never reads is
 * dropped, so it takes its defaults. Rules that guard the webhook port do not apply (it serves
 * nothing). Problems of the file as a whole (an unknown section) still stop it.
 */
function parseSections(raw: Record<string, unknown>, sections: readonly ConfigSection[]): ReturnType<typeof configSchema.safeParse> {
  let current = raw;
  for (;;) {
    const result = parseOneShot(current);
    if (result.success) return result;
    const read = result.error.issues.filter((i) => {
      const s = sectionOf(i);
      return s === undefined || (sections as readonly string[]).includes(s);
    });
    const unread = new Set(result.error.issues.map(sectionOf).filter((s): s is string => s !== undefined && !(sections as readonly string[]).includes(s)));
    // Each round drops at least one section, so this ends.
    if (read.length > 0 || unread.size === 0 || [...unread].every((s) => !(s in current))) {
      return read.length > 0 ? ({ success: false, error: new z.ZodError(read) } as ReturnType<typeof configSchema.safeParse>) : result;
    }
    current = Object.fromEntries(Object.entries(current).filter(([k]) => !unread.has(k)));
  }
}

/** The config with nothing set: every default (paths left relative). */
export function defaultConfig(): Config {
  return configSchema.parse({});
}

/** A deep copy with every secret replaced by `***`, for `config show` and startup logs. */
export function maskSecrets(config: Config): Config {
  const copy = structuredClone(config) as unknown as Record<string, unknown>;
  for (const f of configFields()) {
    if (!f.secret || f.path.includes('[]')) continue;
    const segs = f.path.split('.');
    const last = segs.pop() as string;
    const parent = walk(copy, segs);
    if (parent && parent[last] !== undefined) parent[last] = MASK;
  }
  // A git remote may carry a token in its userinfo (https://x-access-token:…@host/…).
  const git = (copy['catalog'] as { git?: { url?: string } } | undefined)?.git;
  if (git?.url) git.url = maskUrl(git.url);
  // Secrets inside a name → source map: the field walk above does not reach into records.
  const generic = (copy['server'] as { generic_webhooks?: Record<string, { hmac_secret?: string }> } | undefined)?.generic_webhooks;
  for (const g of Object.values(generic ?? {})) if (g.hmac_secret !== undefined) g.hmac_secret = MASK;
  return copy as unknown as Config;
}

function sourceOf(segments: readonly PropertyKey[], env: EnvSources, line: (segments: readonly PropertyKey[]) => number | undefined): { source?: string } {
  const name = env.get(normalizePath(formatPath(segments)));
  if (name) return { source: `env ${name}` };
  const n = line(segments);
  return n === undefined ? {} : { source: `line ${n}` };
}

/** Line of the YAML node at a path (the nearest existing ancestor for missing keys). */
function lineOf(doc: ReturnType<typeof parseDocument>, lines: LineCounter, segments: readonly PropertyKey[]): number | undefined {
  for (let n = segments.length; n > 0; n--) {
    const node = doc.getIn(segments.slice(0, n) as unknown[], true) as { range?: [number, number, number] } | undefined;
    if (node?.range) return lines.linePos(node.range[0]).line;
  }
  return undefined;
}

/**
 * Relative paths from the file resolve against the file's folder (so a config works from any
 * working directory); env-given ones against the working directory, like any shell path.
 */
function resolvePaths(config: Config, env: EnvSources, fileBase: string, cwd: string): void {
  const root = config as unknown as Record<string, unknown>;
  for (const f of configFields()) {
    if (!f.fsPath || f.path.includes('[]')) continue;
    const segs = f.path.split('.');
    const last = segs.pop() as string;
    const parent = walk(root, segs);
    const value = parent?.[last];
    if (parent && typeof value === 'string' && !isAbsolute(value)) {
      parent[last] = resolve(env.has(f.path) ? cwd : fileBase, value);
    }
  }
}

function walk(root: Record<string, unknown>, segs: readonly string[]): Record<string, unknown> | undefined {
  let node: unknown = root;
  for (const s of segs) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[s];
  }
  return typeof node === 'object' && node !== null ? (node as Record<string, unknown>) : undefined;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}
