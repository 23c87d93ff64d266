/**
 * Reading the catalog the way an agent does (SPEC §7 built-in tools `kb_search`, `kb_get`):
 * shared by the investigator's built-in tools and `reprise mcp`, so both answer alike.
 * Lookups go through the loaded snapshot only; an id never reaches the filesystem.
 */
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { tokenize } from '../tokenize.js';
import type { Entry, EntryStatus, EntryType } from '../types.js';

/** One `kb_search` hit. */
export interface KbHit {
  id: string;
  type: EntryType;
  title: string;
  description: string;
  /** BM25 against the query, two decimals. */
  score: number;
  status: EntryStatus;
}

/** Entries matching `query`, best first (at most `k`); no searchable word gives none. */
export function kbSearch(catalog: CatalogSnapshot, query: string, k: number): KbHit[] {
  const tokens = tokenize(query);
  if (tokens.length === 0) return [];
  return catalog.index.search(tokens, k).map((h) => ({
    id: h.entry.id,
    type: h.entry.type,
    title: h.entry.title,
    description: h.entry.description,
    score: Math.round(h.score * 100) / 100,
    status: h.entry.status,
  }));
}

/** One entry in full, as `kb_get` returns it. */
export interface KbEntryView {
  id: string;
  type: EntryType;
  title: string;
  description: string;
  resource?: string;
  status: EntryStatus;
  lastValidated?: string;
  body: string;
}

export function entryView(e: Entry): KbEntryView {
  return {
    id: e.id,
    type: e.type,
    title: e.title,
    description: e.description,
    ...(e.resource ? { resource: e.resource.raw } : {}),
    status: e.status,
    ...(e.lastValidated ? { lastValidated: e.lastValidated } : {}),
    body: e.body,
  };
}

export type KbGetResult = { entry: KbEntryView } | { error: string };

/**
 * The entry with id `id` (its path relative to the catalog root). An id shaped like a path out
 * of the catalog (absolute, `..`, a backslash, a NUL) is refused by name rather than merely not
 * found, so a caller probing for files learns that ids are not paths.
 */
export function kbGet(catalog: CatalogSnapshot, id: string): KbGetResult {
  if (/^[\\/]|^[A-Za-z]:|\\|\0/.test(id) || id.split('/').some((seg) => seg === '..' || seg === '.')) {
    return { error: `"${printable(id)}" is not a catalog entry id: ids are paths inside the catalog as kb_search returns them (e.g. incidents/checkout-api-oomkilled.md), never absolute or with ".."` };
  }
  const e = catalog.byId.get(id);
  return e ? { entry: entryView(e) } : { error: `no catalog entry with id "${printable(id)}"; kb_search lists the ids` };
}

/** An id echoed in a message: bounded, control characters shown escaped. */
function printable(id: string): string {
  const cut = id.length > 200 ? `${id.slice(0, 200)}…` : id;
  return JSON.stringify(cut).slice(1, -1);
}
