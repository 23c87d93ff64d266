/**
 * `/reprise …` (Slack) and `!reprise …` (Matrix): recall, investigate, silence, ack, status,
 * postmortem, help (SPEC §1). Read-only answers are built here; a silence becomes a silence event.
 */
import type { EphemeralView, RichText } from '../chat/thread-view.js';
import type { MessageRef } from '../chat/chat-types.js';
import { deriveWorkload, triggerKey } from '../identity.js';
import type { RecallResult } from '../recall/recall.js';
import type { Incident } from '../types.js';
import type { NamedInText, TextHit } from '../search/text-query.js';
import { recordedRun, shortTime, type BotReads } from './bot-context.js';
import { shortDuration } from '../duration.js';
import { postmortemSyntax } from '../chat/surface-syntax.js';

export type ParsedCommand =
  | { name: 'recall'; text: string }
  | { name: 'investigate'; text: string }
  | { name: 'silence'; duration: string; alertmanager: boolean; triggerKey?: string }
  | { name: 'status'; triggerKey?: string }
  | { name: 'ack'; triggerKey?: string }
  | { name: 'postmortem'; triggerKey?: string }
  | { name: 'oncall'; route?: string }
  | { name: 'help' }
  | { name: 'unknown'; word: string };

/** The commands, with the in-thread hints in the syntax of `transport` (the surface that asked). */
export function commandHelp(transport: string): RichText[] {
  return [
    [{ code: 'recall <alertname or text>' }, ' — what memory answers, with the gate trace'],
    [{ code: 'investigate <text>' }, ' — start an investigation with the model and read-only tools'],
    [
      { code: 'silence <duration>' },
      ' (in a thread) or ',
      { code: 'silence <trigger> <duration>' },
      ' — 1h, 4h, 24h…; add ',
      { code: 'am' },
      ' to silence in Alertmanager too',
    ],
    [{ code: 'ack' }, ' (in a thread) or ', { code: 'ack <trigger>' }, ' — say you are on it (never silences, never a vote)'],
    [
      { code: 'postmortem <trigger>' },
      ' — a postmortem draft of its newest incident (a pull request under postmortems/ with a forge, else the draft); in its thread: ',
      { code: postmortemSyntax(transport) },
    ],
    [{ code: 'status' }, ' — open incidents, silences in force and time to acknowledge; ', { code: 'status <trigger>' }, ' — its timeline'],
    [
      'A ',
      { code: '<trigger>' },
      ' is its key, a unique part of it or a few of its words: ',
      { code: 'logs-02' },
      ', ',
      { code: 'checkout-api crashloop' },
      '.',
    ],
    [{ code: 'oncall' }, ' or ', { code: 'oncall <route>' }, ' — who is on call now, and until when'],
    [{ code: 'help' }, ' — this list'],
  ];
}

/** A command word and its arguments (`silence`, `4h am`) as what they ask. An empty word is `help`. */
export function parseCommand(word: string, args: string): ParsedCommand {
  const rest = args
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  const name = word.trim().toLowerCase() || 'help';
  switch (name) {
    case 'recall':
    case 'investigate':
      return { name, text: rest.join(' ') };
    case 'silence': {
      // `silence 4h am` / `silence <trigger…> 4h am`: silence in Alertmanager too. The duration is
      // the last word; every word before it names the trigger (a name may have spaces).
      const alertmanager = rest.length >= 2 && rest[rest.length - 1]!.toLowerCase() === 'am';
      const a = alertmanager ? rest.slice(0, -1) : rest;
      if (a.length >= 2) return { name, triggerKey: a.slice(0, -1).join(' '), duration: a[a.length - 1]!, alertmanager };
      return { name, duration: a[0] ?? '', alertmanager };
    }
    case 'status':
    case 'ack':
    case 'postmortem':
      // The rest names the trigger: its key, a unique part of it, or a few of its words.
      return rest.length > 0 ? { name, triggerKey: rest.join(' ') } : { name };
    case 'oncall':
      return rest.length > 0 ? { name, route: rest.join(' ').slice(0, 80) } : { name };
    case 'help':
      return { name };
    default:
      return { name: 'unknown', word: word.slice(0, 40) };
  }
}

/**
 * An incident for `recall <text>`: an alert name alone, or free text as its message. With
 * what the text names in the catalog (`namedInText`), a known alert among the words is the
 * alertname and a known resource the workload: `recall NodeFilesystemSpaceFillingUp logs-02`
 * asks about that alert on that host.
 */
export function adHocIncident(text: string, now: Date, named: NamedInText = {}): Incident {
  const t = text.trim().slice(0, 2000);
  const single = /^[A-Za-z][A-Za-z0-9_:.-]{1,127}$/.test(t);
  const alertname = single ? t : (named.alertname ?? 'adhoc');
  const labels = { alertname };
  const r = named.resource;
  const workload = r ? { namespace: r.host ? '' : (r.namespace ?? ''), name: r.name, ...(r.host ? { kind: 'host' } : {}) } : deriveWorkload(labels);
  return {
    source: 'command',
    status: 'firing',
    fingerprint: 'command',
    triggerKey: triggerKey(alertname, workload),
    ...(workload ? { workload } : {}),
    alertname,
    title: single ? t : t.slice(0, 120),
    message: single ? '' : t,
    severity: 'none',
    labels,
    annotations: {},
    startsAt: now.toISOString(),
  };
}

export function recallAnswer(text: string, r: RecallResult, found?: readonly TextHit[]): EphemeralView {
  const body: RichText[] = [];
  if (r.answer) {
    const what = r.answer.kind === 'incident' ? '⚡ instant recall' : '📚 runbook';
    body.push([`${what}: `, { code: r.answer.entry }, ` at ${r.answer.confidence.toFixed(2)}`]);
    const related = r.answer.related ?? [];
    if (related.length > 0)
      body.push([`one of ${related.length + 1} related runbooks; also `, ...related.flatMap((id, i) => (i === 0 ? [{ code: id }] : [', ', { code: id }]))]);
  } else body.push(['No trusted answer: the gates below say why.']);
  if (r.nearMiss) body.push([`🔎 near miss: `, { code: r.nearMiss.entry }, ` (${r.nearMiss.gate}: ${r.nearMiss.reason})`]);
  // For typed text, what the words name first (exact alert names and resources), then the rest
  // by the typo-tolerant search; recall's own BM25 ranking without a text index.
  const ranked = found && found.length > 0 ? found.map((h) => h.entry.id) : r.ranked;
  if (ranked.length > 0)
    body.push([
      found && found.length > 0 ? 'Entries the words name: ' : 'Ranked candidates: ',
      ...ranked.slice(0, 5).flatMap((id, i) => (i === 0 ? [{ code: id }] : [', ', { code: id }])),
    ]);
  return { kind: 'ephemeral', title: `Recall for “${text.slice(0, 80)}”`, body, trace: r.trace.slice(0, 25) };
}

export function statusAnswer(read: Pick<BotReads, 'openIncidents' | 'activeSilences' | 'ackSeconds'>, now: Date): EphemeralView {
  const open = read.openIncidents(10);
  const silences = read.activeSilences(now, 10);
  const body: RichText[] = [];
  body.push([`${open.length === 0 ? 'No' : open.length} open incident${open.length === 1 ? '' : 's'}${open.length === 10 ? ' (newest 10)' : ''}.`]);
  // Since it fired (the alert's own startsAt, as the card's durations count), else since it was opened.
  for (const o of open)
    body.push(['• ', { code: o.triggerKey }, ` since ${shortTime(o.startsAt && Number.isFinite(Date.parse(o.startsAt)) ? o.startsAt : o.openedAt, now)}`]);
  body.push([`${silences.length === 0 ? 'No' : silences.length} silence${silences.length === 1 ? '' : 's'} in force.`]);
  for (const s of silences) body.push(['• ', { code: s.triggerKey }, ` until ${shortTime(s.until, now)} (by `, recordedRun({ user: s.user }), ')']);
  body.push([ackFigure(read.ackSeconds())]);
  return { kind: 'ephemeral', title: 'Reprise status', body };
}

/** "👀 time to acknowledge: median 4 min, p90 12 min over the last 25 acknowledged incidents". */
export function ackFigure(seconds: readonly number[]): string {
  if (seconds.length === 0) return '👀 time to acknowledge: no incident acknowledged yet.';
  const sorted = [...seconds].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const n = sorted.length;
  return `👀 time to acknowledge: median ${shortDuration(at(0.5) * 1000)}, p90 ${shortDuration(at(0.9) * 1000)} over the last ${n} acknowledged incident${n === 1 ? '' : 's'}.`;
}

export function helpAnswer(transport: string): EphemeralView {
  return { kind: 'ephemeral', title: 'Reprise commands', body: commandHelp(transport) };
}

export function plainAnswer(title: string, text: string): EphemeralView {
  return { kind: 'ephemeral', title, body: [[text]] };
}

/** Where a silence command points: the thread it was typed in, else the trigger key it names. */
export function silenceTarget(
  cmd: Extract<ParsedCommand, { name: 'silence' }>,
  thread: MessageRef | undefined,
): { message?: MessageRef; triggerKey?: string } | undefined {
  if (cmd.triggerKey) return { triggerKey: cmd.triggerKey };
  if (thread) return { message: thread };
  return undefined;
}
