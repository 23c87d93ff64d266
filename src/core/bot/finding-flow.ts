/**
 * What an investigation job came back with, decided like every other intent: its `finding`
 * (completed, degraded, cancelled because the alert resolved, skipped by a limit), a
 * confirmation of a refused entry, the file-time curation of the Finding, and the card and
 * detail that say so in the thread.
 */
import type { CardPatch } from '../chat/thread-view.js';
import { findingCardPatch, findingDetail } from '../chat/finding-view.js';
import type { InvestigationResult } from '../investigate/investigation-types.js';
import type { FindingEvent } from '../ledger-events.js';
import type { InvestigationEndReason } from '../../ports/loop-observer.js';
import type { Entry, Incident } from '../types.js';
import { notify, enqueue, type Ctx } from './bot-context.js';
import { confirmation, curateFinding } from './finding-knowledge.js';

/** The job an ending belongs to. */
export interface EndedJob {
  openId: string;
  incident: Incident;
  /** Started again after a restart or a change of leader. */
  resumed?: boolean;
}

export type InvestigationEnded = { type: 'investigation_ended'; job: EndedJob } &
  /** The alert resolved before the investigation could start (or resume). */
  (
    | { outcome: 'cancelled'; reason: string }
    /** Not started: a limit, or too old to resume. */
    | { outcome: 'skipped'; reason: string; code: InvestigationEndReason }
    /** It ran: its result, the entry it recalled (verified), and an entry the track record refused. */
    | { outcome: 'result'; result: InvestigationResult; recalled?: Entry; refused?: Entry }
  );

const zero = { calls: 0, tokensIn: 0, tokensOut: 0 };

export function decideInvestigationEnded(c: Ctx, e: InvestigationEnded): { status: 'recorded'; finding: FindingEvent['status'] } {
  const { job } = e;
  const at = c.now.toISOString();
  const base = {
    type: 'finding' as const,
    openId: job.openId,
    fingerprint: job.incident.fingerprint,
    triggerKey: job.incident.triggerKey,
    ...(job.resumed ? { resumed: true } : {}),
  };
  if (e.outcome === 'cancelled') {
    c.tx.record({ ...base, kind: 'fresh', status: 'cancelled', reason: e.reason, ...zero, at });
    c.effects.push({ type: 'investigation_ended', end: { status: 'cancelled', reason: 'resolved' } });
    c.log.info(
      { trigger: job.incident.triggerKey, openId: job.openId },
      job.resumed ? 'investigation not resumed: resolved meanwhile' : 'investigation cancelled: resolved before it started',
    );
    return { status: 'recorded', finding: 'cancelled' };
  }
  if (e.outcome === 'skipped') {
    c.tx.record({ ...base, kind: 'fresh', status: 'skipped', reason: e.reason, ...zero, at });
    const thread = c.read.thread(job.openId);
    for (const transport of thread?.transports ?? []) {
      enqueue(c.tx, c.now, { transport, op: 'update', openId: job.openId, view: { kind: 'card_patch', headline: { answer: 'none' } } }, c.out);
      notify(c, job.openId, [transport], { topic: 'info', icon: '⏸', text: [`investigation not started — ${e.reason}`] });
    }
    c.effects.push({ type: 'investigation_ended', end: { status: 'skipped', reason: e.code } });
    c.log.warn({ trigger: job.incident.triggerKey, openId: job.openId, reason: e.reason }, 'investigation skipped');
    return { status: 'recorded', finding: 'skipped' };
  }
  const { result: r, recalled, refused } = e;
  const f = r.finding;
  const checked = r.steps
    .filter((s) => s.kind === 'tool' && s.outcome === 'ok')
    .map((s) => (s.kind === 'tool' ? `${s.tool}: ${(s.result ?? '').replace(/\s+/g, ' ').slice(0, 160)}` : ''));
  const event: FindingEvent = {
    ...base,
    kind: recalled ? 'recall' : 'fresh',
    status: r.status,
    ...(recalled ? { entry: recalled.id } : {}),
    ...(f ? { confidence: recalled && r.recall ? r.recall.confidence : f.confidence, verdict: f.verdict, summary: f.summary } : {}),
    ...(f?.rootCauses[0] ? { topCause: f.rootCauses[0].cause } : {}),
    ...(checked.length > 0 ? { checked: checked.slice(0, 12) } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    calls: r.usage.calls,
    tokensIn: r.usage.input,
    tokensOut: r.usage.output,
    ...(r.usage.costUsd > 0 ? { costUsd: Math.round(r.usage.costUsd * 1e6) / 1e6 } : {}),
    at,
  };
  c.tx.record(event);
  const confirm = refused ? confirmation(refused, job.incident, r) : undefined;
  if (confirm) c.tx.record({ type: 'confirm', entry: confirm.entry, dupFingerprint: confirm.dupFingerprint, at });
  const curated =
    r.status === 'cancelled'
      ? undefined
      : curateFinding(
          { read: c.read, log: c.log, ...(c.d.fileTimeCuration ? { curation: c.d.fileTimeCuration } : {}) },
          c.tx,
          job.openId,
          job.incident,
          r,
          recalled,
          at,
        );
  if (curated?.intent) c.effects.push({ type: 'curate' });
  const thread = c.read.thread(job.openId);
  if (thread && r.status !== 'cancelled') {
    const patch: CardPatch = curated?.line ? { ...findingCardPatch(r, recalled), curation: curated.line } : findingCardPatch(r, recalled);
    for (const transport of thread.transports) {
      enqueue(c.tx, c.now, { transport, op: 'update', openId: job.openId, view: patch }, c.out);
      enqueue(c.tx, c.now, { transport, op: 'reply', openId: job.openId, view: findingDetail(r, job.incident.triggerKey, recalled) }, c.out);
    }
  }
  c.effects.push({ type: 'investigation_ended', end: { status: r.status, reason: r.reason ?? 'none' } });
  c.log.info(
    {
      trigger: job.incident.triggerKey,
      status: r.status,
      kind: event.kind,
      entry: event.entry,
      calls: r.usage.calls,
      tokens: r.usage.input + r.usage.output,
      ...(job.resumed ? { resumed: true } : {}),
    },
    `investigation ${r.status}`,
  );
  return { status: 'recorded', finding: r.status };
}
