import type { LedgerEvent } from '../src/core/ledger-events.js';
import type { Verdict } from '../src/core/verdict.js';
import { createRng } from '../src/core/eval/prng.js';
import { pick, zipfSampler } from './sampling.js';

export interface EventShape {
  events: number;
  triggers: number;
  entries: number;
  /** Fingerprints per trigger key (alert instances that come and go). */
  fingerprintsPerTrigger: number;
  users: number;
}

export const DEFAULT_EVENT_SHAPE: EventShape = { events: 1_000_000, triggers: 5_000, entries: 500, fingerprintsPerTrigger: 2, users: 50 };

/** Entry id `k` of the synthetic ledger. */
export function ledgerEntryId(k: number): string {
  return `incidents/e${k}.md`;
}

const VERDICTS: readonly Verdict[] = ['action_required', 'action_suggested', 'inconclusive', 'no_action'];
/** Opens a fingerprint may pile up before the generator resolves it (below the ledger's bound). */
const MAX_PENDING = 15;

/**
 * A realistic event log: opens (≈45%, mostly recalls of the trigger's entry), resolves (≈40%,
 * of a fingerprint that is open), feedback on recently opened triggers (≈12%), silences and
 * confirmations; triggers fire with Zipf frequencies (a few noisy alerts, a long tail), 30 s
 * apart. Stays inside the ledger's default limits, so a naive fold must agree with it exactly.
 */
export function generateEvents(shape: EventShape = DEFAULT_EVENT_SHAPE, seed = 99): LedgerEvent[] {
  const rng = createRng(seed);
  const trig = zipfSampler(shape.triggers, 0.8);
  const triggerKey = (i: number): string => `alert${i % 400}|ns${i % 60}|deployment|wl${i}|prod`;
  const pending = new Map<string, number>();
  const openFps: string[] = [];
  const recentTriggers: number[] = [];
  const out: LedgerEvent[] = [];
  let t = Date.UTC(2024, 0, 1);
  while (out.length < shape.events) {
    t += 30_000;
    const at = new Date(t).toISOString();
    const u = rng();
    if (u < 0.45 || openFps.length === 0) {
      const i = trig(rng);
      const fingerprint = `fp${i}-${Math.floor(rng() * shape.fingerprintsPerTrigger)}`;
      const n = pending.get(fingerprint) ?? 0;
      if (n >= MAX_PENDING) {
        out.push({ type: 'resolve', fingerprint, at });
        pending.set(fingerprint, n - 1);
        continue;
      }
      const recalled = rng() < 0.7;
      out.push({
        type: 'open',
        fingerprint,
        triggerKey: triggerKey(i),
        kind: recalled ? 'recall' : 'fresh',
        ...(recalled ? { entry: ledgerEntryId(i % shape.entries), answerKind: rng() < 0.8 ? 'incident' : 'runbook' } : {}),
        dupFingerprint: `dup${i % 2000}`,
        verdict: pick(rng, VERDICTS),
        resolvable: rng() < 0.97,
        threadId: `th${out.length}`,
        at,
      });
      pending.set(fingerprint, n + 1);
      if (n === 0) openFps.push(fingerprint);
      recentTriggers.push(i);
      if (recentTriggers.length > 200) recentTriggers.shift();
    } else if (u < 0.85) {
      const j = Math.floor(rng() * openFps.length);
      const fingerprint = openFps[j] as string;
      out.push({ type: 'resolve', fingerprint, at });
      const n = (pending.get(fingerprint) ?? 1) - 1;
      pending.set(fingerprint, n);
      if (n === 0) {
        openFps[j] = openFps[openFps.length - 1] as string;
        openFps.pop();
      }
    } else if (u < 0.97) {
      const v = rng();
      out.push({
        type: 'feedback',
        triggerKey: triggerKey(pick(rng, recentTriggers)),
        user: `u${Math.floor(rng() * shape.users)}`,
        vote: v < 0.6 ? 'up' : v < 0.9 ? 'down' : 'clear',
        at,
      });
    } else if (u < 0.99) {
      out.push({
        type: 'silence',
        triggerKey: triggerKey(pick(rng, recentTriggers)),
        user: `u${Math.floor(rng() * shape.users)}`,
        until: new Date(t + 3_600_000).toISOString(),
        at,
      });
    } else {
      const i = pick(rng, recentTriggers);
      out.push({ type: 'confirm', entry: ledgerEntryId(i % shape.entries), dupFingerprint: `dup${i % 2000}`, at });
    }
  }
  return out;
}
