/**
 * The investigation engine's memory, read from the ledger: prior findings (what was concluded
 * and checked before, for this trigger and for similar ones), recurrence facts, and the day's
 * token spend. Findings are written by the bot as `finding` events; nothing here writes.
 */
import type { FindingStore, PriorFinding, RecurrenceSource, TokenMeter } from '../../ports/investigation-memory.js';
import type { DeepReadonly, LedgerReader } from '../ledger/ledger-reader.js';
import type { PriorFindingRecord } from '../ledger/ledger-types.js';
import { tokenize } from '../tokenize.js';

function prior(triggerKey: string, f: DeepReadonly<PriorFindingRecord>): PriorFinding {
  return {
    triggerKey,
    at: f.at,
    summary: f.summary,
    verdict: f.verdict,
    confidence: f.confidence,
    ...(f.topCause !== undefined ? { topCause: f.topCause } : {}),
    checked: [...(f.checked ?? [])],
    ...(f.entry !== undefined ? { entry: f.entry } : {}),
  };
}

export function ledgerFindingStore(ledger: { read: Pick<LedgerReader, 'findings' | 'triggersWithFindings'> }): FindingStore {
  return {
    forTrigger: async (triggerKey, limit) =>
      ledger.read
        .findings(triggerKey)
        .slice(0, limit)
        .map((f) => prior(triggerKey, f)),
    similar: async (text, limit, exclude) => {
      const words = new Set(tokenize(text.slice(0, 4000)));
      if (words.size === 0) return [];
      const scored: Array<{ f: PriorFinding; score: number }> = [];
      for (const [key, findings] of ledger.read.triggersWithFindings()) {
        if (key === exclude) continue;
        for (const f of findings) {
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

export function ledgerRecurrence(ledger: { read: Pick<LedgerReader, 'occurrences'> }): RecurrenceSource {
  return async (incident) => {
    const o = ledger.read.occurrences(incident.triggerKey);
    if (o.count === 0) return undefined;
    const prev = o.previousOpen?.entry ?? o.newestOpen?.entry;
    return { triggerKey: incident.triggerKey, count: o.count, ...(o.lastSeen ? { lastSeen: o.lastSeen } : {}), ...(prev ? { previousEntry: prev } : {}) };
  };
}

/** Spend recorded with each finding; a run's tokens count once its finding is recorded. */
export function ledgerTokenMeter(ledger: { read: Pick<LedgerReader, 'tokensSpent'> }): TokenMeter {
  return {
    spent: async (day) => ledger.read.tokensSpent(day),
    add: async () => {},
  };
}
