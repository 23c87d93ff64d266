import type { Entry } from '../types.js';
import type { SearchIndex, UpdatableSearchIndex } from '../../ports/search-index.js';
import { tokenize } from '../tokenize.js';
import { urlKey } from '../url-key.js';
import { splitAlertName } from './structural.js';
import { resolvePointers } from './pointer-families.js';
import { nameWordLists } from './siblings.js';

/**
 * One indexed view of the catalog, swapped whole when the catalog reloads. After
 * `updateCatalogSnapshot` the previous snapshot is spent: its index and tables were updated in
 * place for the new one (recall is synchronous, so no call ever sees half an update).
 */
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
  /**
   * Sibling words (`nameWordLists`) → how many entries are named with them: a word many names
   * share (`kube`, `target`) tells a sibling apart less than a rare one (`maxed`).
   */
  nameFrequency: ReadonlyMap<string, number>;
  builtAt: Date;
}

/** Entries added or replaced (by id) and ids removed, as a catalog sync finds them. */
export interface CatalogChange {
  upserts: readonly Entry[];
  removedIds: readonly string[];
}

/** The mutable tables behind a snapshot's read-only views. */
interface Tables {
  byId: Map<string, Entry>;
  byAlert: Map<string, Entry[]>;
  knownAlerts: Set<string>;
  /** `urlKey(source)` → every entry with it, in entry order; `bySource` holds the last one. */
  sources: Map<string, Entry[]>;
  bySource: Map<string, Entry>;
  nameWords: Map<string, string[][]>;
  family: Map<string, string>;
  nameFrequency: Map<string, number>;
  /** Entries that are pointer pages, resolved or not (a later entry can resolve one). */
  pointerPages: number;
  /** The snapshot's entries are in id order (as `loadCatalog` returns them). */
  sorted: boolean;
}

/** The tables of each snapshot this module built, so an update can patch them. */
const tablesOf = new WeakMap<CatalogSnapshot, Tables>();

/** An entry's own alert names as word lists; entries are immutable, so computed once each. */
const ownNameWords = new WeakMap<Entry, string[][]>();

function nameWordsOf(e: Entry): string[][] {
  let lists = ownNameWords.get(e);
  if (!lists) {
    lists = [];
    for (const n of e.alertNames ?? []) {
      const words = [...new Set(splitAlertName(n).flatMap((w) => tokenize(w)))];
      if (words.length > 0) lists.push(words);
    }
    ownNameWords.set(e, lists);
  }
  return lists;
}

const byId = (a: Entry, b: Entry): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (!list) map.set(key, [value]);
  else if (!list.includes(value)) list.push(value);
}

/** Counts `e`'s sibling words in (`by` 1) or out (`by` −1) of the name frequencies. */
function countNames(t: Tables, e: Entry, by: 1 | -1): void {
  for (const w of new Set(nameWordLists(e).flat())) {
    const n = (t.nameFrequency.get(w) ?? 0) + by;
    if (n > 0) t.nameFrequency.set(w, n);
    else t.nameFrequency.delete(w);
  }
}

/** Add `e` after every entry already in the tables (pointer families aside). */
function addEntry(t: Tables, e: Entry): void {
  countNames(t, e, 1);
  const lists = nameWordsOf(e);
  if (lists.length > 0) t.nameWords.set(e.id, [...lists]);
  t.byId.set(e.id, e);
  if (e.pointsTo !== undefined) t.pointerPages++;
  for (const a of e.alerts) {
    push(t.byAlert, a, e);
    if (e.status === 'active') t.knownAlerts.add(a);
  }
  if (e.source) {
    const s = urlKey(e.source);
    push(t.sources, s, e);
    t.bySource.set(s, e);
  }
}

/**
 * A pointer page hands its alerts to the runbook it points at, so a renamed alert still finds
 * the content (and the target no longer looks like a sibling that merely shares words).
 */
function addFamilies(t: Tables, entries: readonly Entry[]): void {
  for (const [id, target] of resolvePointers(entries)) {
    const e = t.byId.get(id)!;
    const to = t.byId.get(target)!;
    t.family.set(e.id, to.id);
    for (const a of e.alerts) {
      push(t.byAlert, a, to);
      if (to.status === 'active') t.knownAlerts.add(a);
    }
    const lists = nameWordsOf(e);
    if (lists.length > 0) t.nameWords.set(to.id, [...(t.nameWords.get(to.id) ?? []), ...lists]);
  }
}

function buildTables(entries: readonly Entry[]): Tables {
  const sorted = entries.every((e, i) => i === 0 || entries[i - 1]!.id < e.id);
  const t: Tables = {
    byId: new Map(),
    byAlert: new Map(),
    knownAlerts: new Set(),
    sources: new Map(),
    bySource: new Map(),
    nameWords: new Map(),
    family: new Map(),
    nameFrequency: new Map(),
    pointerPages: 0,
    sorted,
  };
  for (const e of entries) addEntry(t, e);
  addFamilies(t, entries);
  return t;
}

function snapshotOf(entries: readonly Entry[], t: Tables, index: SearchIndex, builtAt: Date): CatalogSnapshot {
  const snapshot: CatalogSnapshot = {
    entries,
    byId: t.byId,
    byAlert: t.byAlert,
    knownAlerts: t.knownAlerts,
    bySource: t.bySource,
    index,
    nameWords: t.nameWords,
    family: t.family,
    nameFrequency: t.nameFrequency,
    builtAt,
  };
  tablesOf.set(snapshot, t);
  return snapshot;
}

/** Builds the lookup tables recall needs next to the text index. */
export function buildCatalogSnapshot(entries: readonly Entry[], index: SearchIndex, builtAt = new Date()): CatalogSnapshot {
  return snapshotOf(entries, buildTables(entries), index, builtAt);
}

/** A snapshot's lookup tables as plain data, entries named by id (a saved catalog index). */
export interface SavedTables {
  byAlert: Array<[string, string[]]>;
  knownAlerts: string[];
  sources: Array<[string, string[]]>;
  nameWords: Array<[string, string[][]]>;
  family: Array<[string, string]>;
  nameFrequency: Array<[string, number]>;
  pointerPages: number;
  sorted: boolean;
}

/** The tables of a snapshot built here, to save beside its index. */
export function savedTables(snapshot: CatalogSnapshot): SavedTables {
  const t = tablesOf.get(snapshot);
  if (!t) throw new Error('savedTables: the snapshot was not built by buildCatalogSnapshot');
  const ids = (list: readonly Entry[]): string[] => list.map((e) => e.id);
  return {
    byAlert: [...t.byAlert].map(([a, list]) => [a, ids(list)]),
    knownAlerts: [...t.knownAlerts],
    sources: [...t.sources].map(([s, list]) => [s, ids(list)]),
    nameWords: [...t.nameWords],
    family: [...t.family],
    nameFrequency: [...t.nameFrequency],
    pointerPages: t.pointerPages,
    sorted: t.sorted,
  };
}

/**
 * The snapshot `savedTables` described, over the very entries it was built from: no
 * tokenizing of names, no pointer resolution. Equal to `buildCatalogSnapshot(entries, index)`.
 * @throws Error when the tables name an entry that is not there (a damaged save).
 */
export function restoreCatalogSnapshot(entries: readonly Entry[], index: SearchIndex, saved: SavedTables, builtAt = new Date()): CatalogSnapshot {
  const byIdMap = new Map(entries.map((e) => [e.id, e]));
  const entry = (id: string): Entry => {
    const e = byIdMap.get(id);
    if (!e) throw new Error(`saved tables name entry ${JSON.stringify(id)}, which is not in the catalog`);
    return e;
  };
  const sources = new Map(saved.sources.map(([s, list]) => [s, list.map(entry)]));
  const bySource = new Map<string, Entry>();
  for (const [s, list] of sources) {
    const last = list.at(-1);
    if (last) bySource.set(s, last);
  }
  const t: Tables = {
    byId: byIdMap,
    byAlert: new Map(saved.byAlert.map(([a, list]) => [a, list.map(entry)])),
    knownAlerts: new Set(saved.knownAlerts),
    sources,
    bySource,
    nameWords: new Map(saved.nameWords),
    family: new Map(saved.family),
    nameFrequency: new Map(saved.nameFrequency),
    pointerPages: saved.pointerPages,
    sorted: saved.sorted,
  };
  return snapshotOf(entries, t, index, builtAt);
}

/** Whether `index` can follow catalog changes in place. */
export function isUpdatable(index: SearchIndex): index is UpdatableSearchIndex {
  return typeof (index as Partial<UpdatableSearchIndex>).update === 'function';
}

/**
 * The snapshot after `change`, without re-indexing: the index is updated in place and the
 * tables are patched for the entries that changed only; the entry list is copied (pointers,
 * no parsing). Entries keep their order, changed ones are merged in by id, and lists under an
 * alert or source that changed are re-sorted by id: for a catalog loaded in id order (as
 * `loadCatalog` does) the result equals `buildCatalogSnapshot` of the new entries.
 * A catalog with pointer pages (before or after) has its tables rebuilt instead — a pointer
 * resolves against the whole catalog — which costs map inserts per entry, still no indexing.
 * `prev` is spent afterwards.
 * @throws Error when `prev` was not built here or its index cannot be updated.
 */
export function updateCatalogSnapshot(prev: CatalogSnapshot, change: CatalogChange, builtAt = new Date()): CatalogSnapshot {
  const t = tablesOf.get(prev);
  if (!t || !isUpdatable(prev.index)) throw new Error('updateCatalogSnapshot: the snapshot has no updatable index; rebuild it with buildCatalogSnapshot');
  prev.index.update(change.upserts, change.removedIds);
  tablesOf.delete(prev);

  const latest = new Map<string, Entry>();
  for (const e of change.upserts) latest.set(e.id, e);
  const gone = new Set([...change.removedIds, ...latest.keys()]);
  const added = [...latest.values()].sort(byId);
  const entries = t.sorted
    ? editSorted(prev.entries, gone, added)
    : mergeById(
        prev.entries.filter((e) => !gone.has(e.id)),
        added,
      );
  if (t.pointerPages > 0 || added.some((e) => e.pointsTo !== undefined)) return snapshotOf(entries, buildTables(entries), prev.index, builtAt);

  const alerts = new Set<string>();
  const sources = new Set<string>();
  for (const id of gone) {
    const old = t.byId.get(id);
    if (!old) continue;
    t.byId.delete(id);
    t.nameWords.delete(id);
    countNames(t, old, -1);
    for (const a of old.alerts) alerts.add(a);
    if (old.source) sources.add(urlKey(old.source));
  }
  for (const a of alerts)
    t.byAlert.set(
      a,
      (t.byAlert.get(a) ?? []).filter((e) => !gone.has(e.id)),
    );
  for (const s of sources)
    t.sources.set(
      s,
      (t.sources.get(s) ?? []).filter((e) => !gone.has(e.id)),
    );
  for (const e of added) {
    addEntry(t, e);
    for (const a of e.alerts) alerts.add(a);
    if (e.source) sources.add(urlKey(e.source));
  }
  for (const a of alerts) {
    const list = (t.byAlert.get(a) ?? []).sort(byId);
    if (list.length === 0) t.byAlert.delete(a);
    if (list.some((e) => e.status === 'active')) t.knownAlerts.add(a);
    else t.knownAlerts.delete(a);
  }
  for (const s of sources) {
    const list = (t.sources.get(s) ?? []).sort(byId);
    const last = list.at(-1);
    if (last) t.bySource.set(s, last);
    else {
      t.sources.delete(s);
      t.bySource.delete(s);
    }
  }
  return snapshotOf(entries, t, prev.index, builtAt);
}

/** First position in `entries` (in id order) whose id is not below `id`. */
function lowerBound(entries: readonly Entry[], id: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `entries` (in id order) without the `gone` ids and with `added` (in id order) in place: found
 * by binary search, so a change costs a copy of the list, not a comparison per entry.
 */
function editSorted(entries: readonly Entry[], gone: ReadonlySet<string>, added: readonly Entry[]): Entry[] {
  const out = entries.slice();
  for (const id of gone) {
    const i = lowerBound(out, id);
    if (out[i]?.id === id) out.splice(i, 1);
  }
  for (const e of added) out.splice(lowerBound(out, e.id), 0, e);
  return out;
}

/** Merge two lists by id (each in id order, or at least `b` is); equal ids cannot occur. */
function mergeById(a: readonly Entry[], b: readonly Entry[]): Entry[] {
  const out: Entry[] = [];
  let j = 0;
  for (const e of a) {
    while (j < b.length && byId(b[j]!, e) < 0) out.push(b[j++]!);
    out.push(e);
  }
  while (j < b.length) out.push(b[j++]!);
  return out;
}
