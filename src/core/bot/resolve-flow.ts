/**
 * A resolve, decided inside the webhook's ledger transaction: dropped with its held firing
 * (debounce), buffered until its open arrives, one member of a storm, or the end of the
 * incident — the card restated as resolved and its queued work cancelled.
 */
import { spanResolvedNote } from '../chat/incident-span.js';
import type { Incident } from '../types.js';
import { restate, type Ctx } from './bot-context.js';
import { cardFeedback } from './chat-actions.js';
import { askWhatFixed } from './fix-flow.js';
import { recordDrop, stormCard, type NoiseOutcome } from './noise-gate.js';

export type ResolveOutcome = { status: 'resolved'; fingerprint: string; triggerKey: string; threadId?: string; paired: boolean } | NoiseOutcome;

/** A resolve; a queued investigation of the incident it ends is cancelled once it is durable. */
export function decideResolve(c: Ctx, incident: Incident): ResolveOutcome {
  const { tx, now, out, log } = c;
  const cancel = (fingerprint: string): void => void c.effects.push({ type: 'cancel_investigation', fingerprint });
  // Ledger time is when we learned of it; the alert's own endsAt, when sent, dates the end.
  const at = now.toISOString();
  const held = incident.fingerprint ? c.read.holdOf(incident.fingerprint) : undefined;
  if (held) {
    log.info('resolved inside the debounce window: neither is posted');
    return recordDrop(tx, now, incident, 'debounce', 'resolved inside the debounce window: neither the firing nor its resolve is posted', held.holdId);
  }
  if (incident.fingerprint && !incident.startsAtEstimated && incident.startsAt && c.read.openEpisodes(incident.fingerprint).length === 0) {
    // Alertmanager re-sends a resolved group's resolve: the same end of the same firing changes nothing.
    const last = c.read.lastResolved(incident.fingerprint);
    if (last?.startsAt === incident.startsAt) {
      log.info('duplicate resolve: the alert is already resolved');
      return recordDrop(tx, now, incident, 'renotification', `duplicate resolve: this firing already resolved at ${last.at}`);
    }
  }
  const { closed } = tx.record({
    type: 'resolve',
    fingerprint: incident.fingerprint,
    ...(incident.triggerKey ? { triggerKey: incident.triggerKey } : {}),
    ...(incident.endsAt ? { endsAt: incident.endsAt } : {}),
    at,
  });
  if (!closed) {
    cancel(incident.fingerprint);
    log.info('resolve buffered: no open for this fingerprint yet');
    return { status: 'resolved', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, paired: false };
  }
  const outcome: ResolveOutcome & { status: 'resolved' } = {
    status: 'resolved',
    fingerprint: incident.fingerprint,
    triggerKey: closed.triggerKey,
    paired: true,
  };
  const thread = closed.openId ? c.read.thread(closed.openId) : undefined;
  const root = thread ? Object.values(thread.roots)[0] : undefined;
  const threadId = root?.id ?? closed.threadId;
  if (threadId) outcome.threadId = threadId;
  if (thread?.storm && thread.storm.open > 0) {
    // One alert of a storm resolved; the thread (and its investigation) goes on for the rest.
    if (thread.state === 'firing') stormCard(tx, now, thread, out);
    log.info({ threadId, stillFiring: thread.storm.open }, 'storm member resolved');
    return outcome;
  }
  // The incident is over: queued work for it is cancelled (a storm's job runs under its lead).
  cancel(thread?.storm ? thread.fingerprint : incident.fingerprint);
  // From the alert's own start to its own end (a group's earliest and latest), as the source dates them.
  const note = spanResolvedNote({
    startsAt: closed.startsAt,
    openedAt: thread?.storm ? thread.storm.firstAt : closed.openedAt,
    endsAt: closed.endsAt,
    resolvedAt: at,
    group: thread?.storm,
  });
  if (thread) {
    const said = thread.storm && thread.storm.count > 1 ? `all ${thread.storm.count} alerts ${note}` : note;
    const ask = askWhatFixed(c, thread, said, incident);
    // A recalled entry's track record moved with the resolve: the card says so in the same edit.
    // A runbook's record is its votes alone, which a resolve does not move: that card is left as it was.
    const after = c.read.thread(thread.openId) ?? thread;
    const trackMoved = after.entry !== undefined && (after.answerKind ?? 'incident') !== 'runbook';
    restate(
      tx,
      now,
      thread,
      {
        state: 'resolved',
        note: said,
        icon: '✅',
        topic: 'resolved',
        ...(trackMoved ? { patch: { feedback: cardFeedback(c, after) } } : {}),
        ...(ask ? { notice: ask } : {}),
      },
      out,
    );
  }
  log.info({ threadId }, 'resolved');
  return outcome;
}
