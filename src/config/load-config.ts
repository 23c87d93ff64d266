/**
 * Reads the YAML config file, applies env overrides, validates against the one schema and
 * resolves relative paths. Any problem → a ConfigError listing them all (SPEC §11).
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { ConfigProblem } from './config-error.js';
import { ConfigError, MASK } from './config-error.js';
import type { EnvSources } from './env-overrides.js';
import { applyEnvOverrides } from './env-overrides.js';
import type { Config } from './schema.js';
import { configSchema, parseOneShot } from './schema.js';
import { configFields, normalizePath } from './schema-fields.js';
import { formatPath, issuesToProblems } from './to-problems.js';

export interface LoadConfigOptions {
  /** Config file (from `--config`); falls back to `REPRISE_CONFIG`; none = defaults + env. */
  file?: string | undefined;
  env: NodeJS.ProcessEnv;
  /** Base for a relative `file`, for env-given paths, and for all paths when there is no file. */
  cwd: string;
  /** A command that serves nothing: rules that guard the webhook port are not applied. */
  oneShot?: boolean;
}

/**
 * Loads and validates the config.
 * @throws ConfigError with every problem found (file unreadable, YAML syntax, schema, cross-field).
 */
export function loadConfig(opts: LoadConfigOptions): Config {
  const given = opts.file ?? nonEmpty(opts.env.REPRISE_CONFIG);
  const oneShot = opts.oneShot === true ? { oneShot: true } : {};
  if (given === undefined) return parseConfigText('', { env: opts.env, cwd: opts.cwd, ...oneShot });
  const file = resolve(opts.cwd, given);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ConfigError([{ path: '(file)', value: file, rule: `cannot be read (${code})` }], file);
  }
  return parseConfigText(text, { env: opts.env, cwd: opts.cwd, file, ...oneShot });
}

export interface ParseConfigOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Absolute path the text was read from: named in errors and the base for relative paths. */
  file?: string;
  /** See {@link LoadConfigOptions.oneShot}. */
  oneShot?: boolean;
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

  const result = opts.oneShot === true ? parseOneShot(raw) : configSchema.safeParse(raw);
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
  if (git?.url) git.url = git.url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/\s]+@/i, `$1${MASK}@`);
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
