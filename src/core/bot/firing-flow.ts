/**
 * A firing, decided (SPEC §3): the silence and re-notification checks, noise control, recall,
 * the ledger open, and the thread — a card and its detail on every surface routing chose — as
 * outbox items. With a model, the model's part is asked for as an effect, started once the open
 * is durable.
 */
import { randomUUID } from 'node:crypto';
import { openAlert } from './fix-flow.js';
import { buildCard, buildDetail } from '../chat/build-thread-view.js';
import { spanResolvedNote } from '../chat/incident-span.js';
import { seenBefore } from '../chat/seen-before.js';
import { RepriseError } from '../errors.js';
import type { Verdict } from '../verdict.js';
import { recall, type RecallResult } from '../recall/recall.js';
import { recallDecision } from '../recall/recall-decision.js';
import { openTrace } from '../recall/open-trace.js';
import type { Answer, Incident } from '../types.js';
import { enqueue, previousEntry, restate, type Ctx } from './bot-context.js';
import type { JobRequest } from './effects.js';
import { dupFingerprint } from './dup-fingerprint.js';
import { NO_NOISE_CONTROL } from './noise-control.js';
import { logTruncated, noiseGate, recordDrop, truncatedOf, type NoiseOutcome } from './noise-gate.js';
import { stormNote } from './noise-control.js';
import { decideReopen, type ReopenOutcome } from './reopen-flow.js';
import { onCallIds, onCallView, type RoutedOnCall } from '../oncall/oncall-view.js';

export type FiringOutcome =
  | { status: 'posted'; fingerprint: string; triggerKey: string; threadId?: string; answer: Answer | null; recall: RecallResult }
  | { status: 'silenced'; fingerprint: string; triggerKey: string; until: string }
  | NoiseOutcome
  | ReopenOutcome;

/** Recall only, against the ledger as this decision sees it. */
export function previewRecall(c: Pick<Ctx, 'd' | 'read' | 'now'>, incident: Incident): RecallResult {
  return recall(incident, c.d.catalog(), (id, kind) => c.read.trackRecord(id, kind, c.now), c.d.recall, c.now);
}

/** A firing. `released`: it comes out of a debounce hold (it is not held again). */
export function decideFiring(c: Ctx, incident: Incident, route: Record<string, string | undefined>, released = false, onCall?: RoutedOnCall): FiringOutcome {
  const { read, tx, now, log } = c;
  const at = now.toISOString();
  // A reopened incident is a new episode in the thread it has (when it has one).
  const reopen = incident.reopened ? decideReopen(c, incident) : undefined;
  if (reopen) return reopen;
  const silenced = read.silence(incident.triggerKey, now);
  const silence = silenced.active ? silenced.silence : undefined;
  if (silence) {
    if (incident.severity !== 'critical') {
      log.info({ until: silence.until }, 'silenced: no message, no ledger open');
      recordDrop(tx, now, incident, 'silence', `silenced by ${silence.user} until ${silence.until}: no message, no ledger open`);
      return { status: 'silenced', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, until: silence.until };
    }
    // A critical firing ends the silence (SPEC §8): recorded so a replay agrees.
    tx.record({ type: 'silence', triggerKey: incident.triggerKey, user: 'reprise:critical', until: at, at });
    log.info('critical firing ended an active silence');
  }
  if (!incident.fingerprint || !incident.triggerKey) {
    // Refused before anything is recorded: a thread whose open has no identity could never resolve.
    throw new RepriseError('invalid_payload', 'incident has no fingerprint or trigger key');
  }
  const standing = read.openEpisodes(incident.fingerprint)[0];
  // Alertmanager re-sends a firing group every group/repeat interval: the same firing (same
  // fingerprint, same start — or no start of its own) is not a new incident.
  if (standing && (incident.startsAtEstimated === true || (standing.startsAt !== undefined && standing.startsAt === incident.startsAt))) {
    log.info('re-notification of an open firing: no new thread');
    return recordDrop(tx, now, incident, 'renotification', 're-notification of an open firing');
  }
  // Alerts routed apart are never folded together: each destination keeps its page.
  const where = c.d.routing
    .destinations(incident, route)
    .map((d) => `${d.transport}:${d.channel}`)
    .sort()
    .join(',');
  const gate = noiseGate({ read, noise: c.d.noise ?? NO_NOISE_CONTROL, now, where }, incident, route, tx, c.out, log, released);
  if ('status' in gate) return gate;
  const recalled = previewRecall(c, incident);
  // With a model, the match gate is the model's (rerank, then confirm and verify): until it
  // answers, only the runbook is shown, and the thread says the model is on it.
  const modelDecides = c.d.jobs !== undefined;
  const result: RecallResult = modelDecides
    ? {
        ...recalled,
        instant: null,
        answer: recalled.runbook ? { kind: 'runbook', entry: recalled.runbook.entry.id, confidence: recalled.runbook.confidence } : null,
      }
    : recalled;
  const occ = read.occurrences(incident.triggerKey);
  // History, read before this firing is recorded and after the gates decided: it changes nothing they did.
  const firedAt = Number.isFinite(Date.parse(incident.startsAt)) && Date.parse(incident.startsAt) <= now.getTime() ? new Date(incident.startsAt) : now;
  const history = seenBefore(read, incident.triggerKey, firedAt, seenBeforeLink(c, incident.triggerKey));
  const lead = result.instant ?? result.runbook;
  const verdict: Verdict = result.instant ? 'action_suggested' : 'inconclusive';
  const openId = randomUUID();
  const destinations = c.d.routing.destinations(incident, route);
  // Who is on call, per surface (critical firings only): on the card, and in the one reminder.
  const critical = incident.severity === 'critical';
  const onCallCards = critical && onCall ? new Map(destinations.map((d) => [d.transport, onCallView(onCall.answer, d.transport, now)])) : undefined;
  const remindMs = c.d.onCall?.remindAfterMs ?? 0;
  const remind =
    onCallCards && onCall?.answer.known && remindMs > 0
      ? { at: new Date(now.getTime() + remindMs).toISOString(), cards: Object.fromEntries(onCallCards) }
      : undefined;
  const { closed } = tx.record({
    type: 'open',
    id: openId,
    fingerprint: incident.fingerprint,
    triggerKey: incident.triggerKey,
    kind: result.instant ? 'recall' : 'fresh',
    ...(lead ? { entry: lead.entry.id, answerKind: lead.kind } : {}),
    dupFingerprint: dupFingerprint(incident),
    verdict,
    resolvable: true,
    startsAt: incident.startsAt,
    source: incident.source,
    ...(gate.key ? { coalesceKey: gate.key, ...truncatedOf(incident, gate.key) } : {}),
    // The model's job for it is started once this is durable: kept so a restart resumes it until its finding.
    ...(modelDecides ? { investigate: { incident: incident as unknown as Record<string, unknown> } } : {}),
    alert: openAlert(incident),
    ...(remind ? { remind } : {}),
    ...(critical && onCall?.late && !onCall.answer.known
      ? { oncallLate: { route: onCall.route, ...(onCall.service ? { service: onCall.service } : {}) } }
      : {}),
    trace: openTrace(recalled, result, modelDecides),
    at,
  });
  logTruncated(log, incident, gate.key, undefined);
  const group = gate.key ? read.thread(openId)?.storm : undefined;
  // A truncated group says so on its first card already.
  const groupNote = group?.truncated ? stormNote(group) : undefined;
  const checking = modelDecides ? checkingNote(c, incident, recalled.instantCandidates.length > 0) : undefined;
  const previous = previousEntry(occ);
  const input = {
    incident,
    recall: result,
    recurrence: { previousCount: occ.count, ...(occ.lastSeen ? { lastSeen: occ.lastSeen } : {}), ...(previous ? { previousEntry: previous } : {}) },
    now,
    controlsId: openId,
    ...(c.d.linkFor ? { linkFor: c.d.linkFor } : {}),
    ...(checking ? { fallThroughNote: checking } : {}),
  };
  const detail = buildDetail(input);
  for (const dest of destinations) {
    const surface = c.d.surfaces.get(dest.transport);
    const card = buildCard({ ...input, mentions: c.d.routing.mentions(incident, dest.transport) });
    const onCallCard = onCallCards?.get(dest.transport);
    if (onCallCard) {
      card.onCall = onCallCard;
      // An owner rule naming the same person pings once.
      card.mentions = card.mentions.filter((m) => !onCallIds(onCallCard).includes(m));
    }
    if (checking && card.headline.answer === 'none') card.headline = { answer: 'checking', title: checking };
    if (c.d.alertmanager && incident.source === 'alertmanager') card.amSilence = true;
    if (groupNote) card.stateNote = groupNote;
    if (history) card.seenBefore = history;
    enqueue(tx, now, { transport: dest.transport, op: 'post', openId, channel: dest.channel, view: card, ...(surface?.inlineDetail ? { detail } : {}) }, c.out);
    if (!surface?.inlineDetail) enqueue(tx, now, { transport: dest.transport, op: 'reply', openId, view: detail }, c.out);
  }
  if (closed) {
    // The resolve arrived before this firing (out of order): the alert is already over.
    const thread = read.thread(openId);
    if (thread)
      restate(
        tx,
        now,
        thread,
        {
          state: 'resolved',
          note: spanResolvedNote({ startsAt: closed.startsAt, openedAt: closed.openedAt, endsAt: closed.endsAt, resolvedAt: closed.resolvedAt ?? at }),
          icon: '✅',
          topic: 'resolved',
        },
        c.out,
      );
  }
  if (modelDecides) c.effects.push({ type: 'investigate', job: jobFor(c, openId, incident, gate.key, recalled) });
  // With a model and an instant candidate, the match gate is the job's: it reports the decision.
  if (!modelDecides || recalled.instantCandidates.length === 0) c.effects.push({ type: 'recall_decided', decision: recallDecision(result) });
  log.info(
    { answer: result.answer, nearMiss: result.nearMiss },
    result.answer ? `recalled ${result.answer.kind} ${result.answer.entry}` : modelDecides ? 'the model decides' : 'no trusted memory: fell through',
  );
  return { status: 'posted', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, answer: result.answer, recall: result };
}

/** The model's job for an open: what rerank sees, the standing answer, a storm's workloads. */
export function jobFor(
  c: Pick<Ctx, 'd' | 'read' | 'now'>,
  openId: string,
  incident: Incident,
  coalesceKey: string | undefined,
  recalled: RecallResult = previewRecall(c, incident),
): JobRequest {
  const { read } = c;
  const standing = read.standing(incident.triggerKey);
  // Read when the job starts, from the ledger as it is then: a storm keeps growing meanwhile.
  const ledger = c.d.ledger;
  const storm = coalesceKey ? (): string[] => [...(ledger.read.thread(openId)?.storm?.workloads ?? [])] : undefined;
  return {
    openId,
    incident,
    candidates: recalled.instantCandidates,
    ...(standing ? { standing } : {}),
    ...(storm ? { storm } : {}),
    ...(recalled.runbook ? { runbook: true } : {}),
  };
}

/** The absolute `/ui` link of a trigger's incidents, when a public URL is configured. */
function seenBeforeLink(c: Ctx, triggerKey: string): string | undefined {
  return c.d.uiLink?.(`/ui/incidents?trigger=${encodeURIComponent(triggerKey)}`);
}

/** What the thread says while the model works. */
function checkingNote(c: Ctx, incident: Incident, candidates: boolean): string {
  if (candidates) return 'the model is checking whether memory answers this (rerank, live-state confirm, review); its answer follows in this thread';
  const wait = incident.severity === 'critical' ? 0 : (c.d.investigateAfterMs ?? 0);
  if (wait <= 0) return 'an investigation has started; its finding follows in this thread';
  return `an investigation starts in ${Math.round(wait / 1000)} s unless the alert resolves first; its finding follows in this thread`;
}
