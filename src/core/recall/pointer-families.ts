import type { Entry } from '../types.js';

/** Finds the entry a pointer names: an id, an id without `.md`, a unique file name, or an alert name. */
function pointerLookup(entries: readonly Entry[], byId: ReadonlyMap<string, Entry>): (ref: string) => Entry | undefined {
  const byBase = new Map<string, Entry[]>();
  const byName = new Map<string, Entry[]>();
  const push = (m: Map<string, Entry[]>, k: string, e: Entry): void => {
    const l = m.get(k);
    if (l) l.push(e);
    else m.set(k, [e]);
  };
  for (const e of entries) {
    push(byBase, (e.id.split('/').pop() ?? e.id).replace(/\.md$/i, '').toLowerCase(), e);
    for (const a of e.alerts) push(byName, a, e);
  }
  const unique = (l: readonly Entry[] | undefined): Entry | undefined => (l?.length === 1 ? l[0] : undefined);
  return (ref) => {
    const base = (ref.split('/').pop() ?? ref).replace(/\.md$/i, '').toLowerCase();
    return byId.get(ref) ?? byId.get(`${ref}.md`) ?? unique(byBase.get(base)) ?? unique(byName.get(ref.toLowerCase()));
  };
}

/** The entry a pointer page stands for, followed through chains (cycles cut). */
function resolvePointer(e: Entry, find: (ref: string) => Entry | undefined): Entry | undefined {
  const seen = new Set([e.id]);
  let at = e;
  while (at.pointsTo !== undefined) {
    const next = find(at.pointsTo);
    if (next === undefined || seen.has(next.id)) break;
    seen.add(next.id);
    at = next;
  }
  return at === e ? undefined : at;
}

/**
 * Pointer page id → the id of the entry it stands for, for every pointer that resolves (see
 * `Entry.pointsTo`). A pointer names its target by path, by path without `.md`, by a file
 * name unique in the catalog, or by an alert name exactly one entry covers.
 */
export function resolvePointers(entries: readonly Entry[]): Map<string, string> {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const find = pointerLookup(entries, byId);
  const out = new Map<string, string>();
  for (const e of entries) {
    const t = e.pointsTo === undefined ? undefined : resolvePointer(e, find);
    if (t !== undefined) out.set(e.id, t.id);
  }
  return out;
}
