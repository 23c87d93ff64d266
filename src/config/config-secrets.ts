/**
 * Every secret a config holds, for the one redactor (src/core/redact.ts): the fields the schema
 * marks secret (tokens, signing secrets, API keys, the UI token, MCP headers, generic sources'
 * HMAC secrets) and the credentials inside URLs (a Redis password, a git remote's token).
 */
import { createRedactor, urlSecrets, type Redactor } from '../core/redact.js';
import type { Config } from './schema.js';
import { configTree, type ConfigField } from './schema-fields.js';

/** The secret values of `config` (strings only; unset ones left out). */
export function configSecrets(config: Config): string[] {
  const out: string[] = [];
  const take = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(take);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(take);
  };
  const visit = (fields: readonly ConfigField[], node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    for (const f of fields) {
      const v = (node as Record<string, unknown>)[f.key];
      if (v === undefined) continue;
      if (f.secret) take(v);
      else if (f.children && Array.isArray(v)) for (const item of v) visit(f.children, item);
      else if (f.children) visit(f.children, v);
      else if (f.kind === 'record' && v !== null && typeof v === 'object') for (const item of Object.values(v)) secretsOfRecordItem(item, take);
    }
  };
  visit(configTree().children ?? [], config);
  out.push(...urlSecrets(config.store.url), ...urlSecrets(config.catalog.git?.url));
  return out;
}

/** A record's items (a name → source map) are objects the field walk does not describe: their secret-named keys. */
function secretsOfRecordItem(item: unknown, take: (v: unknown) => void): void {
  if (item === null || typeof item !== 'object') return;
  for (const [k, v] of Object.entries(item)) if (/secret|token|password|api_?key/i.test(k)) take(v);
}

/** The redactor for everything this config's process says: its secrets and every secret shape. */
export function configRedactor(config: Config): Redactor {
  return createRedactor(configSecrets(config));
}
