import { Charset, Index } from 'flexsearch';
import { searchableText, type FuzzyTextIndex } from '../../core/search/text-query.js';
import type { Entry } from '../../core/types.js';

/**
 * FlexSearch for free text typed by a person (issue 28 item 3): prefix matching (`filesys`,
 * `crashloop`) and typo tolerance (`filesytem`, `chekout`), the two things the exact BM25
 * index recall's gates use cannot do. Two field groups — names (alerts with their CamelCase
 * parts, resource, tags, title) and text (description, body) — each indexed twice: `forward`
 * (every prefix of a word) and `tolerant` (swapped and missing letters), with the LatinBalance
 * encoder folding case, accents and doubled letters. A word found in the names counts more
 * than one found in the text, and an exact-prefix find more than a tolerated typo.
 */
const WEIGHT = { names: 3, text: 1 } as const;
const PREFIX = 1;
const TYPO = 0.6;

type Group = keyof typeof WEIGHT;

export class FlexTextIndex implements FuzzyTextIndex {
  readonly #indexes: Array<{ group: Group; kind: number; index: Index }> = [];
  readonly #ids: string[] = [];

  constructor(entries: readonly Entry[]) {
    for (const group of ['names', 'text'] as const) {
      for (const [tokenize, kind] of [
        ['forward', PREFIX],
        ['tolerant', TYPO],
      ] as const) {
        this.#indexes.push({ group, kind, index: new Index({ tokenize, encoder: Charset.LatinBalance, resolution: 9 }) });
      }
    }
    entries.forEach((e, doc) => {
      this.#ids.push(e.id);
      const t = searchableText(e);
      for (const ix of this.#indexes) ix.index.add(doc, t[ix.group]);
    });
  }

  match(words: readonly string[], limit: number): ReadonlyMap<string, number> {
    const out = new Map<string, number>();
    for (const w of words) {
      // Per word, the best way each entry matched it (names before text, prefix before typo).
      const best = new Map<number, number>();
      for (const ix of this.#indexes) {
        const found = ix.index.search(w, { limit, suggest: true });
        if (!Array.isArray(found)) continue;
        const s = WEIGHT[ix.group] * ix.kind;
        for (const id of found) if (typeof id === 'number' && s > (best.get(id) ?? 0)) best.set(id, s);
      }
      for (const [doc, s] of best) {
        const id = this.#ids[doc];
        if (id !== undefined) out.set(id, (out.get(id) ?? 0) + s);
      }
    }
    return out;
  }
}

/** One text index per catalog snapshot, built on the first typed query and dropped with the snapshot. */
export function textIndexFor(): (snapshot: { entries: readonly Entry[] }) => FuzzyTextIndex {
  const built = new WeakMap<object, FlexTextIndex>();
  return (snapshot) => {
    let ix = built.get(snapshot);
    if (ix === undefined) {
      ix = new FlexTextIndex(snapshot.entries);
      built.set(snapshot, ix);
    }
    return ix;
  };
}
