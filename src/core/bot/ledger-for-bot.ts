import type { Ledger } from '../ledger/ledger.js';
import { occurrences, openEpisodes, silenceState } from '../ledger/ledger-state.js';
import type { BotLedger } from './reprise-bot.js';

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
      return open ? { ...(open.startsAt ? { startsAt: open.startsAt } : {}), ...(open.threadId ? { threadId: open.threadId } : {}) } : undefined;
    },
    newestThread: (triggerKey) => occurrences(ledger.state, triggerKey).newestOpen?.threadId,
    activeSilence: (triggerKey, now) => {
      const s = silenceState(ledger.state, triggerKey, now);
      return s.active && s.silence ? { until: s.silence.until, user: s.silence.user } : null;
    },
    knowsTrigger: (triggerKey) => Object.hasOwn(ledger.state.triggers, triggerKey),
    triggerKeys: () => Object.keys(ledger.state.triggers),
  };
}
