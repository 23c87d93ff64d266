/**
 * Free text typed by a person (issue 28 item 3, issue 33 item 3): `/reprise recall <words>`,
 * `reprise search`, `/ui ?q=`. What a person types is mostly names — an alert
 * (`NodeFilesystemSpaceFillingUp`), a workload or host (`logs-02`, `checkout-api`) — and a few
 * words, often cut short or misspelt. Entries a typed word names exactly rank first (an alert
 * they cover, the resource they are about; both, above either), then the rest by a
 * typo-tolerant, prefix-matching engine (`FuzzyTextIndex`, FlexSearch in the shell). Alert
 * recall does not come through here: its gates keep the exact BM25 index.
 */
import { splitAlertName } from '../recall/structural.js';
import type { Entry } from '../types.js';
import { fileAlert } from '../catalog/search-corpus.js';

/** The longest query read, in characters (a typed line; more is cut). */
export const MAX_TEXT_QUERY = 500;
/** Words looked up per query: a pasted paragraph does not cost a lookup per word. */
export const MAX_QUERY_WORDS = 24;

/** A typo-tolerant, prefix-matching index over entries (the port; FlexSearch implements it). */
export interface FuzzyTextIndex {
  /** Relevance of every entry that matches any of `words` (higher is better), by entry id. */
  match(words: readonly string[], limit: number): ReadonlyMap<string, number>;
}

/** How an entry matched: `alert` — it covers an alert a word names; `resource` — it is about a resource a word names. */
export type ExactMatch = 'alert' | 'resource';

export interface TextHit {
  entry: Entry;
  /** The fuzzy engine's relevance (0 when only an exact name matched). */
  score: number;
  exact: ExactMatch[];
}

/**
 * The words of a typed query, lower-cased: split on white space and on punctuation other than
 * the `-`, `_`, `.`, `/` and `:` that names use (`logs-02`, `ns/name`), each once, at most
 * MAX_QUERY_WORDS.
 */
export function queryWords(text: string): string[] {
  const out = new Set<string>();
  for (const raw of text.slice(0, MAX_TEXT_QUERY).split(/[^\p{L}\p{N}_\-./:]+/u)) {
    const w = raw.replace(/^[-_./:]+|[-_./:]+$/g, '').toLowerCase();
    if (w !== '') out.add(w);
    if (out.size >= MAX_QUERY_WORDS) break;
  }
  return [...out];
}

/** The alert names an entry covers, lower-cased (its `alerts`, and the alert its file is named after). */
function alertsOf(e: Entry): string[] {
  const file = fileAlert(e.id);
  return [...e.alerts.map((a) => a.toLowerCase()), ...(file ? [file.toLowerCase()] : [])];
}

/** The ways a word can name an entry's resource: `ns/name`, the name, the raw value (`host/logs-02`). */
function resourceNames(e: Entry): string[] {
  const out: string[] = [];
  for (const r of [e.resource, e.alertResource]) {
    if (!r) continue;
    out.push(r.raw.toLowerCase());
    if (r.name) out.push(r.name.toLowerCase());
    if (r.namespace && r.name) out.push(`${r.namespace}/${r.name}`.toLowerCase());
  }
  return out;
}

/** What a query names exactly in `e`. */
export function exactMatches(words: readonly string[], e: Entry): ExactMatch[] {
  const out: ExactMatch[] = [];
  const alerts = alertsOf(e);
  if (words.some((w) => alerts.includes(w))) out.push('alert');
  const resources = resourceNames(e);
  if (resources.length > 0 && words.some((w) => resources.includes(w))) out.push('resource');
  return out;
}

/**
 * The text an entry is found by, for the fuzzy engine: `names` — the alerts it covers, with
 * their CamelCase parts and each tail of them joined (`KubePodCrashLooping` → kube pod crash
 * looping podcrashlooping crashlooping), its resource, tags and title; `text` — description
 * and body.
 */
export function searchableText(e: Entry): { names: string; text: string } {
  const names: string[] = [];
  for (const a of [...(e.alertNames ?? e.alerts), fileAlert(e.id) ?? '']) {
    if (a === '') continue;
    const parts = splitAlertName(a).map((p) => p.toLowerCase());
    names.push(a.toLowerCase(), ...parts);
    for (let i = 1; i < parts.length - 1; i++) names.push(parts.slice(i).join(''));
  }
  for (const r of [e.resource, e.alertResource]) if (r) names.push(r.raw, r.name ?? '', r.namespace ?? '');
  names.push(...e.tags, e.title);
  return { names: names.filter((n) => n !== '').join(' '), text: `${e.description}\n${e.body}` };
}

/**
 * The entries for a typed query, best first: exact names before the rest (alert and resource
 * both, then either, an alert before a resource), then by the fuzzy engine's relevance, active
 * entries before drafts and retired ones, then by id. Entries nothing matched are left out; at most `k`.
 */
export function rankTextQuery(text: string, entries: readonly Entry[], fuzzy: FuzzyTextIndex, k: number): TextHit[] {
  const words = queryWords(text);
  if (words.length === 0 || !(k >= 1)) return [];
  // A typed alert name also looks for its parts (`KubePodCrashLooping` → kube, pod, crash,
  // looping): its siblings are what a person typing it may want next.
  const parts = new Set<string>();
  for (const raw of text.slice(0, MAX_TEXT_QUERY).split(/\s+/)) {
    const split = splitAlertName(raw);
    if (split.length > 1) for (const p of split) if (p.length >= 3) parts.add(p.toLowerCase());
  }
  const lookup = [...new Set([...words, ...parts])].slice(0, MAX_QUERY_WORDS * 2);
  const relevance = fuzzy.match(lookup, Math.max(50, k * 5));
  const hits: TextHit[] = [];
  for (const e of entries) {
    const exact = exactMatches(words, e);
    const score = relevance.get(e.id) ?? 0;
    if (exact.length === 0 && score <= 0) continue;
    hits.push({ entry: e, score, exact });
  }
  const rank = (h: TextHit): number => h.exact.length * 2 + (h.exact.includes('alert') ? 1 : 0);
  const active = (h: TextHit): number => (h.entry.status === 'active' ? 1 : 0);
  hits.sort((a, b) => rank(b) - rank(a) || b.score - a.score || active(b) - active(a) || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0));
  return hits.slice(0, k);
}

/** What a typed query names outright: an alert some entry covers (as the entry writes it), and a resource an entry is about. */
export interface NamedInText {
  alertname?: string;
  resource?: { namespace?: string; name: string; host: boolean };
}

/**
 * The alert and the resource a typed query names, read against the catalog: the first word
 * that is an alert an entry covers, the first that is an entry's resource (`logs-02`,
 * `ci/gitlab-runner`). `/reprise recall NodeFilesystemSpaceFillingUp logs-02` then asks recall
 * about that alert on that resource, so the structural gate finds the incident recorded there.
 */
export function namedInText(text: string, entries: readonly Entry[]): NamedInText {
  const words = queryWords(text);
  const out: NamedInText = {};
  for (const w of words) {
    for (const e of entries) {
      if (out.alertname === undefined && alertsOf(e).includes(w)) {
        const written = [...(e.alertNames ?? []), fileAlert(e.id) ?? ''].find((a) => a.toLowerCase() === w);
        out.alertname = written ?? w;
      }
      if (out.resource === undefined) {
        for (const r of [e.resource, e.alertResource]) {
          if (!r?.name) continue;
          const names = [r.raw.toLowerCase(), r.name.toLowerCase(), ...(r.namespace ? [`${r.namespace}/${r.name}`.toLowerCase()] : [])];
          if (names.includes(w)) {
            out.resource = { ...(r.namespace ? { namespace: r.namespace } : {}), name: r.name, host: r.kind === 'host' };
            break;
          }
        }
      }
      if (out.alertname !== undefined && out.resource !== undefined) return out;
    }
  }
  return out;
}
