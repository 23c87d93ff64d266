import type { LedgerEvent } from '../src/core/ledger-events.js';
import { DEFAULT_LEDGER_LIMITS } from '../src/core/ledger/ledger-types.js';

/** The per-entry aggregate a read needs, as `entryStats` reports it (minus derived fields). */
export interface NaiveEntryStats {
  recalls: number;
  resolved: number;
  up: number;
  down: number;
  confirmations: number;
}

/**
 * The baseline the ledger's read model replaces: answer one entry's read by rescanning the
 * whole log. Still a single O(events) pass with the same pairing rules (LIFO resolves per
 * fingerprint, buffered early resolves, votes attributed to the trigger's newest open and
 * moved on change), but it keeps only what this one entry needs.
 */
export function naiveEntryStats(events: readonly LedgerEvent[], entry: string, limits = DEFAULT_LEDGER_LIMITS): NaiveEntryStats {
  const s: NaiveEntryStats = { recalls: 0, resolved: 0, up: 0, down: 0, confirmations: 0 };
  // Per fingerprint, its unresolved opens: true when the open counts for `entry`.
  const stacks = new Map<string, boolean[]>();
  const earlyResolve = new Map<string, number>();
  const newestEntry = new Map<string, string | undefined>();
  const votes = new Map<string, { vote: 'up' | 'down'; entry: string | undefined }>();
  for (const e of events) {
    switch (e.type) {
      case 'open': {
        const counts = e.kind === 'recall' && e.resolvable && e.entry === entry && e.answerKind !== 'runbook';
        if (counts) s.recalls++;
        newestEntry.set(e.triggerKey, e.entry);
        const early = earlyResolve.get(e.fingerprint);
        if (early !== undefined) {
          earlyResolve.delete(e.fingerprint);
          if (Date.parse(e.at) - early <= limits.resolveBufferMs) {
            if (counts) s.resolved++;
            break;
          }
        }
        let stack = stacks.get(e.fingerprint);
        if (!stack) stacks.set(e.fingerprint, (stack = []));
        stack.push(counts);
        if (stack.length > limits.maxOpenPerFingerprint) stack.shift();
        break;
      }
      case 'resolve': {
        const stack = stacks.get(e.fingerprint);
        if (stack && stack.length > 0) {
          if (stack.pop()) s.resolved++;
        } else earlyResolve.set(e.fingerprint, Date.parse(e.at));
        break;
      }
      case 'feedback': {
        const key = `${e.triggerKey}\u0000${e.user}`;
        const prev = votes.get(key);
        if (prev?.vote === e.vote) break;
        if (prev) {
          if (prev.entry === entry) s[prev.vote]--;
          votes.delete(key);
        }
        if (e.vote === 'clear') break;
        const attributed = newestEntry.get(e.triggerKey);
        votes.set(key, { vote: e.vote, entry: attributed });
        if (attributed === entry) s[e.vote]++;
        break;
      }
      case 'confirm':
        if (e.entry === entry) s.confirmations++;
        break;
      case 'silence':
        break;
    }
  }
  return s;
}
