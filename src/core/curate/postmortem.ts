/**
 * A postmortem draft of one incident (issue 21 item 5, `@reprise postmortem` in its thread):
 * what the alert said, when it opened and resolved, the cause, what fixed it and what was tried,
 * from the ledger only — no model. Filed under `postmortems/`, a folder the catalog loader never
 * indexes (a postmortem is never recalled as an answer). Every word a person or an alert wrote
 * is neutralised.
 */
import { elapsedMs, spanEnd, spanStart } from '../chat/incident-span.js';
import { shortDuration } from '../duration.js';
import type { PostmortemMaterial } from '../ledger-events.js';
import { personFromKey, personLabel, type PeopleNames } from '../people.js';
import { oneLine, slugify } from './kb-entry.js';
import { marker } from './markers.js';
import { neutraliseLine, neutraliseMarkdown, neutraliseTitle, quoteBlock } from './neutralise-markdown.js';

export interface PostmortemDraft {
  title: string;
  path: string;
  branch: string;
  content: string;
}

const day = (iso: string | undefined): string => (iso && !Number.isNaN(Date.parse(iso)) ? new Date(iso).toISOString().slice(0, 10) : 'unknown');
const when = (iso: string | undefined): string =>
  iso && !Number.isNaN(Date.parse(iso)) ? `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'unknown';
/** A person as a postmortem names them: their display name (looked up before it was drafted), else their id — never an `@` GitHub would link. */
const namer =
  (names: PeopleNames | undefined) =>
  (user: string): string => {
    const p = personFromKey(user);
    const name = names?.nameOf(p);
    return neutraliseLine(personLabel(name ? { ...p, name } : p), 80);
  };

export function renderPostmortem(m: PostmortemMaterial, key: string, names?: PeopleNames): PostmortemDraft {
  const who = namer(names);
  const a = m.alert;
  const title = oneLine(neutraliseTitle(`Postmortem: ${a.alertname}${a.resource ? ` on ${a.resource}` : ''} (${day(m.openedAt)})`), 160);
  const name = `${day(m.openedAt)}-${slugify(`${a.alertname} ${a.resource ?? ''}`)}-${key.slice(0, 8)}`;
  // Times and durations as the alert dates them (its startsAt and endsAt), as chat and /ui say them.
  const fired = spanStart({ startsAt: m.startsAt, openedAt: m.openedAt });
  const ended = m.resolvedAt ? spanEnd({ endsAt: m.endsAt, resolvedAt: m.resolvedAt }) : undefined;
  const since = (at: string | undefined): string => {
    const ms = elapsedMs(fired, at);
    return ms === undefined ? '' : ` after ${shortDuration(ms)}`;
  };
  const posted = m.openedAt && fired && Date.parse(m.openedAt) - Date.parse(fired) >= 60_000 ? m.openedAt : undefined;
  const timeline = [
    { at: fired, line: `fired: ${neutraliseLine(a.title)}` },
    ...(posted ? [{ at: posted, line: `Reprise posted it${since(posted)}` }] : []),
    ...(m.acks ?? []).map((k) => ({ at: k.at, line: `${who(k.user)} acknowledged it${since(k.at)}` })),
    ...m.said.map((s) => ({ at: s.at, line: `${s.kind === 'fix' ? 'fix' : 'note'} from ${who(s.user)}: ${neutraliseLine(s.text, 500)}` })),
    ...(ended ? [{ at: ended, line: `resolved${since(ended)}` }] : []),
  ]
    .map((t, i) => ({ ...t, i }))
    .sort((x, y) => (Date.parse(x.at ?? '') || 0) - (Date.parse(y.at ?? '') || 0) || x.i - y.i)
    .map((t) => `- ${when(t.at)} — ${t.line}`);
  if (!ended) timeline.push('- not resolved when this was drafted');
  const fixes = m.said.filter((s) => s.kind === 'fix');
  const sections = [
    `# ${neutraliseMarkdown(title)}`,
    `_Drafted by Reprise from the incident thread's record on ${day(m.at)} at the request of ${who(m.user)}; no model involved. Edit before merging._`,
    '## Summary',
    neutraliseMarkdown(
      [a.title, a.message ?? '']
        .map((s) => s.trim())
        .filter((s, i, all) => s !== '' && all.indexOf(s) === i)
        .join('\n\n') || a.alertname,
    ),
    `- **Alert:** ${neutraliseLine(a.alertname)}${a.where ? ` on ${neutraliseLine(a.where)}` : ''}`,
    `- **Trigger:** ${neutraliseLine(m.triggerKey)}`,
    '## Timeline',
    timeline.join('\n'),
    '## Cause',
    m.cause ? neutraliseMarkdown(m.cause) : 'Not recorded.',
    '## Resolution',
    fixes.length > 0 ? fixes.map((f) => `${quoteBlock(f.text)}\n\n— ${who(f.user)}`).join('\n\n') : 'Not recorded.',
    ...(m.triedAndFailed.length > 0 ? ['## Tried and failed', m.triedAndFailed.map((t) => `- ${neutraliseLine(t, 1000)}`).join('\n')] : []),
    '## Follow-ups',
    '- (to fill in)',
  ];
  return { title, path: `postmortems/${name}.md`, branch: `reprise/postmortem/${name}`, content: `${sections.join('\n\n')}\n` };
}

export function postmortemPrBody(d: PostmortemDraft, id: string): string {
  return [
    marker('postmortem', id),
    `A postmortem draft of this incident, from what its thread recorded. File: ${neutraliseLine(d.path)}.`,
    '',
    'It lives under `postmortems/`, which the catalog never indexes: it is never recalled as an answer. A human edits and merges.',
  ].join('\n');
}
