import type { Entry } from '../types.js';
import type { SearchIndex } from '../../ports/search-index.js';
import { tokenize } from '../tokenize.js';
import { urlKey } from '../url-key.js';
import { splitAlertName } from './structural.js';
import { resolvePointers } from './pointer-families.js';

/** One immutable, indexed view of the catalog; swapped whole when the catalog reloads. */
export interface CatalogSnapshot {
  entries: readonly Entry[];
  byId: ReadonlyMap<string, Entry>;
  /** alertname (lower-case) → entries covering it: its `alerts`/`aliases`, or a pointer's. */
  byAlert: ReadonlyMap<string, readonly Entry[]>;
  /** Alertnames some active entry covers by name. */
  knownAlerts: ReadonlySet<string>;
  /** Normalised `source` URL → entry. */
  bySource: ReadonlyMap<string, Entry>;
  index: SearchIndex;
  /**
   * Entry id → the words of each alert name it covers (stemmed like query tokens), one list
   * per name, a pointer's names included for its target.
   */
  nameWords: ReadonlyMap<string, readonly (readonly string[])[]>;
  /**
   * Entry id → the entry it stands for: a pointer page → its target, every other entry →
   * itself (absent). Two entries of one family are one runbook, not rivals.
   */
  family: ReadonlyMap<string, string>;
  builtAt: Date;
}

/** Builds the lookup tables recall needs next to the text index. */
export function buildCatalogSnapshot(entries: readonly Entry[], index: SearchIndex, builtAt = new Date()): CatalogSnapshot {
  const byId = new Map<string, Entry>();
  for (const e of entries) byId.set(e.id, e);
  const byAlert = new Map<string, Entry[]>();
  const knownAlerts = new Set<string>();
  const bySource = new Map<string, Entry>();
  const nameWords = new Map<string, string[][]>();
  const family = new Map<string, string>();
  const cover = (alert: string, e: Entry): void => {
    const list = byAlert.get(alert);
    if (!list) byAlert.set(alert, [e]);
    else if (!list.includes(e)) list.push(e);
    if (e.status === 'active') knownAlerts.add(alert);
  };
  const addNames = (id: string, names: readonly string[]): void => {
    const lists = nameWords.get(id) ?? [];
    for (const n of names) {
      const words = [...new Set(splitAlertName(n).flatMap((w) => tokenize(w)))];
      if (words.length > 0) lists.push(words);
    }
    if (lists.length > 0) nameWords.set(id, lists);
  };
  for (const e of entries) {
    addNames(e.id, e.alertNames ?? []);
    for (const a of e.alerts) cover(a, e);
    if (e.source) bySource.set(urlKey(e.source), e);
  }
  // A pointer page hands its alerts to the runbook it points at, so a renamed alert still
  // finds the content (and the target no longer looks like a sibling that merely shares words).
  for (const [id, target] of resolvePointers(entries)) {
    const e = byId.get(id)!;
    const t = byId.get(target)!;
    family.set(e.id, t.id);
    for (const a of e.alerts) cover(a, t);
    addNames(t.id, e.alertNames ?? []);
  }
  return { entries, byId, byAlert, knownAlerts, bySource, index, nameWords, family, builtAt };
}
