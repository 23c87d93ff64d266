import type { ConfirmEvent, FeedbackEvent, OpenEvent, ResolveEvent, SilenceEvent } from '../../../src/core/ledger-events.js';

/** Minute `m` after a fixed origin, as an ISO timestamp. */
export function at(m: number): string {
  return new Date(Date.parse('2026-03-01T00:00:00Z') + m * 60_000).toISOString();
}

export function open(fingerprint: string, m: number, o: Partial<OpenEvent> = {}): OpenEvent {
  return {
    type: 'open',
    fingerprint,
    triggerKey: 'kubepodcrashlooping|shop|deployment|api|prod',
    kind: 'recall',
    entry: 'incidents/api-oom.md',
    answerKind: 'incident',
    dupFingerprint: 'dup-1',
    verdict: 'action_required',
    resolvable: true,
    at: at(m),
    ...o,
  };
}

export function resolve(fingerprint: string, m: number): ResolveEvent {
  return { type: 'resolve', fingerprint, at: at(m) };
}

export function vote(triggerKey: string, user: string, v: FeedbackEvent['vote'], m: number): FeedbackEvent {
  return { type: 'feedback', triggerKey, user, vote: v, at: at(m) };
}

export function silence(triggerKey: string, m: number, untilM: number, user = 'ann'): SilenceEvent {
  return { type: 'silence', triggerKey, user, until: at(untilM), at: at(m) };
}

export function confirm(entry: string, m: number, dupFingerprint = 'dup-1'): ConfirmEvent {
  return { type: 'confirm', entry, dupFingerprint, at: at(m) };
}

export const TK = 'kubepodcrashlooping|shop|deployment|api|prod';
export const ENTRY = 'incidents/api-oom.md';
