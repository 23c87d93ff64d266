/**
 * A catalog entry's markdown as a person reads it on a chat surface (issue 28 item 2): the
 * section is parsed, not shown as its source — code spans become code, backslash escapes and
 * HTML entities become the characters they stand for, a blockquote is its text (no stray `>`),
 * and the word joiners the curator puts in to stop GitHub autolinking are dropped (surfaces show
 * invisible characters as `\u{2060}`, and their own renderers keep text inert). Links, emphasis
 * and HTML are never made from entry text: what it says stays literal text, so a hostile fix in
 * an entry cannot ping or link. The credit line a fix entry ends with (`— from @ann via Slack on
 * 2026-11-29`) names its person as a {@link Inline} `person`, for each surface to show its way.
 */
import { personLabel, type PersonRun } from '../people.js';
import type { Inline, RichText } from './thread-view.js';

const WJ = /\u2060/g;
const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"', '&#39;': "'", '&nbsp;': ' ' };
/** Markdown's backslash escapes: a backslash before ASCII punctuation. */
const ESCAPE = /\\([!-/:-@[-`{-~])/g;
/** The credit line of a fix entry (fix-entry.ts `fixProvenance`). */
const CREDIT = /^(—\s+from\s+)(\S.{0,79}?)(\s+via\s+)([A-Za-z][A-Za-z ]{0,39}?)(\s+on\s+\d{4}-\d{2}-\d{2}.*)$/;
const SLACK_ID = /^[UW][A-Z0-9]{2,30}$/;
const MATRIX_ID = /^@[^:\s]+:\S+$/;
/** A section that says there is nothing to say. */
const NOTHING = /^(?:_|\*)?(?:not recorded|unknown|none|n\/a|tbd|to fill in)\.?(?:_|\*)?$/i;

/** Plain characters of markdown text outside code: escapes and entities resolved, joiners dropped. */
function literal(md: string): string {
  return md
    .replace(ESCAPE, '$1')
    .replace(/&(?:lt|gt|amp|quot|#39|nbsp);/g, (e) => ENTITIES[e] ?? e)
    .replace(WJ, '');
}

/** One paragraph's inline runs: code spans as code, the rest literal. */
function inlineRuns(text: string): RichText {
  const runs: RichText = [];
  let i = 0;
  let plain = '';
  const flush = (): void => {
    if (plain !== '') runs.push(literal(plain));
    plain = '';
  };
  while (i < text.length) {
    const ch = text[i]!;
    // An escaped character is text, whatever it is (an escaped backtick opens no code span).
    if (ch === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
      plain += text.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (ch === '`') {
      let ticks = 1;
      while (text[i + ticks] === '`') ticks += 1;
      const fence = '`'.repeat(ticks);
      const close = text.indexOf(fence, i + ticks);
      if (close > i + ticks) {
        flush();
        const code = text.slice(i + ticks, close).replace(WJ, '');
        runs.push({ code: ticks > 1 ? code.trim() : code });
        i = close + ticks;
        continue;
      }
    }
    plain += ch;
    i += 1;
  }
  flush();
  return runs;
}

/** A credit line as runs with its person, or undefined when the line is not one. */
function credit(line: string): RichText | undefined {
  const m = CREDIT.exec(literal(line).trim());
  if (!m) return undefined;
  const [, from, name, viaWord, via, rest] = m;
  return [from!, creditPerson(name!, via!.trim().toLowerCase()), `${viaWord!}${via!}${rest!}`];
}

/**
 * The person a credit line names. An id the entry recorded (`@U0ANN` via Slack, a Matrix id) is
 * that surface's person, shown its way (a mention, a pill); a display name (what fix entries
 * record now) is shown as written and never looked up — it is no surface's id.
 */
function creditPerson(name: string, via: string): PersonRun {
  // A Matrix id keeps its one `@`; elsewhere the `@` the credit line put before a name is not the name's.
  const bare = via === 'matrix' ? name.replace(/^@+/, '@') : name.replace(/^@+/, '');
  if (via === 'slack' && SLACK_ID.test(bare)) return { person: { via: 'slack', id: bare } };
  if (via === 'matrix' && MATRIX_ID.test(bare)) return { person: { via: 'matrix', id: bare } };
  // The surface the line names (`via Slack`), so a directory can show a person it knows by that name its way.
  return { person: { via: 'entry', id: bare, name: bare, ...(/^[a-z][a-z0-9_-]{0,31}$/.test(via) ? { from: via } : {}) } };
}

/**
 * A list item that ends with its credit (`… — from @ann via Slack on 2026-11-29 · worked 2 of 2
 * times`, the "What has fixed it" list amend-entry.ts writes): the words, then the person.
 */
const ITEM_CREDIT = /^(.*?\S)(\s+—\s+from\s+)@?(\S.{0,79}?)(\s+via\s+)([A-Za-z][A-Za-z ]{0,39}?)(\s+on\s+\d{4}-\d{2}-\d{2}.*)$/;

function itemRuns(text: string): RichText {
  const m = ITEM_CREDIT.exec(text);
  if (!m) return ['- ', ...inlineRuns(text)];
  const [, words, from, name, viaWord, via, rest] = m;
  return ['- ', ...inlineRuns(words!), literal(from!), creditPerson(literal(name!), via!.trim().toLowerCase()), `${viaWord!}${via!}${literal(rest!)}`];
}

/** Paragraphs of a section, each as inline runs (blank-line separated; a quote's `>` removed; each list item its own, with a bullet). */
export function entryParagraphs(md: string): RichText[] {
  const out: RichText[] = [];
  const unquoted = md
    .replace(/\r/g, '')
    .split('\n')
    .map((l) => l.replace(/^\s{0,3}>\s?/, ''))
    // A list item starts a paragraph of its own: items read one per line, not run together.
    .map((l) => (/^\s{0,3}[-*+]\s+\S/.test(l) ? `\n${l}` : l))
    .join('\n');
  for (const para of unquoted.split(/\n{2,}/)) {
    const text = para.trim();
    if (text === '') continue;
    const item = /^[-*+]\s+(\S[\s\S]*)$/.exec(text);
    const runs = item ? itemRuns(item[1]!.replace(/\s*\n\s*/g, ' ')) : (credit(text) ?? inlineRuns(text.replace(/\s*\n\s*/g, ' ')));
    if (runs.length > 0) out.push(runs);
  }
  return out;
}

/** A section worth showing: undefined when it is empty or only says nothing was recorded. */
export function entrySection(md: string | undefined): RichText[] | undefined {
  if (md === undefined) return undefined;
  const paragraphs = entryParagraphs(md);
  if (paragraphs.length === 0) return undefined;
  if (paragraphs.length === 1 && NOTHING.test(plainText(paragraphs[0]!).trim())) return undefined;
  return paragraphs;
}

/** Runs as plain text (a person by display name, else id): for one-line answers and tests. */
export function plainText(runs: readonly Inline[]): string {
  return runs
    .map((r) => (typeof r === 'string' ? r : 'code' in r ? r.code : 'strong' in r ? r.strong : 'person' in r ? personLabel(r.person) : r.link.label))
    .join('');
}
