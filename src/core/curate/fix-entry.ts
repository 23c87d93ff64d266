/**
 * A human fix as an Incident entry draft (issue 21 item 4, SPEC §10 "Human fixes"): `resource`
 * = the incident's identity, the title from the alert and the fix, `## Symptom` from the alert,
 * `## Cause` from a `cause:` note or the Finding ("not recorded" otherwise), `## Resolution`
 * quoting the human, `## Tried and failed`, provenance — and never `last_validated`. Every word
 * a person or an alert wrote is neutralised before it reaches the entry, the PR title or body.
 */
import { stringify } from 'yaml';
import type { FixMaterial } from '../ledger-events.js';
import { personFromKey, personLabel } from '../people.js';
import { draftEntryPaths, oneLine, type DraftEntry } from './kb-entry.js';
import { marker } from './markers.js';
import { neutraliseLine, neutraliseMarkdown, neutraliseTitle, quoteBlock } from './neutralise-markdown.js';

const day = (iso: string): string => (Number.isNaN(Date.parse(iso)) ? iso.slice(0, 10) : new Date(iso).toISOString().slice(0, 10));
/**
 * "from Ann Example via Slack on 2026-12-01": the person's display name (looked up before the
 * draft was written, core/people.ts), else their id — no `@`, which GitHub would link to whoever
 * has that login; neutralised like every word a person wrote.
 */
export function fixProvenance(f: FixMaterial): string {
  const via = f.via === 'cli' ? 'the CLI' : f.via.charAt(0).toUpperCase() + f.via.slice(1);
  const p = personFromKey(f.user, f.via);
  return `from ${neutraliseLine(personLabel({ ...p, name: f.name }), 80)} via ${neutraliseLine(via, 40)} on ${day(f.at)}`;
}

/** The entry's title: the alert, the workload, and the fix's first line. */
export function fixTitle(f: FixMaterial): string {
  const first = f.text.split('\n').find((l) => l.trim() !== '') ?? 'fixed';
  return oneLine(neutraliseTitle(`${f.alert.alertname}${f.alert.resource ? ` on ${f.alert.resource}` : ''}: ${first}`), 120);
}

/** The Incident entry (a Playbook when the incident names no resource) for a human fix. */
export function renderFixEntry(f: FixMaterial, dupFingerprint: string, key: string): DraftEntry {
  const type = f.alert.resource ? 'Incident' : 'Playbook';
  const title = fixTitle(f);
  const front: Record<string, unknown> = {
    type,
    title,
    description: oneLine(neutraliseTitle(`What fixed ${f.alert.alertname}${f.alert.resource ? ` on ${f.alert.resource}` : ''}, as a person said it`), 400),
    ...(f.alert.resource ? { resource: f.alert.resource } : {}),
    tags: [...new Set([f.alert.alertname.toLowerCase(), 'reprise-draft', 'human-fix'])],
    timestamp: day(f.at),
    ...(/^[0-9a-f]{8,64}$/.test(dupFingerprint) ? { fingerprint: dupFingerprint } : {}),
    alerts: [f.alert.alertname],
  };
  const symptom = [f.alert.title, f.alert.message ?? ''].map((s) => s.trim()).filter((s, i, all) => s !== '' && all.indexOf(s) === i);
  const sections = [
    `# ${neutraliseMarkdown(title)}`,
    '## Symptom',
    neutraliseMarkdown(symptom.join('\n\n') || f.alert.alertname),
    '## Cause',
    f.cause ? neutraliseMarkdown(f.cause) : 'Not recorded.',
    '## Resolution',
    // The person's words, then who said them: one blank line between, as the sections are.
    `${quoteBlock(f.text)}\n\n— ${fixProvenance(f)}`,
  ];
  if (f.triedAndFailed.length > 0) sections.push('## Tried and failed', f.triedAndFailed.map((t) => `- ${neutraliseLine(t, 1000)}`).join('\n'));
  sections.push('## Citations', `- Said in the incident thread ${fixProvenance(f)}; drafted by Reprise, no model involved. A human reviews and merges.`);
  const content = `---\n${stringify(front, { lineWidth: 0 }).trimEnd()}\n---\n${sections.join('\n\n')}\n`;
  return { type, title, content, ...draftEntryPaths(type, title, key) };
}

/** The PR description: markers, provenance, the fix quoted, where the entry is. */
export function fixPrBody(f: FixMaterial, ctx: { id: string; dupFingerprint: string; triggerKey: string; path: string }): string {
  return [
    ...(/^[0-9a-f]{8,64}$/.test(ctx.dupFingerprint) ? [marker('dup', ctx.dupFingerprint)] : []),
    marker('fix', ctx.id),
    `What fixed it, ${fixProvenance(f)}:`,
    '',
    quoteBlock(f.text),
    '',
    `- **Alert:** ${neutraliseLine(f.alert.alertname)}${f.alert.where ? ` on ${neutraliseLine(f.alert.where)}` : ''}`,
    `- **Cause:** ${f.cause ? neutraliseLine(f.cause) : 'not recorded'}`,
    ...f.triedAndFailed.map((t) => `- **Tried and failed:** ${neutraliseLine(t)}`),
    `- **Trigger:** ${neutraliseLine(ctx.triggerKey)}`,
    `- **Entry file:** ${neutraliseLine(ctx.path)}`,
    '',
    'Drafted by Reprise from a person’s words in the incident thread — no model in the loop. A human reviews and merges; the bot never sets `last_validated`.',
  ].join('\n');
}

/** A second fix for the same trigger, as a comment on the open draft. */
export function fixComment(f: FixMaterial, id: string): string {
  return [marker('fix', id), `Another fix for this trigger, ${fixProvenance(f)}:`, '', quoteBlock(f.text)].join('\n');
}
