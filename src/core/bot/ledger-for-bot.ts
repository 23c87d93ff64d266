import { patchCard, type CardPatch, type CardView } from '../chat/thread-view.js';
import type { Ledger } from '../ledger/ledger.js';
import type { LedgerEvent } from '../ledger-events.js';
import type { ThreadRecord } from '../ledger/ledger-types.js';
import {
  cardSeq,
  dueHolds,
  holdOf,
  occurrences,
  openEpisodes,
  pendingCount,
  pendingInvestigations,
  triggerFindings,
  pendingOutbox,
  seenChatEvent,
  silenceState,
  threadByMessage,
  threadOf,
} from '../ledger/ledger-state.js';
import type { HoldRecord } from '../ledger/ledger-types.js';
import type { OutboxLedger } from '../outbox/outbox-worker.js';
import type { BotLedger, HeldFiring, ThreadInfo } from './bot-context.js';

function held(h: HoldRecord | undefined): HeldFiring | undefined {
  if (!h) return undefined;
  return {
    holdId: h.holdId,
    fingerprint: h.fingerprint,
    triggerKey: h.triggerKey,
    until: h.until,
    incident: h.incident,
    ...(h.route ? { route: { ...h.route } } : {}),
  };
}

function info(t: ThreadRecord | undefined): ThreadInfo | undefined {
  if (!t) return undefined;
  const out: ThreadInfo = {
    openId: t.openId,
    triggerKey: t.triggerKey,
    fingerprint: t.fingerprint,
    state: t.state,
    transports: [...t.transports],
    roots: { ...t.roots },
    notes: t.notes,
  };
  if (t.entry !== undefined) out.entry = t.entry;
  if (t.dupFingerprint !== undefined) out.dupFingerprint = t.dupFingerprint;
  if (t.curation !== undefined) out.curation = { ...t.curation };
  if (t.answerKind !== undefined) out.answerKind = t.answerKind;
  if (t.source !== undefined) out.source = t.source;
  if (t.openedAt !== undefined) out.openedAt = t.openedAt;
  if (t.amMark !== undefined) out.amMark = t.amMark;
  if (t.storm) {
    const { key, count, open, firstAt, lastAt, workloads, flushed } = t.storm;
    out.storm = { key, count, open, firstAt, lastAt, workloads: [...workloads], ...(flushed ? { flushed } : {}) };
  }
  return out;
}

/** Adapts the ledger service to the narrow view the bot reads and writes. */
export function ledgerForBot(ledger: Ledger): BotLedger {
  return {
    transaction: (fn) => ledger.transaction(fn),
    track: (entry, kind, now) => ledger.trackRecord(entry, kind, now),
    occurrences: (triggerKey) => {
      const o = occurrences(ledger.state, triggerKey);
      const prev = o.newestOpen?.curatedUrl ?? o.newestOpen?.entry;
      return { count: o.count, ...(o.lastSeen ? { lastSeen: o.lastSeen } : {}), ...(prev ? { previousEntry: prev } : {}) };
    },
    unresolvedOpen: (fingerprint) => {
      const open = openEpisodes(ledger.state, fingerprint)[0];
      return open ? { ...(open.startsAt ? { startsAt: open.startsAt } : {}), ...(open.openId ? { openId: open.openId } : {}) } : undefined;
    },
    activeSilence: (triggerKey, now) => {
      const s = silenceState(ledger.state, triggerKey, now);
      return s.active && s.silence ? { until: s.silence.until, user: s.silence.user } : null;
    },
    knowsTrigger: (triggerKey) => Object.hasOwn(ledger.state.triggers, triggerKey),
    triggerKeys: () => Object.keys(ledger.state.triggers),
    thread: (openId) => info(threadOf(ledger.state, openId)),
    threadByMessage: (ref) => info(threadByMessage(ledger.state, ref.transport, ref.channel, ref.id)),
    newestThread: (triggerKey) => {
      const id = occurrences(ledger.state, triggerKey).newestOpen?.id;
      return id === undefined ? undefined : info(threadOf(ledger.state, id));
    },
    seenChatEvent: (eventId) => seenChatEvent(ledger.state, eventId),
    holdOf: (fingerprint) => held(holdOf(ledger.state, fingerprint)),
    dueHolds: (now, limit) => dueHolds(ledger.state, now, limit).map((h) => held(h)!),
    stormThread: (key) => {
      const id = ledger.state.stormByKey[key];
      return id === undefined ? undefined : info(ledger.state.threads[id]);
    },
    unflushedStorms: () => {
      const out: ThreadInfo[] = [];
      for (const key in ledger.state.stormByKey) {
        const t = ledger.state.threads[ledger.state.stormByKey[key]!];
        if (t?.storm && !t.storm.flushed) out.push(info(t)!);
      }
      return out;
    },
    firingThreads: (limit) => {
      const out: ThreadInfo[] = [];
      const ids = Object.keys(ledger.state.threads);
      for (let i = ids.length - 1; i >= 0 && out.length < limit; i--) {
        const t = ledger.state.threads[ids[i]!]!;
        if (t.state === 'firing') out.push(info(t)!);
      }
      return out;
    },
    pendingAmSilences: () =>
      Object.values(ledger.state.amSilences).map((p) => ({
        requestId: p.requestId,
        openId: p.openId,
        until: p.until,
        who: p.who,
        ...(p.via ? { via: p.via } : {}),
      })),
    investigationsSince: (since) => {
      const cutoff = since.getTime();
      return ledger.state.investigationTimes.filter((t) => Date.parse(t) >= cutoff);
    },
    pendingInvestigations: () => pendingInvestigations(ledger.state).map((p) => ({ ...p })),
    recurrence: (triggerKey) => {
      const o = occurrences(ledger.state, triggerKey);
      return { ...(o.lastSeen ? { lastLookAt: o.lastSeen } : {}), concluded: o.newestConcludedOpen !== undefined, standingDown: o.down };
    },
    standing: (triggerKey) => {
      const f = triggerFindings(ledger.state, triggerKey)[0];
      if (!f) return undefined;
      return { cause: f.topCause ?? f.summary, verdict: f.verdict, concludedAt: f.at, ...(f.entry ? { entry: f.entry } : {}) };
    },
    openIncidents: (limit) => {
      const out: Array<{ triggerKey: string; openedAt: string }> = [];
      for (const fp of Object.values(ledger.state.fingerprints)) for (const o of fp.open) out.push({ triggerKey: o.triggerKey, openedAt: o.at });
      return out.sort((a, b) => (a.openedAt < b.openedAt ? 1 : -1)).slice(0, limit);
    },
    activeSilences: (now, limit) => {
      const out: Array<{ triggerKey: string; until: string; user: string }> = [];
      for (const key of Object.keys(ledger.state.triggers)) {
        const s = silenceState(ledger.state, key, now);
        if (s.active && s.silence) out.push({ triggerKey: key, until: s.silence.until, user: s.silence.user });
      }
      return out.sort((a, b) => (a.until < b.until ? -1 : 1)).slice(0, limit);
    },
  };
}

/** Adapts the ledger to what the outbox worker reads and records. */
export function ledgerForOutbox(ledger: Ledger): OutboxLedger {
  return {
    pending: () => pendingOutbox(ledger.state),
    pendingCount: () => pendingCount(ledger.state),
    root: (openId, transport) => threadOf(ledger.state, openId)?.roots[transport],
    fingerprint: (openId) => threadOf(ledger.state, openId)?.fingerprint,
    card: async (openId, transport) => {
      const seq = cardSeq(ledger.state, openId, transport);
      const e = seq === undefined ? undefined : await ledger.eventAt(seq);
      if (e?.type !== 'outbox' || e.view['kind'] !== 'card') return undefined;
      // The card as it stands: the posted one with every change recorded since.
      const changes = threadOf(ledger.state, openId)?.cardPatches?.[transport];
      return changes
        ? patchCard(e.view as unknown as CardView, { ...(changes as Omit<CardPatch, 'kind'>), kind: 'card_patch' })
        : (e.view as unknown as CardView);
    },
    payload: async (item) => {
      if (item.seq === undefined) return undefined;
      const e = await ledger.eventAt(item.seq);
      if (e?.type !== 'outbox' || e.id !== item.id) return undefined;
      return e.detail ? { view: e.view, detail: e.detail } : { view: e.view };
    },
    record: async (events: LedgerEvent[]) => {
      await ledger.transaction(async (tx) => {
        for (const e of events) tx.record(e);
      });
    },
  };
}
