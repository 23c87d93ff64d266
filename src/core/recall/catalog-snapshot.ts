import type { Entry } from '../types.js';
import type { SearchIndex } from '../../ports/search-index.js';
import { tokenize } from '../tokenize.js';
import { urlKey } from '../url-key.js';
import { splitAlertName } from './structural.js';

/** One immutable, indexed view of the catalog; swapped whole when the catalog reloads. */
export interface CatalogSnapshot {
  entries: readonly Entry[];
  byId: ReadonlyMap<string, Entry>;
  /** alertname (lower-case) → entries listing it in `alerts`. */
  byAlert: ReadonlyMap<string, readonly Entry[]>;
  /** Alertnames some active entry covers by name. */
  knownAlerts: ReadonlySet<string>;
  /** Normalised `source` URL → entry. */
  bySource: ReadonlyMap<string, Entry>;
  index: SearchIndex;
  /** Entry id → the words of the alert names it covers (stemmed like query tokens). */
  nameWords: ReadonlyMap<string, readonly string[]>;
  builtAt: Date;
}

/** Builds the lookup tables recall needs next to the text index. */
export function buildCatalogSnapshot(entries: readonly Entry[], index: SearchIndex, builtAt = new Date()): CatalogSnapshot {
  const byId = new Map<string, Entry>();
  const byAlert = new Map<string, Entry[]>();
  const knownAlerts = new Set<string>();
  const bySource = new Map<string, Entry>();
  const nameWords = new Map<string, string[]>();
  for (const e of entries) {
    const words = new Set((e.alertNames ?? []).flatMap((n) => splitAlertName(n).flatMap((w) => tokenize(w))));
    if (words.size > 0) nameWords.set(e.id, [...words]);
    byId.set(e.id, e);
    for (const a of e.alerts) {
      const list = byAlert.get(a);
      if (list) list.push(e);
      else byAlert.set(a, [e]);
      if (e.status === 'active') knownAlerts.add(a);
    }
    if (e.source) bySource.set(urlKey(e.source), e);
  }
  return { entries, byId, byAlert, knownAlerts, bySource, index, nameWords, builtAt };
}
