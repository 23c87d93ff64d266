/**
 * A source reopened an incident it had resolved (PagerDuty `incident.reopened`, issue 21 item 2):
 * a new episode of the same trigger in the thread the incident already has. Its card is edited
 * back to firing ("🔁 reopened in PagerDuty · 14:05 UTC", the ack line cleared: nobody is on the
 * new episode yet) and a reply says so; no new card is posted. The new open pairs with the
 * source's later resolve by its fingerprint (PagerDuty's incident id), as every PagerDuty resolve
 * does, so that resolve resolves this thread again. Acks, votes, notes and fixes said in the
 * thread from then on are the new episode's: the thread's state, ackers and PagerDuty call start
 * again (ledger-chat.ts `reopenThread`).
 *
 * Not a new card, so neither recall nor the model runs again: the thread already shows what
 * memory and any investigation said about this incident. With no thread to reopen (never
 * posted, a storm, dropped from the registry) the reopen is an ordinary firing.
 */
import { randomUUID } from 'node:crypto';
import { spanResolvedNote } from '../chat/incident-span.js';
import type { Incident } from '../types.js';
import { notify, enqueue, restate, shortTime, type Ctx } from './bot-context.js';
import { dupFingerprint } from './dup-fingerprint.js';
import { openAlert } from './fix-flow.js';
import { recordDrop, type NoiseOutcome } from './noise-gate.js';

export type ReopenOutcome = { status: 'reopened'; fingerprint: string; triggerKey: string; threadOf: string } | NoiseOutcome;

const SOURCE_NAME: Readonly<Record<string, string>> = { pagerduty: 'PagerDuty' };

/** The reopen in its thread; undefined when there is no thread to reopen (the caller posts a card). */
export function decideReopen(c: Ctx, reopened: Incident): ReopenOutcome | undefined {
  const { read, tx, now, log } = c;
  const thread = reopened.fingerprint ? read.threadOfFingerprint(reopened.fingerprint) : undefined;
  if (!thread || thread.fingerprint !== reopened.fingerprint || thread.storm || thread.transports.length === 0) return undefined;
  // The same trigger as the thread's, whatever the incident is called now (a renamed title).
  const incident: Incident = { ...reopened, triggerKey: thread.triggerKey };
  const at = now.toISOString();
  if (read.openEpisodes(incident.fingerprint).length > 0) {
    log.info('reopened while its thread still fires: nothing new');
    return recordDrop(tx, now, incident, 'renotification', 'reopened while its thread still fires (no resolve came before it): nothing new');
  }
  if ((thread.episodes?.length ?? 0) > 0 && thread.firedAt === incident.startsAt) {
    // Past the edge's replay memory: the same reopen (same moment) is applied once.
    log.info('a reopen already applied');
    return recordDrop(tx, now, incident, 'renotification', `this reopen (at ${incident.startsAt}) was already applied to its thread`);
  }
  const silenced = read.silence(incident.triggerKey, now);
  const silence = silenced.active ? silenced.silence : undefined;
  if (silence) {
    if (incident.severity !== 'critical') {
      log.info({ until: silence.until }, 'silenced: the reopen changes nothing');
      return recordDrop(tx, now, incident, 'silence', `silenced by ${silence.user} until ${silence.until}: no message, no ledger open`);
    }
    tx.record({ type: 'silence', triggerKey: incident.triggerKey, user: 'reprise:critical', until: at, at });
  }
  const openId = randomUUID();
  const { closed } = tx.record({
    type: 'open',
    id: openId,
    fingerprint: incident.fingerprint,
    triggerKey: incident.triggerKey,
    kind: 'fresh',
    ...(thread.entry ? { entry: thread.entry } : {}),
    ...(thread.answerKind ? { answerKind: thread.answerKind } : {}),
    dupFingerprint: thread.dupFingerprint ?? dupFingerprint(incident),
    verdict: 'inconclusive',
    resolvable: true,
    startsAt: incident.startsAt,
    source: incident.source,
    reopens: thread.openId,
    alert: openAlert(incident),
    at,
  });
  const what = `reopened in ${SOURCE_NAME[incident.source] ?? incident.source} · ${shortTime(incident.startsAt, now)}`;
  for (const transport of thread.transports) {
    enqueue(
      tx,
      now,
      { transport, op: 'update', openId: thread.openId, view: { kind: 'card_patch', state: 'firing', stateNote: `🔁 ${what}`, ack: '' } },
      c.out,
    );
    notify({ tx, now, out: c.out }, thread.openId, [transport], {
      topic: 'status',
      icon: '🔁',
      text: [`${what} — a new episode of this incident; what is said here from now on is its own`],
    });
  }
  const after = read.thread(openId);
  if (closed && after) {
    // Its resolve arrived first (out of order): the reopened episode is already over.
    restate(
      tx,
      now,
      after,
      {
        state: 'resolved',
        note: spanResolvedNote({ startsAt: closed.startsAt, openedAt: closed.openedAt, endsAt: closed.endsAt, resolvedAt: closed.resolvedAt ?? at }),
        icon: '✅',
        topic: 'resolved',
      },
      c.out,
    );
  }
  log.info({ threadOf: thread.openId }, 'reopened in its thread');
  return { status: 'reopened', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, threadOf: thread.openId };
}
