/**
 * What curation writes on the forge: the draft PR's description (provenance, the finding, a
 * "Related knowledge" section, the hidden DupFingerprint marker), the "seen again" comment,
 * and a note's comment or Concept PR description. Every untrusted string goes through
 * neutraliseMarkdown; markers are added only here.
 */
import type { DraftMaterial } from '../ledger-events.js';
import { marker } from './markers.js';
import { neutraliseLine, quoteBlock } from './neutralise-markdown.js';

export interface Neighbour {
  entry: string;
  title: string;
  score: number;
}

const n = neutraliseLine;

function provenance(d: DraftMaterial): string[] {
  const out: string[] = [];
  if (d.changeRef) out.push(`- **Causing change:** ${n(d.changeRef)}`);
  for (const a of d.actions.slice(0, 3)) out.push(`- **Fixing action:** ${n(a.action)}${a.reversible ? '' : ' (not reversible)'}`);
  return out;
}

/** The body of a `KB: <title>` pull request. */
export function findingPrBody(
  d: DraftMaterial,
  ctx: { dupFingerprint: string; openId: string; triggerKey: string; path: string; neighbours: readonly Neighbour[] },
): string {
  const top = d.causes[0];
  const lines = [
    marker('dup', ctx.dupFingerprint),
    marker('seen', ctx.openId),
    `Drafted by Reprise from a verified investigation. A human reviews and merges; the bot never sets \`last_validated\`.`,
    '',
    '### Finding',
    quoteBlock(d.summary),
    '',
    `- **Alert:** ${n(d.alertname)} on ${n(d.where)}`,
    `- **Verdict:** ${n(d.verdict)} · confidence ${d.confidence.toFixed(2)} · verified ✓`,
    ...(top ? [`- **Cause:** ${n(top.cause)}`, ...top.evidence.slice(0, 4).map((e) => `  - evidence: ${n(e)}`)] : []),
    ...provenance(d),
    `- **Investigator:** ${n(d.investigator)}`,
    `- **Trigger:** ${n(ctx.triggerKey)}`,
    `- **Entry file:** ${n(ctx.path)}`,
    '',
    '### Related knowledge',
    ...(ctx.neighbours.length > 0
      ? ctx.neighbours.map((x) => `- ${n(x.entry)} — ${n(x.title)} (score ${x.score.toFixed(1)})`)
      : ['- nothing similar in the catalog']),
    ...(d.recurrence ? [`- ${n(d.recurrence)}`] : []),
  ];
  return lines.join('\n');
}

/** The comment a second investigation of the same finding leaves on the open draft. */
export function seenAgainComment(d: DraftMaterial, openId: string): string {
  const top = d.causes[0];
  return [
    marker('seen', openId),
    `Seen again: a new investigation of this trigger reached the same finding (confidence ${d.confidence.toFixed(2)}).`,
    '',
    quoteBlock(d.summary),
    ...(top ? ['', `- **Cause:** ${n(top.cause)}`] : []),
    ...provenance(d),
    ...(d.recurrence ? [`- ${n(d.recurrence)}`] : []),
  ].join('\n');
}

export interface NoteText {
  id: string;
  name: string;
  via: string;
  text: string;
  finding?: string;
}

const who = (note: NoteText): string => `${n(note.name)} via ${n(note.via)}`;

/** A note as a comment on the finding's open KB pull request. */
export function noteComment(note: NoteText): string {
  return [marker('note', note.id), `Operator note from ${who(note)}:`, '', quoteBlock(note.text)].join('\n');
}

/** The description of a Concept PR holding a note: provenance first, then the note quoted. */
export function notePrBody(note: NoteText, ctx: { dupFingerprint: string; triggerKey: string; path: string }): string {
  return [
    marker('note', note.id),
    ...(/^[0-9a-f]{8,64}$/.test(ctx.dupFingerprint) ? [marker('notes', ctx.dupFingerprint)] : []),
    `Operator knowledge from ${who(note)}${note.finding ? `, on the finding "${n(note.finding)}"` : ''}:`,
    '',
    quoteBlock(note.text),
    '',
    `- **Trigger:** ${n(ctx.triggerKey)}`,
    `- **Entry file:** ${n(ctx.path)}`,
    '',
    'Filed by Reprise from a chat thread; notes are kept as knowledge, never as evidence. A human reviews and merges.',
  ].join('\n');
}
