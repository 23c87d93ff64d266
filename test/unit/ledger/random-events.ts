import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import type { Verdict } from '../../../src/core/verdict.js';
import { at } from './ledger-events-fixture.js';
import { createRng } from '../../../src/core/eval/prng.js';

/** Deterministic PRNG (the benchmark's mulberry32) so a failing sequence reproduces by seed. */
export const prng = createRng;

const VERDICTS: Verdict[] = ['action_required', 'action_suggested', 'inconclusive', 'no_action'];

/** A random but plausible event stream over a few fingerprints, triggers, entries and users. */
export function randomEvents(n: number, seed: number): LedgerEvent[] {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const fps = ['f0', 'f1', 'f2', 'f3', 'f4', 'gitops:a', 'reinvestigate:b', '__proto__'];
  const triggers = ['t0', 't1', 't2', 'constructor'];
  const entries = ['e0', 'e1', 'e2', undefined];
  const users = ['ann', 'bob', 'eve'];
  const out: LedgerEvent[] = [];
  let m = 0;
  for (let i = 0; i < n; i++) {
    m += Math.floor(r() * 30);
    const p = r();
    if (p < 0.35) {
      const fingerprint = pick(fps);
      const entry = pick(entries);
      out.push({
        type: 'open',
        fingerprint,
        triggerKey: pick(triggers),
        kind: entry === undefined ? 'fresh' : pick(['recall', 'fresh'] as const),
        ...(entry === undefined ? {} : { entry, answerKind: pick(['incident', 'runbook'] as const) }),
        dupFingerprint: `d${Math.floor(r() * 4)}`,
        ...(r() < 0.3 ? { curatedUrl: `https://git/pr/${i}` } : {}),
        verdict: pick(VERDICTS),
        resolvable: !fingerprint.includes(':'),
        ...(r() < 0.5 ? { threadId: `th${i}` } : {}),
        at: at(m),
      });
    } else if (p < 0.65) {
      out.push({ type: 'resolve', fingerprint: pick(fps), at: at(m) });
    } else if (p < 0.85) {
      out.push({ type: 'feedback', triggerKey: pick(triggers), user: pick(users), vote: pick(['up', 'down', 'clear'] as const), at: at(m) });
    } else if (p < 0.93) {
      out.push({ type: 'silence', triggerKey: pick(triggers), user: pick(users), until: at(m + Math.floor(r() * 240)), at: at(m) });
    } else {
      out.push({ type: 'confirm', entry: pick(['e0', 'e1', 'e2']), dupFingerprint: `d${Math.floor(r() * 4)}`, at: at(m) });
    }
  }
  return out;
}
