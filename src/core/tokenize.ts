/**
 * The one tokenizer shared by indexing and querying (SPEC §5 search). Both sides must use it,
 * or BM25 statistics and query terms stop lining up.
 */

/** Words too common in runbooks and alert text to tell entries apart. Kept small on purpose:
 * "no" / "not" stay, because "NotReady" and "NoLeader" are meaningful. */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'but',
  'if',
  'then',
  'else',
  'of',
  'to',
  'in',
  'on',
  'at',
  'by',
  'for',
  'from',
  'with',
  'into',
  'as',
  'is',
  'are',
  'was',
  'were',
  'be',
  'been',
  'being',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'there',
  'their',
  'they',
  'them',
  'we',
  'our',
  'you',
  'your',
  'can',
  'will',
  'would',
  'should',
  'could',
  'may',
  'might',
  'has',
  'have',
  'had',
  'do',
  'does',
  'did',
  'so',
  'such',
  'than',
  'which',
  'who',
  'what',
  'when',
  'where',
  'how',
  'also',
  'any',
  'all',
  'some',
  'each',
  'via',
  'per',
  'about',
  'over',
  'out',
  'up',
]);

/**
 * CamelCase pieces of one alphanumeric word, acronyms kept whole:
 * `CPUThrottlingHigh` → CPU, Throttling, High; `EC2Instance` → EC2, Instance.
 */
const CAMEL_PART = /[A-Z]+[0-9]*(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])/g;

/**
 * Light, deterministic suffix stripping. Deliberately crude: it only has to map the same
 * word form on both sides (index and query) to the same term, not produce real stems.
 */
export function stem(token: string): string {
  if (/^[0-9]+$/.test(token)) return token;
  let t = token;
  // Plural first, so "strings" and "string" end up in the same place.
  if (t.length > 4 && t.endsWith('ies')) t = `${t.slice(0, -3)}y`;
  else if (t.length > 3 && t.endsWith('s') && !/(ss|us|is)$/.test(t)) t = t.slice(0, -1);
  if (t.length > 5 && t.endsWith('ing')) t = t.slice(0, -3);
  else if (t.length > 5 && t.endsWith('ed') && !t.endsWith('eed')) t = t.slice(0, -2);
  return t;
}

function keep(token: string): boolean {
  return token.length > 1 && !STOPWORDS.has(token);
}

/**
 * Split text into search terms: lower-cased, split on non-alphanumerics and on CamelCase /
 * acronym boundaries, stopwords and 1-character tokens dropped, lightly stemmed. A mixed-case
 * identifier also yields itself whole (`KubePodCrashLooping` → kube, pod, crash, loop,
 * kubepodcrashloop) so an exact alert name matches far more strongly than its parts.
 * The whole identifier is stemmed like any word, so an alert name written all lower-case
 * (`alerts: [kubepodcrashlooping]`, a lower-cased label) yields the same term.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of text.split(/[^\p{L}\p{N}]+/u)) {
    if (word === '') continue;
    // CamelCase splitting only makes sense for ASCII identifiers; other words stay whole.
    const parts = /^[A-Za-z0-9]+$/.test(word) ? (word.match(CAMEL_PART) ?? [word]) : [word];
    if (parts.length > 1) {
      for (const part of parts) {
        const t = stem(part.toLowerCase());
        if (keep(t)) out.push(t);
      }
      const whole = stem(word.toLowerCase());
      if (keep(whole)) out.push(whole);
    } else {
      const t = stem(word.toLowerCase());
      if (keep(t)) out.push(t);
    }
  }
  return out;
}

/**
 * Every word of `text`, split and stemmed as `tokenize` does, with stopwords kept and no
 * whole-identifier term: what recall's sibling rule compares, where the small words decide
 * (`…ToSomeAlertmanagers` against `…ToAnyAlertmanager`, `NotScheduled` against `MisScheduled`).
 */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const word of text.split(/[^\p{L}\p{N}]+/u)) {
    if (word === '') continue;
    const parts = /^[A-Za-z0-9]+$/.test(word) ? (word.match(CAMEL_PART) ?? [word]) : [word];
    for (const part of parts) {
      const t = stem(part.toLowerCase());
      if (t.length > 1) out.push(t);
    }
  }
  return out;
}
