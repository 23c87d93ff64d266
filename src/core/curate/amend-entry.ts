/**
 * Knowledge grows in place (issue 31 item 2, SPEC §12): a later, different fix or a cause edits
 * the trigger's Incident entry instead of being dropped. The edit is markdown in, markdown out:
 * a `## What has fixed it` list — one line per fix with who said it, when, and how often it
 * worked, ordered by the outcome ledger's counts (a fix that did not hold sinks) — and the
 * `## Cause` filled when it says nothing yet. Everything else in the file (a human's edits, its
 * frontmatter) is kept as it was. The edit is idempotent: applying the same change twice gives
 * the same file. Every word a person or a model wrote is neutralised before it is written.
 */
import type { FixOutcome } from '../ledger-events.js';
import { neutraliseLine, neutraliseMarkdown } from './neutralise-markdown.js';

/** The section the list lives in (its heading, as written). */
export const FIX_LIST_HEADING = 'What has fixed it';

/** Who wrote a cause, and when. */
export interface CauseChange {
  text: string;
  /** `from ann via Slack` for a person, `from a verified investigation` for a model's. */
  by: { name: string; via: string } | { model: string };
  at: string;
}

export interface EntryChange {
  /** The trigger's fixes with their counts (the ledger's tally); merged into the list. */
  fixes?: readonly FixOutcome[];
  cause?: CauseChange;
}

interface Item {
  key: string;
  /** Neutralised markdown of the fix, one line. */
  md: string;
  name: string;
  via: string;
  day: string;
  held: number;
  cameBack: number;
  pending: number;
  /** Index of first appearance: keeps the order stable on ties. */
  order: number;
}

const WJ = /\u2060/g;
const NOTHING = /^(?:_|\*)?(?:not recorded|unknown|none|n\/a|tbd|to fill in)\.?(?:_|\*)?$/i;

/** True when a section's text says nothing yet (empty, "Not recorded.", "TBD"…). */
export function saysNothing(text: string | undefined): boolean {
  const t = text?.trim() ?? '';
  return t === '' || NOTHING.test(t);
}
const COUNTS = /\s·\s(?:worked (\d+) of (\d+) times?(?:, (\d+) not graded yet)?|not graded yet(?: \((\d+)×\))?)$/;
const CREDIT = /\s—\sfrom\s@?\u2060?(\S.{0,79}?)\svia\s([A-Za-z][A-Za-z ]{0,39}?)\son\s(\d{4}-\d{2}-\d{2})$/;
const LINE_CREDIT = /^—\s+from\s+@?\u2060?(\S.{0,79}?)\s+via\s+([A-Za-z][A-Za-z ]{0,39}?)\s+on\s+(\d{4}-\d{2}-\d{2})/;

const day = (iso: string): string => (Number.isNaN(Date.parse(iso)) ? iso.slice(0, 10) : new Date(iso).toISOString().slice(0, 10));
const surface = (via: string): string => (via === 'cli' ? 'the CLI' : via.charAt(0).toUpperCase() + via.slice(1));

/** What two fixes are compared by: their words, without markup escapes, joiners, case or spacing. */
export function fixKey(md: string): string {
  return md
    .replace(WJ, '')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1')
    .replace(/&(?:lt|gt|amp);/g, (e) => ({ '&lt;': '<', '&gt;': '>', '&amp;': '&' })[e] ?? e)
    .replace(/[“”"'`.,;:!]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/** "worked 2 of 3 times", "worked 1 of 1 time, 1 not graded yet", "not graded yet". */
export function countsText(o: Pick<FixOutcome, 'held' | 'cameBack' | 'pending'>): string {
  const graded = o.held + o.cameBack;
  if (graded === 0) return 'not graded yet';
  return `worked ${o.held} of ${graded} time${graded === 1 ? '' : 's'}${o.pending > 0 ? `, ${o.pending} not graded yet` : ''}`;
}

/** A fix's line in the list: its words (one line, neutralised), its credit, its counts. */
function itemLine(i: Item): string {
  return `- ${i.md} — from ${i.name} via ${i.via} on ${i.day} · ${countsText(i)}`;
}

/** A list line read back: undefined when it is not one of ours (a human's own bullet is kept as is). */
function parseItem(line: string, order: number): Item | undefined {
  const m = /^- (.+)$/.exec(line.trim());
  if (!m) return undefined;
  let rest = m[1]!;
  const counts = COUNTS.exec(rest);
  let held = 0;
  let cameBack = 0;
  let pending = 0;
  if (counts) {
    if (counts[1] !== undefined) {
      held = Number(counts[1]);
      cameBack = Math.max(0, Number(counts[2]) - held);
      pending = Number(counts[3] ?? 0);
    }
    rest = rest.slice(0, counts.index);
  }
  const credit = CREDIT.exec(rest);
  if (!credit) return undefined;
  const md = rest.slice(0, credit.index).trim();
  return { key: fixKey(md), md, name: credit[1]!, via: credit[2]!, day: credit[3]!, held, cameBack, pending, order };
}

interface Section {
  heading: string;
  body: string[];
}

/** The file as its head (frontmatter, title, anything before the first `## `) and level-2 sections; fenced code is never split. */
function split(md: string): { head: string[]; sections: Section[] } {
  const lines = md.replace(/\r\n?/g, '\n').split('\n');
  const head: string[] = [];
  const sections: Section[] = [];
  let fence: string | undefined;
  let frontmatter = lines[0]?.trim() === '---';
  lines.forEach((line, i) => {
    if (frontmatter) {
      head.push(line);
      if (i > 0 && (line.trim() === '---' || line.trim() === '...')) frontmatter = false;
      return;
    }
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f) fence = fence === undefined ? f[1]![0] : line.trim().startsWith(fence) ? undefined : fence;
    const h = fence === undefined && !f ? /^##\s+(.+?)\s*#*\s*$/.exec(line) : null;
    if (h) sections.push({ heading: h[1]!, body: [] });
    else if (sections.length > 0) sections.at(-1)!.body.push(line);
    else head.push(line);
  });
  return { head, sections };
}

function join(head: string[], sections: Section[]): string {
  const trimmed = (l: string[]): string => l.join('\n').trim();
  const parts = [trimmed(head), ...sections.map((s) => `## ${s.heading}\n\n${trimmed(s.body)}`.trimEnd())];
  return `${parts.filter((p) => p !== '').join('\n\n')}\n`;
}

const find = (sections: Section[], name: string): Section | undefined => sections.find((s) => s.heading.trim().toLowerCase() === name.toLowerCase());

/** The entry's first fix, from its Resolution (a quote and a credit line, as fix-entry.ts writes them). */
function seedFromResolution(resolution: Section | undefined): Item | undefined {
  if (!resolution) return undefined;
  const quote = resolution.body.filter((l) => /^\s{0,3}>/.test(l)).map((l) => l.replace(/^\s{0,3}>\s?/, '').trim());
  const credit = resolution.body.map((l) => LINE_CREDIT.exec(l.trim())).find((m) => m !== null);
  const md = quote.filter((l) => l !== '').join(' ');
  if (!credit || md === '') return undefined;
  return { key: fixKey(md), md, name: credit[1]!, via: credit[2]!, day: credit[3]!, held: 0, cameBack: 0, pending: 0, order: -1 };
}

/** Most reliable first: held minus came back, then held, then the older. A fix that did not hold sinks. */
function rank(items: Item[]): Item[] {
  return [...items].sort((a, b) => b.held - b.cameBack - (a.held - a.cameBack) || b.held - a.held || a.order - b.order);
}

function mergeFixes(sections: Section[], fixes: readonly FixOutcome[]): void {
  let list = find(sections, FIX_LIST_HEADING);
  const items: Item[] = [];
  const others: string[] = [];
  if (list) {
    list.body.forEach((l, i) => {
      const item = parseItem(l, i);
      if (item) items.push(item);
      else if (l.trim() !== '') others.push(l);
    });
  } else {
    const seed = seedFromResolution(find(sections, 'resolution'));
    if (seed) items.push(seed);
  }
  let order = items.length;
  for (const f of fixes) {
    const md = neutraliseLine(f.text, 1000);
    const key = fixKey(md);
    if (key === '') continue;
    const had = items.find((i) => i.key === key);
    // The ledger's counts are the truth for a fix it knows; who said it first stays as written.
    if (had) Object.assign(had, { held: f.held, cameBack: f.cameBack, pending: f.pending });
    else
      items.push({
        key,
        md,
        name: neutraliseLine(f.name.replace(/^@+/, ''), 80).replace(/\s+/g, ' ').trim() || 'someone',
        via: surface(f.via),
        day: day(f.at),
        held: f.held,
        cameBack: f.cameBack,
        pending: f.pending,
        order: order++,
      });
  }
  if (items.length === 0) return;
  const body = [...rank(items).map(itemLine), ...(others.length > 0 ? ['', ...others] : [])];
  if (list) list.body = body;
  else {
    list = { heading: FIX_LIST_HEADING, body };
    // Right after the Resolution (before Tried and failed / Citations), where a reader looks for it.
    const at = sections.findIndex((s) => s.heading.trim().toLowerCase() === 'resolution');
    sections.splice(at >= 0 ? at + 1 : sections.length, 0, list);
  }
}

/** Writes the cause into the sections; false when it changes nothing (said already, or a model's beside a written cause). */
function mergeCause(sections: Section[], c: CauseChange): boolean {
  const text = neutraliseMarkdown(c.text.trim());
  if (fixKey(text) === '') return false;
  const by =
    'model' in c.by
      ? `— from a verified investigation${c.by.model ? ` (${neutraliseLine(c.by.model, 120)})` : ''} on ${day(c.at)}`
      : `— from ${neutraliseLine(c.by.name.replace(/^@+/, ''), 80).replace(/\s+/g, ' ').trim()} via ${surface(c.by.via)} on ${day(c.at)}`;
  let cause = find(sections, 'cause');
  if (!cause) {
    cause = { heading: 'Cause', body: [] };
    const at = sections.findIndex((s) => s.heading.trim().toLowerCase() === 'resolution');
    sections.splice(at >= 0 ? at : sections.length, 0, cause);
  }
  const now = cause.body.join('\n').trim();
  if (fixKey(now).includes(fixKey(text))) return false;
  if (saysNothing(now)) cause.body = [text, '', by];
  // A model's cause never overrides what is written; a person's is added beside it, credited.
  else if (!('model' in c.by)) cause.body = [...cause.body, '', `Also said: ${text}`, '', by];
  else return false;
  return true;
}

/**
 * `markdown` with `change` applied: the fixes merged into the `## What has fixed it` list (new
 * ones added, counts of known ones updated, ranked), the cause written into an empty `## Cause`
 * (a person's cause beside one already written). Undefined when the file has no frontmatter —
 * not an entry this can edit safely.
 */
export function amendEntry(markdown: string, change: EntryChange): string | undefined {
  if (
    markdown
      .replace(/^\uFEFF/, '')
      .split(/\r?\n/, 1)[0]
      ?.trim() !== '---'
  )
    return undefined;
  const { head, sections } = split(markdown.replace(/^\uFEFF/, ''));
  const fixes = change.fixes !== undefined && change.fixes.length > 0;
  if (fixes) mergeFixes(sections, change.fixes!);
  const caused = change.cause ? mergeCause(sections, change.cause) : false;
  // Nothing to add: the file as it was, not re-laid out (no edit, no PR).
  if (!fixes && !caused) return markdown;
  return join(head, sections);
}

/** True when the entry's Cause says nothing yet (absent, empty or "Not recorded."). */
export function causeMissing(markdown: string): boolean {
  const cause = find(split(markdown).sections, 'cause');
  const now = cause?.body.join('\n').trim() ?? '';
  return saysNothing(now);
}
