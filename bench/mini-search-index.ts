import MiniSearch from 'minisearch';
import { DEFAULT_FIELD_WEIGHTS, uniqueTerms } from '../src/core/bm25.js';
import type { Bm25Field } from '../src/core/bm25.js';
import { BM25_FIELDS } from '../src/core/bm25.js';
import { fileAlert } from '../src/core/catalog/search-corpus.js';
import { tokenize } from '../src/core/tokenize.js';
import type { Entry } from '../src/core/types.js';

/** The field text MiniSearch indexes: the same fields, with the same alert text, as ours. */
function extractField(entry: Entry, field: string): string {
  switch (field as Bm25Field | 'id') {
    case 'id':
      return entry.id;
    case 'title':
      return entry.title;
    case 'alerts':
      return [...entry.alerts, fileAlert(entry.id) ?? ''].join(' ');
    case 'tags':
      return entry.tags.join(' ');
    case 'description':
      return entry.description;
    case 'body':
      return entry.body;
  }
}

/**
 * MiniSearch (BM25 built in) over the same fields with our field weights as boosts, our
 * tokenizer for indexing, and no further term processing, so both engines see the same terms.
 * Queries are passed pre-tokenized and space-joined (`searchMiniSearch`), so neither engine's
 * timing includes tokenizing the query.
 */
export function buildMiniSearch(entries: readonly Entry[]): MiniSearch<Entry> {
  const ms = new MiniSearch<Entry>({
    fields: [...BM25_FIELDS],
    idField: 'id',
    storeFields: [],
    extractField,
    // As in our corpus, an alert name counts once however often it is listed.
    tokenize: (text, field) => (field === 'alerts' ? uniqueTerms(tokenize(text)) : tokenize(text)),
    processTerm: (term) => term,
    searchOptions: {
      boost: { ...DEFAULT_FIELD_WEIGHTS },
      combineWith: 'OR',
      tokenize: (text) => text.split(' ').filter((t) => t !== ''),
      processTerm: (term) => term,
    },
  });
  ms.addAll(entries);
  return ms;
}

/** The top `k` ids for pre-tokenized terms, OR semantics. */
export function searchMiniSearch(ms: MiniSearch<Entry>, tokens: readonly string[], k: number): string[] {
  const hits = ms.search(tokens.join(' '), { combineWith: 'OR' });
  const out: string[] = [];
  for (let i = 0; i < Math.min(k, hits.length); i++) out.push(String(hits[i]?.id));
  return out;
}
