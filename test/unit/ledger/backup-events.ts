/**
 * A realistic ledger for the backup and upgrade tests: every event kind the bot records
 * (opens recalled and fresh, resolves, votes changed and cleared, silences, notes, confirmations,
 * outbox items, deliveries and a failure, findings, held and released firings, forge intents
 * and their outcomes), over a few triggers and entries, then a deterministic random tail.
 */
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { at } from './ledger-events-fixture.js';
import { randomEvents } from './random-events.js';

const TK = ['kubepodcrashlooping|shop|deployment|api|prod', 'kubejobfailed|batch|job|nightly|prod', 'highlatency|web|deployment|front|prod', '__proto__'];
const ENTRIES = ['incidents/api-oom.md', 'runbooks/job-retry.md'];

/** One incident's life: open → outbox → delivered → finding → votes → note → resolve. */
function incident(i: number, m: number, o: { trigger: string; entry?: string; resolve: boolean }): LedgerEvent[] {
  const openId = `open-${i}`;
  const fingerprint = `fp-${i % 5}`;
  const out: LedgerEvent[] = [
    {
      type: 'open',
      id: openId,
      fingerprint,
      triggerKey: o.trigger,
      kind: o.entry ? 'recall' : 'fresh',
      ...(o.entry ? { entry: o.entry, answerKind: i % 3 === 0 ? 'runbook' : 'incident' } : {}),
      dupFingerprint: `dup-${i % 3}`,
      verdict: i % 4 === 0 ? 'inconclusive' : 'action_required',
      resolvable: true,
      source: 'alertmanager',
      startsAt: at(m - 1),
      ...(o.entry ? {} : { investigate: { incident: { alertname: 'KubeJobFailed', labels: { job: `nightly-${i}`, ':odd': ':value' } } } }),
      at: at(m),
    },
    {
      type: 'outbox',
      id: `ob-${i}`,
      transport: 'console',
      op: 'post',
      openId,
      channel: '#alerts',
      // A stand-in card: the export copies views as they are (its shape is the renderer's business).
      view: { kind: 'card', title: `incident ${i}`, lines: ['a', ':colon-led'] } as never,
      at: at(m),
    },
    {
      type: 'delivered',
      openId,
      fingerprint,
      transport: 'console',
      messageRef: `msg-${i}`,
      channel: '#alerts',
      outboxId: `ob-${i}`,
      root: true,
      at: at(m + 1),
    },
  ];
  if (!o.entry) {
    out.push({
      type: 'finding',
      openId,
      fingerprint,
      triggerKey: o.trigger,
      kind: 'fresh',
      status: 'completed',
      verdict: 'action_suggested',
      confidence: 0.7,
      summary: 'the job ran out of memory',
      checked: ['kubectl get pods'],
      calls: 3,
      tokensIn: 1200,
      tokensOut: 300,
      at: at(m + 2),
    });
    out.push({
      type: 'curate',
      id: `cur-${i}`,
      subject: 'finding',
      openId,
      triggerKey: o.trigger,
      dupFingerprint: `dup-${i % 3}`,
      draft: {
        title: 'Job OOM',
        alertname: 'KubeJobFailed',
        where: 'prod/batch/nightly',
        symptom: 'job failed',
        summary: 'oom',
        verdict: 'action_suggested',
        confidence: 0.7,
        causes: [{ cause: 'memory limit', confidence: 0.7, evidence: ['OOMKilled'] }],
        actions: [{ action: 'raise the limit', reversible: true }],
        ruledOut: [],
        investigator: 'fake · abc',
      },
      at: at(m + 2),
    });
    out.push({
      type: 'curated',
      id: `cur-${i}`,
      subject: 'finding',
      openId,
      triggerKey: o.trigger,
      decision: i % 2 === 0 ? 'novel' : 'below_bar',
      ...(i % 2 === 0 ? { url: `https://git.example/pr/${i}`, number: i } : { detail: 'confidence' }),
      at: at(m + 3),
    });
  }
  out.push({
    type: 'feedback',
    triggerKey: o.trigger,
    user: 'ann',
    vote: i % 2 === 0 ? 'up' : 'down',
    openId,
    via: 'slack',
    eventId: `ev-${i}-a`,
    at: at(m + 4),
  });
  out.push({ type: 'feedback', triggerKey: o.trigger, user: 'bob', vote: 'up', openId, via: 'cli', at: at(m + 5) });
  if (i % 3 === 1) out.push({ type: 'feedback', triggerKey: o.trigger, user: 'bob', vote: 'clear', openId, via: 'cli', at: at(m + 6) });
  out.push({
    type: 'note',
    triggerKey: o.trigger,
    openId,
    user: 'eve',
    text: `note ${i}: it was the cache "again"`,
    via: 'matrix',
    eventId: `note-${i}`,
    at: at(m + 7),
  });
  if (i % 4 === 2) out.push({ type: 'silence', triggerKey: o.trigger, user: 'ann', until: at(m + 120), via: 'slack', at: at(m + 8) });
  if (o.entry && i % 2 === 1) out.push({ type: 'confirm', entry: o.entry, dupFingerprint: `dup-${i % 3}`, at: at(m + 9) });
  if (o.resolve) out.push({ type: 'resolve', fingerprint, triggerKey: o.trigger, endsAt: at(m + 10), at: at(m + 10) });
  return out;
}

/** The ledger the backup tests export and import (deterministic). */
export function realisticEvents(incidents = 24, randomTail = 300): LedgerEvent[] {
  const out: LedgerEvent[] = [];
  for (let i = 0; i < incidents; i++) {
    const m = i * 30;
    out.push(...incident(i, m, { trigger: TK[i % TK.length]!, ...(i % 3 === 2 ? {} : { entry: ENTRIES[i % ENTRIES.length]! }), resolve: i % 5 !== 4 }));
    if (i === 5) {
      // A firing held by the debounce, then released; an undeliverable message.
      out.push({
        type: 'noise',
        action: 'hold',
        fingerprint: 'fp-held',
        triggerKey: TK[0]!,
        reason: 'debounce',
        detail: 'held 2m',
        holdId: 'h1',
        until: at(m + 2),
        incident: { alertname: 'KubePodCrashLooping' },
        route: { channel: '#alerts' },
        at: at(m),
      });
      out.push({
        type: 'noise',
        action: 'release',
        fingerprint: 'fp-held',
        triggerKey: TK[0]!,
        reason: 'debounce',
        detail: 'released',
        holdId: 'h1',
        at: at(m + 2),
      });
      out.push({ type: 'outbox', id: 'ob-lost', transport: 'console', op: 'reply', openId: 'open-5', view: { kind: 'notice' } as never, at: at(m + 2) });
      out.push({ type: 'outbox_failed', id: 'ob-lost', reason: 'channel_not_found', at: at(m + 3) });
    }
  }
  const last = incidents * 30 + 60;
  // Shifted past the incidents, so times keep increasing.
  for (const e of randomEvents(randomTail, 7)) out.push({ ...e, at: new Date(Date.parse(e.at) + last * 60_000).toISOString() } as LedgerEvent);
  return out;
}
