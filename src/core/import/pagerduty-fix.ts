/**
 * What fixed a resolved PagerDuty incident, in the responders' own words (issue 31 item 3): a
 * note that says it (`fixed: …`, `fix: …`, `resolution: …`, `resolved by …`, at its start or
 * beginning one of its lines), else the message of its resolve. Notes arrive as whatever the
 * sender wrote — HTML from an integration, Slack's `<@U…>` mentions, markdown emphasis, a
 * pasted log of megabytes — so they are read as plain text first, with a bound on how much of
 * a note is ever looked at. The text returned is plain: it is neutralised where it is written
 * (the entry, the PR), as every person's words are.
 */
import { stripUnsafe } from '../render/escape-text.js';

/** How much of one note is read at all: the rest of a pasted log says nothing more about the fix. */
export const MAX_NOTE_CHARS = 64 * 1024;
/** The longest fix kept (the live `fixed:` path's bound). */
export const MAX_FIX_CHARS = 8 * 1024;

export interface PagerDutyNote {
  content: string;
  createdAt?: string;
  user?: { id?: string; name?: string };
}

/** The incident's resolve: the `resolve_log_entry`'s message, or a resolve reason PagerDuty gave as text. */
export interface PagerDutyResolve {
  message?: string;
  at?: string;
  by?: { id?: string; name?: string };
}

export interface ExtractedFix {
  text: string;
  /** Where it was said: a note, or the resolve. */
  from: 'note' | 'resolve';
  at?: string;
  by?: { id?: string; name?: string };
  /** A `cause:` / `root cause:` note, when one was written. */
  cause?: { text: string; at?: string; by?: { id?: string; name?: string } };
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8}|#39);/gi, (whole, name: string) => {
    const n = name.toLowerCase();
    if (n.startsWith('#x') || /^#\d/.test(n)) {
      const cp = n.startsWith('#x') ? parseInt(n.slice(2), 16) : parseInt(n.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
    }
    return ENTITIES[n] ?? whole;
  });
}

/**
 * A note as the plain text a person reads: Slack's `<@U1|ann>` → `@ann`, `<!here>` → `@here`,
 * `<url|label>` → `label (url)`; HTML's blocks and `<br>` → line breaks, other tags dropped,
 * `<script>`/`<style>` dropped with their content, entities decoded; control and invisible
 * characters removed. Only the first {@link MAX_NOTE_CHARS} characters are read.
 */
export function notePlainText(raw: string): string {
  let t = raw.length > MAX_NOTE_CHARS ? raw.slice(0, MAX_NOTE_CHARS) : raw;
  t = t.replace(/\r\n?/g, '\n');
  t = t.replace(/<!--[\s\S]*?-->/g, '');
  t = t.replace(/<([@#])([A-Z0-9][\w.-]{0,99})(?:\|([^<>\n]{1,200}))?>/g, (_w, sigil: string, id: string, label?: string) => `${sigil}${label ?? id}`);
  t = t.replace(
    /<!(here|channel|everyone|subteam\^[A-Z0-9]{1,30})(?:\|([^<>\n]{1,200}))?>/g,
    (_w, id: string, label?: string) => `@${(label ?? id).replace(/^subteam\^/, '')}`,
  );
  t = t.replace(/<((?:https?|mailto):[^<>|\s]{1,2000})\|([^<>\n]{1,200})>/g, '$2 ($1)');
  t = t.replace(/<(script|style)\b[^>]{0,1000}>[\s\S]*?<\/\1\s*>/gi, '');
  t = t.replace(/<!doctype[^<>]{0,1000}>/gi, '');
  t = t.replace(/<br\s*\/?>/gi, '\n');
  t = t.replace(/<\/?(?:p|div|li|ul|ol|tr|h[1-6]|pre|blockquote)\b[^<>]{0,1000}>/gi, '\n');
  t = t.replace(/<\/?[a-z][a-z0-9-]{0,30}\b[^<>]{0,1000}>/gi, '');
  t = stripUnsafe(decodeEntities(t));
  return t
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Where a keyword may stand: at a line's start after the markup a line may open with (`**Fixed:**`,
 * `> fix:`, `- resolution:`, `## Fix`), or after a sentence ("Restarted twice. Fix: …").
 */
const LEAD = String.raw`(?:^[ \t]*(?:[>#*_~\-+•]+[ \t]*)*|(?<=[.;!?)][ \t]{1,10})[*_]*)`;
const FIX_WORD = String.raw`(?:fixed|fix|resolution|resolved[ \t]+by|what[ \t]+fixed[ \t]+it|mitigation|mitigated[ \t]+by)`;
/** A keyword with its colon (and the markup that may close around it), on any line. */
const FIX_COLON = new RegExp(`${LEAD}${FIX_WORD}[ \\t]*[*_]*[ \\t]*[:：][*_]*[ \\t]*`, 'im');
/** At the note's very start the colon may be left out: "Fixed by bumping the heap", "resolved by restarting…". */
const FIX_START = new RegExp(`^(?:[>#*_~\\-+•]+[ \\t]*)*(?:fixed(?:[ \\t]+it)?(?:[ \\t]+by)?|resolved[ \\t]+by|mitigated[ \\t]+by)\\b[*_]*[ \\t]+`, 'i');
const CAUSE_COLON = new RegExp(`${LEAD}(?:root[ \\t]+cause|cause)[ \\t]*[*_]*[ \\t]*[:：][*_]*[ \\t]*`, 'im');

/** What says nothing: "fix: TBD", "resolution: n/a", "fixed: ?". */
const NOTHING = /^(?:tbd|tbc|todo|n\/?a|none|unknown|\?+|-+|…|\.\.\.|not (?:yet )?(?:known|fixed|sure)|pending|to be (?:determined|confirmed))\.?$/i;
/** A resolve message that names only how it was resolved, not what fixed it. */
const BOILERPLATE =
  /^(?:(?:incident\s+)?(?:auto[- ]?)?resolved\s*(?:(?:by|through|via|from|using|on)\s+(?:the\s+|an?\s+)?(?:website|web(?:\s*ui)?|ui|api|rest\s+api|events?\s+api(?:\s+v\d)?|integration|mobile(?:\s+app)?|app|e-?mail|phone|sms|slack|teams|timeout|time-?out|auto-?resolve|system|pagerduty|escalation(?:\s+policy)?|service|monitoring\s+tool|alert)\b.*)?|auto[- ]?resolved.*|resolved)\.?$/i;
/** "resolved by" followed by a name only (a person, not what they did): 1–3 capitalised words. */
const BY_NAME = /^(?:@\S+|[A-Z][\p{L}'’.-]*(?:\s+[A-Z][\p{L}'’.-]*){0,2})\.?$/u;

function cutFix(text: string): string {
  const t = text.trim();
  return t.length > MAX_FIX_CHARS ? `${t.slice(0, MAX_FIX_CHARS - 1)}…` : t;
}

/** The paragraph after a keyword: up to the first blank line, its own closing markup (`**`) dropped. */
function paragraphAfter(text: string, at: number): string {
  const rest = text.slice(at);
  const end = rest.search(/\n[ \t]*\n/);
  return (end >= 0 ? rest.slice(0, end) : rest).replace(/^[*_]+|[*_]+$/g, '').trim();
}

const says = (t: string): boolean => t !== '' && !NOTHING.test(t) && /[\p{L}\p{N}]/u.test(t);

/**
 * The fix a note states, in plain text; undefined when it states none. The keyword must open the
 * note or one of its lines ("no fix yet" in passing is not a fix); "resolved by Ann" names a
 * person, not a fix.
 */
export function fixInNote(content: string): string | undefined {
  const text = notePlainText(content);
  const start = FIX_START.exec(text);
  const colon = FIX_COLON.exec(text);
  const m = start && (!colon || start.index <= colon.index) ? start : colon;
  if (!m) return undefined;
  const fix = paragraphAfter(text, m.index + m[0].length);
  if (!says(fix)) return undefined;
  if (/\bby\b/i.test(m[0]) && BY_NAME.test(fix) && !/ing\b/i.test(fix.split(/\s/, 1)[0] ?? '')) return undefined;
  return cutFix(fix);
}

/** The cause a note states (`cause: …`, `root cause: …`), in plain text. */
export function causeInNote(content: string): string | undefined {
  const text = notePlainText(content);
  const m = CAUSE_COLON.exec(text);
  if (!m) return undefined;
  const cause = paragraphAfter(text, m.index + m[0].length);
  return says(cause) ? cutFix(cause) : undefined;
}

/** The fix a resolve message states: its text unless it only says how the incident was resolved. */
export function fixInResolve(message: string): string | undefined {
  const text = notePlainText(message);
  if (text === '' || BOILERPLATE.test(text.replace(/\s+/g, ' '))) return undefined;
  const keyed = fixInNote(text);
  if (keyed) return keyed;
  const bare = text.replace(/^(?:resolved|resolution)\s*[:：-]\s*/i, '').trim();
  return says(bare) && !BOILERPLATE.test(bare) ? cutFix(bare) : undefined;
}

const time = (s: string | undefined): number => {
  const t = s ? Date.parse(s) : NaN;
  return Number.isNaN(t) ? 0 : t;
};

/**
 * What fixed the incident: the newest note that states a fix (the last word said), else its
 * resolve message; with the newest `cause:` note. Undefined when nothing says what fixed it.
 */
export function extractFix(notes: readonly PagerDutyNote[], resolve?: PagerDutyResolve): ExtractedFix | undefined {
  const ordered = [...notes].sort((a, b) => time(a.createdAt) - time(b.createdAt));
  let fix: ExtractedFix | undefined;
  let cause: ExtractedFix['cause'];
  for (const n of ordered) {
    const f = fixInNote(n.content);
    if (f) fix = { text: f, from: 'note', ...(n.createdAt ? { at: n.createdAt } : {}), ...(n.user ? { by: n.user } : {}) };
    const c = causeInNote(n.content);
    if (c) cause = { text: c, ...(n.createdAt ? { at: n.createdAt } : {}), ...(n.user ? { by: n.user } : {}) };
  }
  if (!fix && resolve?.message) {
    const f = fixInResolve(resolve.message);
    if (f) fix = { text: f, from: 'resolve', ...(resolve.at ? { at: resolve.at } : {}), ...(resolve.by ? { by: resolve.by } : {}) };
  }
  if (!fix) return undefined;
  // A note that is only a cause is not also the fix's own words.
  return cause && cause.text !== fix.text ? { ...fix, cause } : fix;
}
