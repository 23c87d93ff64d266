/**
 * Noise control in the read model (issue 12): debounce holds (so a restart re-arms them from
 * the ledger), storm threads (alerts coalesced into one thread, each keeping its own open), and
 * a count of every decision by its reason. Folded one event at a time like the rest.
 */
import { earliest, latest } from '../chat/incident-span.js';
import type { NoiseEvent, OpenEvent } from '../ledger-events.js';
import type { FingerprintState, HoldRecord, LedgerState, StormRecord, ThreadRecord } from './ledger-types.js';

/** Firings suppressed for these reasons leave their resolve nothing to pair with. */
const SUPPRESSED = new Set(['silence', 'cooldown']);

/** Affected workloads listed per storm thread. */
const STORM_WORKLOADS = 50;

export function applyNoise(
  state: LedgerState,
  e: NoiseEvent,
  touchFingerprint: (state: LedgerState, fp: string) => FingerprintState,
  triggerFiring: (state: LedgerState, key: string, fp: string) => void,
): void {
  if (e.action === 'admit') {
    // The dedup window measures from the last admission of the same fingerprint and status.
    const fp = touchFingerprint(state, e.fingerprint);
    if (e.reason === 'resolved') fp.admittedResolveAt = e.at;
    else fp.admittedFiringAt = e.at;
    return;
  }
  const counter = `${e.action}:${e.reason}`;
  state.noiseCounts[counter] = (state.noiseCounts[counter] ?? 0) + 1;
  switch (e.action) {
    case 'hold': {
      if (e.holdId === undefined || e.until === undefined || e.incident === undefined) return;
      const hold: HoldRecord = { holdId: e.holdId, fingerprint: e.fingerprint, triggerKey: e.triggerKey, until: e.until, at: e.at, incident: e.incident };
      if (e.route !== undefined) hold.route = e.route;
      if (state.holds[e.holdId] === undefined) state.holdCount += 1;
      state.holds[e.holdId] = hold;
      state.holdByFingerprint[e.fingerprint] = e.holdId;
      return;
    }
    case 'release':
    case 'drop':
      if (e.holdId !== undefined) endHold(state, e.holdId);
      // Its resolve must not wait for (and wrongly close) the next firing of the fingerprint.
      if (e.action === 'drop' && SUPPRESSED.has(e.reason)) {
        const fp = touchFingerprint(state, e.fingerprint);
        fp.suppressed = true;
        fp.triggerKey ??= e.triggerKey;
        // Still firing, only kept quiet: the trigger's silence holds while it does.
        triggerFiring(state, e.triggerKey, e.fingerprint);
      }
      return;
    case 'flush': {
      const storm = e.openId === undefined ? undefined : state.threads[e.openId]?.storm;
      if (storm) storm.flushed = true;
      return;
    }
    case 'mark': {
      const thread = e.openId === undefined ? undefined : state.threads[e.openId];
      if (!thread) return;
      thread.amMark = e.reason;
      if (e.reason === 'am_silenced' || e.reason === 'am_inhibited') thread.amHeld = true;
      // What Alertmanager holds decides how the thread reads: gone (no resolve came) or silenced
      // there. A gone alert's open is concluded by its own resolve (`reason: am_gone`); older
      // ledgers recorded the mark alone.
      if (thread.state === 'firing') thread.state = e.reason === 'am_gone' ? 'resolved' : 'silenced';
      return;
    }
    case 'am_silence': {
      if (e.requestId !== undefined) delete state.amSilences[e.requestId];
      const thread = e.openId === undefined ? undefined : state.threads[e.openId];
      if (thread && e.reason === 'created') thread.amHeld = true;
      return;
    }
  }
}

function endHold(state: LedgerState, holdId: string): void {
  const hold = state.holds[holdId];
  if (!hold) return;
  delete state.holds[holdId];
  state.holdCount -= 1;
  if (state.holdByFingerprint[hold.fingerprint] === holdId) delete state.holdByFingerprint[hold.fingerprint];
}

/** A workload as the storm card lists it. */
export function workloadLabel(e: Pick<OpenEvent, 'triggerKey'>): string {
  // triggerKey: alertname|namespace|kind|name|cluster[|account]
  const [alertname = '', ns = '', , name = '', cluster = ''] = e.triggerKey.split('|');
  const where = [cluster, ns, name].filter((p) => p !== '').join('/');
  return where === '' ? alertname : where;
}

/**
 * Registers a storm open: the lead starts a storm record on its own thread; a member joins its
 * lead's thread (and records nothing of its own there). Returns false when the open is not a
 * member whose thread is still known (the caller then registers a thread as usual).
 */
export function registerStormOpen(state: LedgerState, e: OpenEvent, thread: ThreadRecord | undefined): boolean {
  if (e.id === undefined) return false;
  if (e.threadOf !== undefined) {
    const lead = state.threads[e.threadOf];
    if (!lead?.storm) return false;
    const s = lead.storm;
    s.count += 1;
    s.open += 1;
    s.lastAt = e.at;
    const startsAt = earliest(s.startsAt, e.startsAt);
    if (startsAt !== undefined) s.startsAt = startsAt;
    s.members.push(e.id);
    s.firing[e.fingerprint] = e.id;
    if (e.truncatedAlerts !== undefined) s.truncated = e.truncatedAlerts;
    const w = workloadLabel(e);
    if (s.workloads.length < STORM_WORKLOADS && !s.workloads.includes(w)) s.workloads.push(w);
    state.stormMembers[e.id] = e.threadOf;
    return true;
  }
  if (e.coalesceKey !== undefined && thread) {
    const storm: StormRecord = {
      key: e.coalesceKey,
      count: 1,
      open: 1,
      firstAt: e.at,
      lastAt: e.at,
      workloads: [workloadLabel(e)],
      members: [],
      firing: Object.assign(Object.create(null) as Record<string, string>, { [e.fingerprint]: e.id }),
    };
    if (e.truncatedAlerts !== undefined) storm.truncated = e.truncatedAlerts;
    if (e.startsAt !== undefined) storm.startsAt = e.startsAt;
    thread.storm = storm;
    state.stormByKey[e.coalesceKey] = e.id;
  }
  return false;
}

/** A storm constituent resolved: one fewer alert still firing in its thread. */
export function stormResolved(state: LedgerState, openId: string | undefined, fingerprint: string, endsAt?: string): void {
  if (openId === undefined) return;
  const storm = state.threads[state.stormMembers[openId] ?? openId]?.storm;
  const end = latest(storm?.endsAt, endsAt);
  if (storm && end !== undefined) storm.endsAt = end;
  if (storm && storm.open > 0) storm.open -= 1;
  if (storm?.firing[fingerprint] === openId) delete storm.firing[fingerprint];
}

/** Forgets what a dropped thread's storm pointed at. */
export function forgetStorm(state: LedgerState, thread: ThreadRecord): void {
  if (!thread.storm) return;
  for (const m of thread.storm.members) delete state.stormMembers[m];
  if (state.stormByKey[thread.storm.key] === thread.openId) delete state.stormByKey[thread.storm.key];
}

// ── reads ──

/** Holds whose time has come at `now`, oldest first (holds are kept in the order they were made). */
export function dueHolds(state: LedgerState, now: Date, limit = Number.POSITIVE_INFINITY): HoldRecord[] {
  const out: HoldRecord[] = [];
  const t = now.getTime();
  for (const id in state.holds) {
    const h = state.holds[id]!;
    // Holds last one debounce window each, so they come due in the order they were made.
    if (Date.parse(h.until) > t || out.length >= limit) break;
    out.push(h);
  }
  return out;
}

export function holdOf(state: LedgerState, fingerprint: string): HoldRecord | undefined {
  const id = state.holdByFingerprint[fingerprint];
  return id === undefined ? undefined : state.holds[id];
}
