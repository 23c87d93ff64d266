/**
 * Env overrides for secrets and a few knobs. Which env var feeds which key is declared on the
 * key in the schema (`meta.env`), so `config defaults` documents exactly what is applied here.
 */
import type { ConfigField } from './schema-fields.js';
import { configTree } from './schema-fields.js';

/** Env var names that set a key, by dotted key path. */
export type EnvSources = Map<string, string>;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Writes env values into the raw (parsed YAML) config, env winning over the file.
 * A key inside an optional block the file left out (e.g. `model`) is not set: a stray
 * `OPENAI_API_KEY` in the environment must not switch the model on. Keys marked
 * `opensBlock` (`REPRISE_MODEL_BASE_URL`, `REPRISE_MODEL`) do open it.
 * @returns which key each applied env var set.
 */
export function applyEnvOverrides(raw: Obj, env: NodeJS.ProcessEnv): EnvSources {
  const applied: EnvSources = new Map();
  const visit = (field: ConfigField, node: Obj, segments: string[]): void => {
    for (const child of field.children ?? []) {
      const here = [...segments, child.key];
      if (child.kind === 'object') {
        const present = node[child.key] ?? undefined; // YAML's empty `server:` is null
        // An optional block left out stays out unless an env var that opens it is set.
        if (present === undefined && !child.hasDefault && !opens(child, env)) continue;
        if (present !== undefined && !isObj(present)) continue; // wrong type: the schema reports it
        const next = isObj(present) ? present : {};
        visit(child, next, here);
        if (present === undefined && Object.keys(next).length > 0) node[child.key] = next; // replaces a null too
        continue;
      }
      for (const name of child.env ?? []) {
        const value = env[name];
        if (value === undefined || value.trim() === '') continue;
        node[child.key] = coerce(value, child);
        applied.set(here.join('.'), name);
        break;
      }
    }
  };
  visit(configTree(), raw, []);
  return applied;
}

/** True when an env var of a key marked `opensBlock` directly inside `block` is set. */
function opens(block: ConfigField, env: NodeJS.ProcessEnv): boolean {
  return (block.children ?? []).some((c) => c.opensBlock === true && (c.env ?? []).some((n) => (env[n] ?? '').trim() !== ''));
}

/** Env values are text; numbers and booleans are converted when they look right, else left for the schema to reject. */
function coerce(value: string, field: ConfigField): unknown {
  const v = value.trim();
  if (field.kind === 'number' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (field.kind === 'boolean' && (v === 'true' || v === 'false')) return v === 'true';
  // A list from the environment: comma-separated (`10.0.0.0/8, 192.168.1.5`).
  if (field.kind === 'array')
    return v
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  // Trimmed: secrets read with `$(cat file)` often carry a trailing newline.
  return v;
}
