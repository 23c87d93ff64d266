/**
 * A drafted catalog entry in the SPEC §5 format: YAML frontmatter (type, title, description,
 * resource, tags, timestamp, fingerprint, alerts — never `last_validated`, which claims a
 * human's confirmation) and the sections recall shows. Model prose is kept as text but may not
 * open sections of its own.
 */
import { stringify } from 'yaml';
import type { DraftMaterial } from '../ledger-events.js';
import { neutraliseTitle } from './neutralise-markdown.js';

export interface DraftEntry {
  type: 'Incident' | 'Playbook' | 'Concept';
  /** `incidents/<slug>-<fp8>.md` */
  path: string;
  /** `reprise/kb/<slug>-<fp8>` */
  branch: string;
  title: string;
  content: string;
}

const MAX_TITLE_BYTES = 120;

/** Lower-case words joined by dashes, at most 48 characters; `entry` when nothing is left. */
export function slugify(text: string): string {
  const s = text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return s || 'entry';
}

/** One line of at most `maxBytes` UTF-8 bytes, cut on a character boundary. */
export function oneLine(text: string, maxBytes = MAX_TITLE_BYTES): string {
  let t = text.replace(/\s+/g, ' ').trim();
  while (Buffer.byteLength(t) > maxBytes) t = `${[...t].slice(0, -2).join('')}…`;
  return t;
}

/** Prose as body text: no control characters, no line that would start a heading or end the frontmatter. */
export function bodyText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g, '')
    .replace(/^(\s*)(#|---)/gm, '$1\\$2')
    .trim();
}

const bullet = (t: string): string => `- ${bodyText(t).replace(/\n/g, '\n  ')}`;

export function draftEntryPaths(type: DraftEntry['type'], title: string, key: string): { path: string; branch: string } {
  const name = `${slugify(title)}-${key.slice(0, 8)}`;
  return { path: `${type.toLowerCase()}s/${name}.md`, branch: `reprise/kb/${name}` };
}

/** The Incident entry (a Playbook when the incident names no resource) for a Finding. */
export function renderFindingEntry(d: DraftMaterial, dupFingerprint: string, now: Date): DraftEntry {
  const type = d.resource ? 'Incident' : 'Playbook';
  const title = oneLine(`${d.alertname}${d.resource ? ` on ${d.resource}` : ''}: ${d.causes[0]?.cause ?? d.summary}`);
  const front: Record<string, unknown> = {
    type,
    title,
    description: oneLine(d.summary, 400),
    ...(d.resource ? { resource: d.resource } : {}),
    tags: [...new Set([d.alertname.toLowerCase(), 'reprise-draft'])],
    timestamp: now.toISOString().slice(0, 10),
    fingerprint: dupFingerprint,
    alerts: [d.alertname],
  };
  const top = d.causes[0];
  const sections: string[] = [`# ${bodyText(title)}`, '## Symptom', bodyText(d.symptom || d.summary)];
  sections.push('## Cause', bodyText(top?.cause ?? d.summary));
  if (top && top.evidence.length > 0) sections.push(['Evidence:', ...top.evidence.map(bullet)].join('\n'));
  sections.push(
    '## Resolution',
    d.actions.length > 0
      ? d.actions.map((a) => bullet(`${a.action}${a.reversible ? '' : ' (not reversible)'}`)).join('\n')
      : 'No fixing action was established yet; the cause above is what was found.',
  );
  const investigate = [
    ...d.causes.slice(1).map((c) => bullet(`Also possible: ${c.cause}`)),
    ...d.ruledOut.map((r) => bullet(`Ruled out: ${r.cause} — ${r.reason}`)),
  ];
  if (investigate.length > 0) sections.push('## Investigate', investigate.join('\n'));
  const citations = [
    ...(d.changeRef ? [bullet(`Causing change: ${d.changeRef}`)] : []),
    bullet(`Drafted by Reprise from a verified investigation (${d.investigator}), confidence ${d.confidence.toFixed(2)}.`),
  ];
  sections.push('## Citations', citations.join('\n'));
  const content = `---\n${stringify(front, { lineWidth: 0 }).trimEnd()}\n---\n${sections.join('\n\n')}\n`;
  return { type, title, content, ...draftEntryPaths(type, title, dupFingerprint) };
}

/** A Concept entry holding an operator note (SPEC §9). */
export function renderNoteEntry(
  n: { name: string; via: string; text: string; finding?: string },
  subject: { alertname: string; resource?: string },
  key: string,
  now: Date,
): DraftEntry {
  const firstLine = n.text.split('\n').find((l) => l.trim() !== '') ?? 'operator note';
  // A note's words make the title (and the PR title): neutralised so `@org/team` or `#12` pings nobody.
  const title = oneLine(neutraliseTitle(`${subject.alertname}${subject.resource ? ` on ${subject.resource}` : ''}: ${firstLine}`));
  const front = {
    type: 'Concept',
    title,
    description: oneLine(`Operator knowledge from ${n.name} via ${n.via}`, 400),
    ...(subject.resource ? { resource: subject.resource } : {}),
    tags: [subject.alertname.toLowerCase(), 'operator-note'],
    timestamp: now.toISOString().slice(0, 10),
    alerts: [subject.alertname],
  };
  const body = [`# ${bodyText(title)}`, bodyText(n.text), ...(n.finding ? ['## Context', bodyText(`Written on the finding: ${n.finding}`)] : [])];
  const content = `---\n${stringify(front, { lineWidth: 0 }).trimEnd()}\n---\n${body.join('\n\n')}\n`;
  return { type: 'Concept', title, content, ...draftEntryPaths('Concept', title, key) };
}
