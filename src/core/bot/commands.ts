/**
 * `/reprise …` (Slack) and `!reprise …` (Matrix): recall, investigate, silence, status, help
 * (SPEC §1). Read-only answers are built here; a silence becomes a silence event.
 */
import type { EphemeralView, RichText } from '../chat/thread-view.js';
import type { MessageRef } from '../chat/chat-types.js';
import { deriveWorkload, triggerKey } from '../identity.js';
import type { RecallResult } from '../recall/recall.js';
import type { Incident } from '../types.js';
import { shortTime, type BotLedger } from './bot-context.js';

export type ParsedCommand =
  | { name: 'recall'; text: string }
  | { name: 'investigate'; text: string }
  | { name: 'silence'; duration: string; triggerKey?: string }
  | { name: 'status' }
  | { name: 'help' }
  | { name: 'unknown'; word: string };

export const COMMAND_HELP: RichText[] = [
  [{ code: 'recall <alertname or text>' }, ' — what memory answers, with the gate trace'],
  [{ code: 'investigate <text>' }, ' — start an investigation with the model and read-only tools'],
  [
    { code: 'silence <duration>' },
    ' (in a thread) or ',
    { code: 'silence <trigger key> <duration>' },
    ' — 1h, 4h, 24h…; add ',
    { code: 'am' },
    ' to silence in Alertmanager too',
  ],
  [{ code: 'status' }, ' — open incidents and silences in force'],
  [{ code: 'help' }, ' — this list'],
];

/** Splits `silence 4h` / `recall KubePodCrashLooping` / `status`; whitespace-separated, no regex. */
export function parseCommand(text: string): ParsedCommand {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  const [first = 'help', ...rest] = words;
  const name = first.toLowerCase();
  switch (name) {
    case 'recall':
      return { name, text: rest.join(' ') };
    case 'investigate':
      return { name, text: rest.join(' ') };
    case 'silence': {
      // `silence 4h am` / `silence <trigger> 4h am`: silence in Alertmanager too.
      const am = rest.length >= 2 && rest[rest.length - 1]!.toLowerCase() === 'am' ? ' am' : '';
      const args = am ? rest.slice(0, -1) : rest;
      if (args.length >= 2) return { name, triggerKey: args[0]!, duration: `${args[1]!}${am}` };
      return { name, duration: `${args[0] ?? ''}${am}` };
    }
    case 'status':
    case 'help':
      return { name };
    default:
      return { name: 'unknown', word: first.slice(0, 40) };
  }
}

/** An incident for `recall <text>`: an alert name alone, or free text as its message. */
export function adHocIncident(text: string, now: Date): Incident {
  const t = text.trim().slice(0, 2000);
  const single = /^[A-Za-z][A-Za-z0-9_:.-]{1,127}$/.test(t);
  const alertname = single ? t : 'adhoc';
  const labels = { alertname };
  return {
    source: 'command',
    status: 'firing',
    fingerprint: 'command',
    triggerKey: triggerKey(alertname, deriveWorkload(labels)),
    alertname,
    title: single ? t : t.slice(0, 120),
    message: single ? '' : t,
    severity: 'none',
    labels,
    annotations: {},
    startsAt: now.toISOString(),
  };
}

export function recallAnswer(text: string, r: RecallResult): EphemeralView {
  const body: RichText[] = [];
  if (r.answer) {
    const what = r.answer.kind === 'incident' ? '⚡ instant recall' : '📚 runbook';
    body.push([`${what}: `, { code: r.answer.entry }, ` at ${r.answer.confidence.toFixed(2)}`]);
  } else body.push(['No trusted answer: the gates below say why.']);
  if (r.nearMiss) body.push([`🔎 near miss: `, { code: r.nearMiss.entry }, ` (${r.nearMiss.gate}: ${r.nearMiss.reason})`]);
  if (r.ranked.length > 0) body.push(['Ranked candidates: ', ...r.ranked.slice(0, 5).flatMap((id, i) => (i === 0 ? [{ code: id }] : [', ', { code: id }]))]);
  return { kind: 'ephemeral', title: `Recall for “${text.slice(0, 80)}”`, body, trace: r.trace.slice(0, 25) };
}

export function statusAnswer(ledger: BotLedger, now: Date): EphemeralView {
  const open = ledger.read.openIncidents(10);
  const silences = ledger.read.activeSilences(now, 10);
  const body: RichText[] = [];
  body.push([`${open.length === 0 ? 'No' : open.length} open incident${open.length === 1 ? '' : 's'}${open.length === 10 ? ' (newest 10)' : ''}.`]);
  for (const o of open) body.push(['• ', { code: o.triggerKey }, ` since ${shortTime(o.openedAt, now)}`]);
  body.push([`${silences.length === 0 ? 'No' : silences.length} silence${silences.length === 1 ? '' : 's'} in force.`]);
  for (const s of silences) body.push(['• ', { code: s.triggerKey }, ` until ${shortTime(s.until, now)} (by ${s.user})`]);
  return { kind: 'ephemeral', title: 'Reprise status', body };
}

export function helpAnswer(): EphemeralView {
  return { kind: 'ephemeral', title: 'Reprise commands', body: COMMAND_HELP };
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
