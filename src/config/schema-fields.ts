/**
 * Walks the zod config schema into a plain tree of keys, so the defaults printer, the env
 * overrides, secret masking and "did you mean" all read the one schema instead of a copy.
 */
import { z } from 'zod';
import type { FieldMeta } from './fields.js';
import { configSchema } from './schema.js';

export type FieldKind = 'object' | 'string' | 'number' | 'boolean' | 'enum' | 'array' | 'record' | 'duration' | 'other';

/** One key of the config, with what the schema says about it. */
export interface ConfigField extends FieldMeta {
  key: string;
  /** Dotted path; list items appear as `[]` (`trigger.match[].alertname`). */
  path: string;
  description?: string;
  kind: FieldKind;
  /** The key may be left out. */
  optional: boolean;
  /** Present when the schema fills the key in; `default` is the value it uses. */
  hasDefault: boolean;
  default?: unknown;
  /** Allowed words for `enum` keys. */
  values?: readonly string[];
  /** Keys of an object, or of each item of a list of objects. */
  children?: ConfigField[];
}

type AnyDef = { type: string } & Record<string, unknown>;
const defOf = (s: z.core.$ZodType): AnyDef => s._zod.def as unknown as AnyDef;

/** Peels optional/default/pipe wrappers off one key, collecting doc, meta and default on the way. */
function describe(key: string, path: string, schema: z.core.$ZodType): ConfigField {
  const field: ConfigField = { key, path, kind: 'other', optional: false, hasDefault: false };
  let s: z.core.$ZodType | undefined = schema;
  while (s) {
    const meta = z.globalRegistry.get(s) as (FieldMeta & { description?: string }) | undefined;
    if (meta) {
      const { description, ...rest } = meta;
      Object.assign(field, { ...rest, ...field });
      if (description !== undefined && field.description === undefined) field.description = description;
    }
    const def = defOf(s);
    switch (def.type) {
      case 'optional':
        field.optional = true;
        s = def.innerType as z.core.$ZodType;
        continue;
      case 'default':
      case 'prefault':
        field.optional = true;
        field.hasDefault = true;
        if (def.type === 'default') field.default = def.defaultValue;
        s = def.innerType as z.core.$ZodType;
        continue;
      case 'pipe': {
        // object.transform(...) keeps the shape on `in`; preprocess(...) keeps it on `out`.
        const input = def.in as z.core.$ZodType;
        s = defOf(input).type === 'transform' ? (def.out as z.core.$ZodType) : input;
        continue;
      }
      case 'object': {
        field.kind = 'object';
        const shape = def.shape as Record<string, z.core.$ZodType>;
        field.children = Object.entries(shape).map(([k, v]) => describe(k, join(path, k), v));
        break;
      }
      case 'array': {
        field.kind = 'array';
        const item = describe('[]', `${path}[]`, def.element as z.core.$ZodType);
        if (item.children) field.children = item.children;
        break;
      }
      case 'enum':
        field.kind = 'enum';
        field.values = Object.values(def.entries as Record<string, string>);
        break;
      case 'string':
      case 'number':
      case 'boolean':
      case 'record':
        field.kind = def.type;
        break;
      default:
        break;
    }
    s = undefined;
  }
  if (field.duration) field.kind = 'duration';
  // A prefaulted object's default is whatever its children default to.
  if (field.kind === 'object' && field.hasDefault && field.default === undefined) field.default = {};
  return field;
}

const join = (parent: string, key: string): string => (parent === '' ? key : `${parent}.${key}`);

let cached: ConfigField | undefined;

/** The config schema as a tree (root has `path: ''`). */
export function configTree(): ConfigField {
  cached ??= describe('', '', configSchema);
  return cached;
}

/** Every key (objects and leaves), depth first, paths as in {@link ConfigField.path}. */
export function configFields(): ConfigField[] {
  const out: ConfigField[] = [];
  const visit = (f: ConfigField): void => {
    for (const c of f.children ?? []) {
      out.push(c);
      visit(c);
    }
  };
  visit(configTree());
  return out;
}

/** `trigger.match[2].alertname` → `trigger.match[].alertname`. */
export function normalizePath(path: string): string {
  return path.replace(/\[\d+\]/g, '[]');
}
