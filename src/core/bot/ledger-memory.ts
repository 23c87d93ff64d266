/**
 * The investigation engine's memory, read from the ledger: prior findings (what was concluded
 * and checked before, for this trigger and for similar ones), recurrence facts, and the day's
 * token spend. Findings are written by the bot as `finding` events; nothing here writes.
 */
import type { FindingStore, PriorFinding, RecurrenceSource, TokenMeter } from '../../ports/investigation-memory.js';
import type { Ledger } from '../ledger/ledger.js';
import { occurrences, tokensSpent, triggerFindings } from '../ledger/ledger-state.js';
import type { PriorFindingRecord } from '../ledger/ledger-types.js';
import { tokenize } from '../tokenize.js';

function prior(triggerKey: string, f: PriorFindingRecord): PriorFinding {
  return {
    triggerKey,
    at: f.at,
    summary: f.summary,
    verdict: f.verdict,
    confidence: f.confidence,
    ...(f.topCause !== undefined ? { topCause: f.topCause } : {}),
    checked: f.checked ?? [],
    ...(f.entry !== undefined ? { entry: f.entry } : {}),
  };
}

export function ledgerFindingStore(ledger: Ledger): FindingStore {
  return {
    forTrigger: async (triggerKey, limit) =>
      triggerFindings(ledger.state, triggerKey)
        .slice(0, limit)
        .map((f) => prior(triggerKey, f)),
    similar: async (text, limit, exclude) => {
      const words = new Set(tokenize(text.slice(0, 4000)));
      if (words.size === 0) return [];
      const scored: Array<{ f: PriorFinding; score: number }> = [];
      for (const [key, t] of Object.entries(ledger.state.triggers)) {
        if (key === exclude || !t.findings) continue;
        for (const f of t.findings) {
          const their = tokenize(`${key} ${f.summary} ${f.topCause ?? ''}`);
          const shared = their.filter((w) => words.has(w)).length;
          if (shared > 0) scored.push({ f: prior(key, f), score: shared / Math.sqrt(their.length + 1) });
        }
      }
      return scored
        .sort((a, b) => b.score - a.score)
        .slice(0, limit)
        .map((s) => s.f);
    },
    // The bot records findings itself (a `finding` event with the open).
    add: async () => {},
  };
}

export function ledgerRecurrence(ledger: Ledger): RecurrenceSource {
  return async (incident) => {
    const o = occurrences(ledger.state, incident.triggerKey);
    if (o.count === 0) return undefined;
    const prev = o.previousOpen?.entry ?? o.newestOpen?.entry;
    return { triggerKey: incident.triggerKey, count: o.count, ...(o.lastSeen ? { lastSeen: o.lastSeen } : {}), ...(prev ? { previousEntry: prev } : {}) };
  };
}

/** Spend recorded with each finding; a run's tokens count once its finding is recorded. */
export function ledgerTokenMeter(ledger: Ledger): TokenMeter {
  return {
    spent: async (day) => tokensSpent(ledger.state, day),
    add: async () => {},
  };
}
