/**
 * A trigger as a person names it: the whole key (`kubepodcrashlooping|shop|deployment|checkout-api|`),
 * a unique prefix of it or of one of its parts (`logs-02`), or a few of its words
 * (`checkout-api crashloop`, a PagerDuty title with spaces). One resolver for every surface —
 * the CLI, Slack `/reprise`, Matrix `!reprise`, thread commands — so a name means the same
 * trigger everywhere, and a name that means none, or several, is answered with the closest ones.
 */

/** The longest name looked at (a trigger key is at most 512 characters where it is accepted). */
const MAX_NAME = 512;
/** How many triggers an ambiguous or unknown name is answered with. */
const MAX_MATCHES = 5;
/** Below this share of a name's character bigrams found in a trigger's parts, it is not offered as "closest". */
const MIN_SIMILARITY = 0.6;

export type TriggerName =
  | {
      ok: true;
      triggerKey: string;
      /** `exact`: the whole key; `words`: its words, a prefix or a part of it named it. */
      how: 'exact' | 'words';
    }
  | {
      ok: false;
      /** `empty`: nothing named; `ambiguous`: several triggers fit equally well; `unknown`: none does. */
      reason: 'empty' | 'ambiguous' | 'unknown';
      name: string;
      /** The triggers that fit (ambiguous) or come closest (unknown), best first; at most five. */
      matches: string[];
      /** How many fit equally (ambiguous): more than `matches` lists when there are many. */
      fitting?: number;
    };

/** A key's parts as a person reads them: `|` splits, `%7c` / `%25` decoded, `name=value` also by its value. */
function partsOf(key: string): string[] {
  const out: string[] = [];
  for (const raw of key.split('|')) {
    if (raw === '') continue;
    const part = raw.replaceAll('%7c', '|').replaceAll('%25', '%');
    out.push(part);
    const eq = part.indexOf('=');
    if (eq > 0 && eq < part.length - 1) out.push(part.slice(eq + 1));
  }
  return out;
}

/**
 * How well one word names a part of the key: 3 a whole part, 2 the start of one (or of the
 * key), 1 anywhere in the key, 0 not at all.
 */
function wordFit(word: string, key: string, parts: readonly string[]): number {
  let best = 0;
  for (const p of parts) {
    if (p === word) return 3;
    if (p.startsWith(word)) best = 2;
  }
  if (best === 0 && key.startsWith(word)) best = 2;
  if (best === 0 && key.includes(word)) best = 1;
  return best;
}

/** The name as typed, unquoted and with its spaces collapsed; lower-case like every key. */
export function normalizeTriggerName(name: string): string {
  let n = name.slice(0, MAX_NAME).trim();
  const quoted = /^(["'“‘`])(.*)(["'”’`])$/su.exec(n);
  if (quoted) n = quoted[2]!.trim();
  return n.replace(/\s+/g, ' ').toLowerCase();
}

/**
 * Which trigger `name` names among the `known` keys (the ledger's). The whole key wins; else
 * every word of the name must occur in the key, and the trigger whose parts the words fit best
 * wins when it is the only one that fits that well (`logs-02` names the host `logs-02` even
 * with `logs-021` known; `logs` names neither). Deterministic: ties are ambiguous, never picked.
 */
export function resolveTriggerName(name: string, known: Iterable<string>): TriggerName {
  const n = normalizeTriggerName(name);
  if (n === '') return { ok: false, reason: 'empty', name: n, matches: [] };
  const keys = [...known];
  if (keys.includes(n)) return { ok: true, triggerKey: n, how: 'exact' };
  // A key typed with its separators is matched whole; else by its words.
  const words = n.includes('|') ? [n] : n.split(' ');
  const fits: Array<{ key: string; fit: number }> = [];
  for (const key of keys) {
    const k = key.toLowerCase();
    const parts = partsOf(k);
    let fit = 0;
    for (const w of words) {
      const f = wordFit(w, k, parts);
      if (f === 0) {
        fit = 0;
        break;
      }
      fit += f;
    }
    if (fit > 0) fits.push({ key, fit });
  }
  fits.sort((a, b) => b.fit - a.fit || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const [first, second] = fits;
  if (first && (!second || second.fit < first.fit)) return { ok: true, triggerKey: first.key, how: 'words' };
  if (first) {
    const equal = fits.filter((f) => f.fit === first.fit);
    return { ok: false, reason: 'ambiguous', name: n, matches: equal.slice(0, MAX_MATCHES).map((f) => f.key), fitting: equal.length };
  }
  return { ok: false, reason: 'unknown', name: n, matches: closestTriggers(words, keys) };
}

/** Character bigrams of a string (a set). */
function bigrams(s: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < s.length - 1; i++) out.add(s.slice(i, i + 2));
  return out;
}

/** How much of `word` is in `part`: the share of the word's bigrams the part has (a typo keeps most of them). */
function coverage(word: Set<string>, part: Set<string>): number {
  if (word.size === 0) return 0;
  let shared = 0;
  for (const g of word) if (part.has(g)) shared++;
  return shared / word.size;
}

/** Dice's coefficient: how alike the two are as wholes (breaks ties between parts that both cover a word). */
function dice(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const g of b) if (a.has(g)) shared++;
  return (2 * shared) / (a.size + b.size);
}

/** The keys whose parts are most like the words (a typo: `chekout-api crashlop`), best first. */
function closestTriggers(words: readonly string[], keys: readonly string[]): string[] {
  const grams = words.map(bigrams);
  const scored: Array<{ key: string; cover: number; like: number }> = [];
  for (const key of keys) {
    const parts = [...partsOf(key.toLowerCase()), key.toLowerCase()].map(bigrams);
    let cover = 0;
    let like = 0;
    for (const g of grams) {
      cover += Math.max(0, ...parts.map((p) => coverage(g, p)));
      like += Math.max(0, ...parts.map((p) => dice(g, p)));
    }
    cover /= grams.length;
    if (cover >= MIN_SIMILARITY) scored.push({ key, cover, like });
  }
  return scored
    .sort((a, b) => b.cover - a.cover || b.like - a.like || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, MAX_MATCHES)
    .map((s) => s.key);
}

/** A part of what a refusal says: words, or a trigger key to show the surface's way. */
export type Said = string | { key: string };

/**
 * Why a name named no one trigger, in words and keys: chat shows a key as a code span, a
 * terminal in quotes. `listHint` says where to find the triggers (`status` lists them).
 */
export function triggerNameSaid(r: Extract<TriggerName, { ok: false }>, listHint: string): Said[] {
  const keys = (ks: readonly string[]): Said[] => ks.flatMap((key, i) => (i === 0 ? [{ key }] : [', ', { key }]));
  if (r.reason === 'empty') return [`Name the trigger: its key, a unique part of it, or a few of its words (${listHint}).`];
  if (r.reason === 'ambiguous') {
    const more = (r.fitting ?? 0) > r.matches.length ? ', …' : '';
    return [`“${r.name}” fits ${r.fitting ?? r.matches.length} triggers equally: `, ...keys(r.matches), `${more}. Say more of the one you mean.`];
  }
  if (r.matches.length === 0) return [`No trigger is named “${r.name}” (${listHint}).`];
  return [`No trigger is named “${r.name}”. The closest: `, ...keys(r.matches), '.'];
}

/** {@link triggerNameSaid} as one line of text, each key passed through `quote`. */
export function triggerNameProblem(r: Extract<TriggerName, { ok: false }>, quote: (key: string) => string, listHint: string): string {
  return triggerNameSaid(r, listHint)
    .map((p) => (typeof p === 'string' ? p : quote(p.key)))
    .join('');
}
