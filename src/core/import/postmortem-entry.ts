/**
 * A postmortem as an Incident entry draft (SPEC §5 format, §12 "Importing what a team knows"):
 * `resource` the workload it names (a Playbook over its `alerts` when it names none), the
 * Symptom from its summary and impact, the Cause from its root cause (or trigger), the
 * Resolution from its resolution or mitigation — the team's own words, neutralised so nothing
 * in them pings, links or opens HTML on the forge — and a citation of the file it came from.
 * Never `last_validated`: a human merging the PR is what validates it.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { draftEntryPaths, oneLine, type DraftEntry } from '../curate/kb-entry.js';
import { neutraliseLine, neutraliseMarkdown, neutraliseTitle } from '../curate/neutralise-markdown.js';
import { stripUnsafe } from '../render/escape-text.js';
import { tokenize } from '../tokenize.js';
import type { PostmortemDoc } from './read-postmortem.js';

export interface PostmortemDraft {
  doc: PostmortemDoc;
  entry: DraftEntry;
  /** DupFingerprint (SPEC §10, no trigger key): sha256(resource + "|" + sorted significant tokens of the cause). */
  fingerprint: string;
  resource?: string;
  alerts: string[];
}

const MAX_SECTION = 8000;
const cut = (t: string): string => (t.length > MAX_SECTION ? `${t.slice(0, MAX_SECTION - 1)}…` : t);

/** A sub-heading inside a section (`### 4.1 Steps`) is a line of text in the entry: the entry's own sections are the only headings. */
const flatten = (t: string): string => t.replace(/^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$/gm, '$1');

/**
 * A team's markdown made inert the way notes are (no pings, links, HTML, headings), except that
 * its code stays code: inside a code span or fence GitHub renders nothing, so `journalctl
 * --vacuum-size=2G` keeps its backticks instead of showing escapes.
 */
export function neutraliseKeepingCode(text: string): string {
  const out: string[] = [];
  const re = /^([ \t]{0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\2[ \t]*$|(`+)(?!`)[^\n]*?[^`]\3(?!`)/gm;
  let last = 0;
  for (const m of text.matchAll(re)) {
    out.push(neutraliseMarkdown(text.slice(last, m.index)), stripUnsafe(m[0]));
    last = m.index + m[0].length;
  }
  out.push(neutraliseMarkdown(text.slice(last)));
  return out.join('');
}

/** The first line a person would read as the fix (no heading marks, no list bullet). */
export function firstLine(text: string): string {
  const line = flatten(text)
    .split('\n')
    .map((l) => l.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '').trim())
    .find((l) => l !== '' && !/[:：]$/.test(l));
  return line ?? text.trim().split('\n')[0] ?? '';
}

/**
 * The fingerprint of what the postmortem teaches: the workload and the cause's words, so the same
 * incident written up twice (or re-exported) coalesces; without a cause, the resolution's words.
 */
export function postmortemFingerprint(doc: PostmortemDoc): string {
  const subject = doc.resources[0] ?? doc.alerts.map((a) => a.toLowerCase()).join(',');
  const basis = doc.sections.cause ?? doc.sections.trigger ?? doc.sections.resolution ?? doc.title;
  const tokens = [...new Set(tokenize(basis))].sort().slice(0, 40).join(' ');
  return createHash('sha256').update(`${subject}|${tokens}`).digest('hex');
}

/** `source` names where the postmortem lives: a URL when the import read one, else nothing. */
export function renderPostmortemEntry(doc: PostmortemDoc, opts: { sourceUrl?: string } = {}): PostmortemDraft {
  const fingerprint = postmortemFingerprint(doc);
  const resource = doc.resources[0];
  const type = resource ? 'Incident' : 'Playbook';
  const subject = `${doc.alerts[0] ?? 'Postmortem'}${resource ? ` on ${resource}` : ''}`;
  const own = doc.title.replace(/^(post-?mortem|incident report|incident review|incident|rca)\s*[:—–-]\s*/i, '') || doc.title;
  const title = oneLine(neutraliseTitle(own.toLowerCase().startsWith(subject.toLowerCase()) ? own : `${subject}: ${own}`), 120);
  const s = doc.sections;
  const front: Record<string, unknown> = {
    type,
    title,
    description: oneLine(neutraliseTitle(`Imported from the postmortem ${doc.file}`), 400),
    ...(resource ? { resource } : {}),
    tags: [...new Set([...doc.alerts.map((a) => a.toLowerCase()), 'postmortem', 'imported'])],
    ...(doc.date ? { timestamp: doc.date } : {}),
    fingerprint,
    ...(doc.alerts.length > 0 ? { alerts: doc.alerts } : {}),
    ...(opts.sourceUrl && /^https?:\/\//.test(opts.sourceUrl) ? { source: opts.sourceUrl } : {}),
  };
  const symptom = [s.summary, s.impact ? `Impact: ${s.impact}` : undefined, s.detection ? `Detected: ${s.detection}` : undefined].filter(
    (x): x is string => x !== undefined,
  );
  const cause = [s.cause, s.trigger && s.trigger !== s.cause ? `Trigger: ${s.trigger}` : undefined].filter((x): x is string => x !== undefined);
  const sections = [
    `# ${neutraliseMarkdown(title)}`,
    '## Symptom',
    neutraliseKeepingCode(flatten(cut(symptom.join('\n\n') || doc.title))),
    '## Cause',
    cause.length > 0 ? neutraliseKeepingCode(flatten(cut(cause.join('\n\n')))) : 'Not recorded.',
    '## Resolution',
    neutraliseKeepingCode(flatten(cut(s.resolution ?? ''))),
  ];
  // Follow-ups are context for the reviewer, not steps recall should show as the fix.
  if (s.actions) sections.push('## Action items', neutraliseKeepingCode(flatten(cut(s.actions))));
  sections.push(
    '## Citations',
    `- Imported from the postmortem ${neutraliseLine(doc.file, 200)}${doc.date ? ` (${doc.date})` : ''} by \`reprise import postmortems\`, no model involved; content sha256 ${doc.contentHash.slice(0, 12)}. A human reviews and merges.`,
  );
  const content = `---\n${stringify(front, { lineWidth: 0 }).trimEnd()}\n---\n${sections.join('\n\n')}\n`;
  const paths = draftEntryPaths(type, title, fingerprint);
  return { doc, entry: { type, title, content, ...paths }, fingerprint, ...(resource ? { resource } : {}), alerts: doc.alerts };
}
