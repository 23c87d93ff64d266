/**
 * The noise-control steps of a firing (issue 12), inside the bot's transaction: re-sends of a
 * held firing, the recurrence cooldown, the debounce hold and storm coalescing. Each decision
 * that stops an alert is recorded as a `noise` event with its reason.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../ports/logger.js';
import type { NoiseEvent } from '../ledger-events.js';
import type { Incident } from '../types.js';
import { enqueue, type BotReads, type BotTx, type Enqueued, type ThreadInfo } from './bot-context.js';
import { dupFingerprint } from './dup-fingerprint.js';
import { batchOpen, coalesceKey, cooldownReason, isGroupKey, stormNote, truncatedNote, type NoiseOptions } from './noise-control.js';

/** How an alert that went no further (or joined a storm) is reported. */
export type NoiseOutcome =
  | { status: 'dropped'; fingerprint: string; triggerKey: string; reason: string }
  | { status: 'held'; fingerprint: string; triggerKey: string; until: string }
  | { status: 'merged'; fingerprint: string; triggerKey: string; threadOf: string };

/** Records why an alert went no further (replayable, shown by `reprise ledger events`). */
export function recordDrop(tx: BotTx, now: Date, incident: Incident, reason: string, detail: string, holdId?: string): NoiseOutcome {
  const fingerprint = incident.fingerprint || '(none)';
  const triggerKey = incident.triggerKey || '(none)';
  tx.record({ type: 'noise', action: 'drop', fingerprint, triggerKey, reason, detail, ...(holdId ? { holdId } : {}), at: now.toISOString() });
  return { status: 'dropped', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, reason: detail };
}

/** Closes a storm batch: recorded once, and its card shows the final count. */
export function flushStorm(tx: BotTx, now: Date, t: ThreadInfo, out: Enqueued): void {
  if (!t.storm || t.storm.flushed) return;
  tx.record({
    type: 'noise',
    action: 'flush',
    fingerprint: t.fingerprint,
    triggerKey: t.triggerKey,
    reason: 'coalesce',
    detail: `storm batch closed with ${t.storm.count} alert${t.storm.count === 1 ? '' : 's'}`,
    openId: t.openId,
    at: now.toISOString(),
  });
  if (t.storm.count > 1 && t.state === 'firing') stormCard(tx, now, t, out);
}

/** Rewrites a storm thread's card with its workloads and counts. */
export function stormCard(tx: BotTx, now: Date, t: ThreadInfo, out: Enqueued): void {
  if (!t.storm) return;
  for (const transport of t.transports)
    enqueue(tx, now, { transport, op: 'update', openId: t.openId, view: { kind: 'card_patch', stateNote: stormNote(t.storm) } }, out);
}

/** What an Alertmanager group's notification left out, kept on the open of its group thread. */
export function truncatedOf(incident: Incident, key: string | undefined): { truncatedAlerts?: number } {
  const n = incident.group?.truncatedAlerts;
  return key !== undefined && isGroupKey(key) && n !== undefined ? { truncatedAlerts: n } : {};
}

/** Says in the log, once per change, that Alertmanager left alerts of a group out. */
export function logTruncated(log: Logger, incident: Incident, key: string | undefined, before: number | undefined): void {
  const n = truncatedOf(incident, key).truncatedAlerts;
  if (n !== undefined && n > 0 && n !== before)
    log.warn({ groupKey: incident.groupKey, truncatedAlerts: n }, `${truncatedNote(n)}: raise it on the receiver to see them`);
}

/**
 * Noise control before a new thread. Returns an outcome when the firing stops here (recorded)
 * or joined a storm thread, else the coalesce key its own thread opens a batch under. A firing
 * released from its hold (`released`) is not held again.
 */
export function noiseGate(
  d: { read: BotReads; noise: NoiseOptions; now: Date; where?: string },
  incident: Incident,
  route: Record<string, string | undefined>,
  tx: BotTx,
  out: Enqueued,
  log: Logger,
  released: boolean,
): NoiseOutcome | { key?: string } {
  const { read, noise: opts, now } = d;
  if (!released && read.holdOf(incident.fingerprint)) {
    log.info('re-notification of a held firing');
    return recordDrop(tx, now, incident, 'renotification', 'the same firing is already held by the debounce');
  }
  const cooldown = cooldownReason(read.recurrence(incident.triggerKey), now, opts.cooldownMs);
  if (cooldown) {
    log.info({ cooldown }, 'recurrence cooldown: not investigated again');
    return recordDrop(tx, now, incident, 'cooldown', cooldown);
  }
  if (!released && opts.debounceMs > 0 && incident.severity !== 'critical') {
    const until = new Date(now.getTime() + opts.debounceMs).toISOString();
    const r: Record<string, string> = {};
    for (const [k, v] of Object.entries(route)) if (typeof v === 'string') r[k] = v;
    const hold: NoiseEvent = {
      type: 'noise',
      action: 'hold',
      fingerprint: incident.fingerprint,
      triggerKey: incident.triggerKey,
      reason: 'debounce',
      detail: `held ${Math.round(opts.debounceMs / 1000)} s: posted unless it resolves first`,
      holdId: randomUUID(),
      until,
      incident: incident as unknown as Record<string, unknown>,
      ...(Object.keys(r).length > 0 ? { route: r } : {}),
      at: now.toISOString(),
    };
    tx.record(hold);
    log.info({ until }, 'held by the debounce');
    return { status: 'held', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, until };
  }
  const base = coalesceKey(incident, opts.coalesce);
  const key = base === undefined || !d.where ? base : `${base}|to:${d.where}`;
  if (key === undefined || !opts.coalesce) return {};
  const lead = read.stormThread(key);
  if (lead?.storm && batchOpen(lead.storm, now, opts.coalesce)) {
    // Its own open (so its resolve pairs), in the lead's thread: no recall, no message of its own.
    tx.record({
      type: 'open',
      id: randomUUID(),
      fingerprint: incident.fingerprint,
      triggerKey: incident.triggerKey,
      kind: 'fresh',
      dupFingerprint: dupFingerprint(incident),
      verdict: 'inconclusive',
      resolvable: true,
      startsAt: incident.startsAt,
      source: incident.source,
      coalesceKey: key,
      threadOf: lead.openId,
      ...truncatedOf(incident, key),
      at: now.toISOString(),
    });
    logTruncated(log, incident, key, lead.storm.truncated);
    const thread = read.thread(lead.openId);
    if (thread?.storm && thread.state === 'firing') stormCard(tx, now, thread, out);
    log.info({ threadOf: lead.openId, key }, 'coalesced into a storm thread');
    return { status: 'merged', fingerprint: incident.fingerprint, triggerKey: incident.triggerKey, threadOf: lead.openId };
  }
  // The previous batch under this key is over: close it before a new one starts.
  if (lead?.storm && !lead.storm.flushed) flushStorm(tx, now, lead, out);
  return { key };
}
