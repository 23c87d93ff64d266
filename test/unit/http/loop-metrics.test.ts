/**
 * The loop's series, fed by the real bot, outbox and ledger through the observer port: recall
 * decisions once durable, every delivery outcome by surface, ledger appends by type, and labels
 * that stay inside their closed sets whatever they are handed.
 */
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import type { Incident } from '../../../src/core/types.js';
import { registerLoopMetrics } from '../../../src/http/loop-metrics.js';
import type { InvestigationEnd } from '../../../src/ports/loop-observer.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { parseExposition, type Exposition } from '../../helpers/prom-text.js';
import { botHarness } from '../bot/bot-harness.js';
import { alert, fixedSnapshot, incidentEntry } from '../recall/recall-fixtures.js';

const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });
const firing = (fingerprint = 'fp-1', namespace = 'payments', pod = 'checkout-api-7d9f8c6b5-x2k4q'): Incident =>
  alert({ alertname: 'KubePodCrashLooping', fingerprint, labels: { namespace, pod }, annotations: { summary: 'crash looping' } });

async function loopHarness(transport: Parameters<typeof botHarness>[0]['transports'] = [{}], store?: KeyValueStore) {
  const registry = new Registry();
  const metrics = registerLoopMetrics(registry, ['rec']);
  const h = await botHarness({ snapshot, transports: transport, observer: metrics, onAppend: (e) => metrics.ledgerAppended(e), ...(store ? { store } : {}) });
  return { ...h, metrics, scrape: async (): Promise<Exposition> => parseExposition(await registry.metrics()) };
}

describe('loop metrics', () => {
  it('counts an instant recall and a structural stop, each once, with the ledger events they appended', async () => {
    const h = await loopHarness();
    await h.bot.handle(incidentIntents([firing('fp-1'), firing('fp-2', 'billing', 'billing-api-7d9f8c6b5-x2k4q')]));
    await h.settle();
    const m = await h.scrape();
    expect(m.value('reprise_recall_decisions_total', { answer: 'incident' })).toBe(1);
    expect(m.value('reprise_recall_decisions_total', { answer: 'none' })).toBe(1);
    expect(m.value('reprise_recall_stopped_total', { gate: 'structural' })).toBe(1);
    expect(m.value('reprise_recall_stopped_total')).toBe(1);
    // Every event the ledger holds was counted once, under its own type.
    const events = await h.events();
    const byType = new Map<string, number>();
    for (const e of events) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
    expect(byType.get('open')).toBe(2);
    for (const [type, n] of byType) expect(m.value('reprise_ledger_appended_total', { type }), type).toBe(n);
    expect(m.value('reprise_ledger_appended_total')).toBe(events.length);
    expect(m.value('reprise_chat_deliveries_total', { surface: 'rec', op: 'post' })).toBe(2);
    expect(m.value('reprise_chat_deliveries_total', { surface: 'rec', op: 'reply' })).toBe(2);
  });

  it('counts nothing for a decision whose transaction failed (the webhook is refused and sent again)', async () => {
    const store = createStore('memory://', '');
    const h = await loopHarness([{}], store);
    const append = store.appendLog.bind(store);
    store.appendLog = async () => {
      throw new Error('disk full');
    };
    await expect(h.bot.handle(incidentIntents([firing()]))).rejects.toThrow('disk full');
    store.appendLog = append;
    const m = await h.scrape();
    expect(m.value('reprise_recall_decisions_total')).toBe(0);
    expect(m.value('reprise_ledger_appended_total')).toBe(0);
  });

  it('counts a retry per failed attempt, then the delivery', async () => {
    const h = await loopHarness([{ failPost: true }]);
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    h.clock.advance(2_000);
    await h.settle();
    expect((await h.scrape()).value('reprise_chat_delivery_retries_total', { surface: 'rec' })).toBe(2);
    h.transport.opts.failPost = false;
    h.clock.advance(10_000);
    await h.settle();
    const m = await h.scrape();
    expect(m.value('reprise_chat_delivery_retries_total', { surface: 'rec' })).toBe(2);
    expect(m.value('reprise_chat_deliveries_total', { surface: 'rec', op: 'post' })).toBe(1);
    expect(m.value('reprise_chat_deliveries_total', { surface: 'rec', op: 'reply' })).toBe(1);
    expect(m.value('reprise_chat_delivery_failures_total')).toBe(0);
  });

  it('counts a permanent refusal and the reply it orphans as failures, with their reasons', async () => {
    const h = await loopHarness([{ failPost: { retryable: false } }]);
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    const m = await h.scrape();
    expect(m.value('reprise_chat_delivery_failures_total', { surface: 'rec', reason: 'refused' })).toBe(1);
    expect(m.value('reprise_chat_delivery_failures_total', { surface: 'rec', reason: 'orphaned' })).toBe(1);
    expect(m.value('reprise_chat_delivery_retries_total')).toBe(0);
    expect(m.value('reprise_ledger_appended_total', { type: 'outbox_failed' })).toBe(2);
  });

  it('counts a message given up after outbox.max_age as expired', async () => {
    const h = await loopHarness([{ failPost: true }]);
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    h.clock.advance(25 * 3_600_000);
    await h.settle();
    // The card and its reply: both were recorded a day ago.
    const m = await h.scrape();
    expect(m.value('reprise_chat_delivery_failures_total', { surface: 'rec', reason: 'expired' })).toBe(2);
    expect(m.value('reprise_chat_delivery_failures_total')).toBe((await h.events()).filter((e) => e.type === 'outbox_failed').length);
  });

  it('keeps every label inside its closed set, and starts the known series at 0', async () => {
    const registry = new Registry();
    const m = registerLoopMetrics(registry, ['slack']);
    m.deliveryEnded({ transport: 'irc', op: 'post', outcome: 'delivered' });
    m.deliveryEnded({ transport: 'slack', op: 'delete' as 'post', outcome: 'failed', reason: 'gone' as 'refused' });
    m.investigationEnded({ status: 'weird', reason: 'KubePodCrashLooping on checkout' } as unknown as InvestigationEnd);
    m.investigationEnded({ status: 'skipped', reason: 'rate_limit' });
    m.recallDecided({ answer: 'incidents/x.md' as 'incident', stoppedBy: 'payments/checkout-api' as 'margin' });
    m.ledgerAppended([{ type: 'bogus' } as never, { type: 'open' } as never, { type: 'open' } as never]);
    const x = parseExposition(await registry.metrics());
    expect(x.value('reprise_chat_deliveries_total', { surface: 'other', op: 'post' })).toBe(1);
    expect(x.value('reprise_chat_delivery_failures_total', { surface: 'slack', reason: 'other' })).toBe(1);
    expect(x.value('reprise_investigations_total', { status: 'other', reason: 'other' })).toBe(1);
    expect(x.value('reprise_investigations_total', { status: 'skipped', reason: 'rate_limit' })).toBe(1);
    expect(x.value('reprise_recall_decisions_total', { answer: 'other' })).toBe(1);
    expect(x.value('reprise_recall_stopped_total', { gate: 'other' })).toBe(1);
    expect(x.value('reprise_ledger_appended_total', { type: 'open' })).toBe(2);
    expect(x.value('reprise_ledger_appended_total', { type: 'other' })).toBe(1);
    const values = x.samples.flatMap((s) => Object.values(s.labels));
    for (const leaked of ['irc', 'delete', 'gone', 'weird', 'incidents/x.md', 'payments/checkout-api', 'bogus']) expect(values).not.toContain(leaked);
    expect(values.some((v) => v.includes('KubePodCrashLooping'))).toBe(false);
    // Known series exist before anything happened.
    const fresh = parseExposition(
      await (() => {
        const r = new Registry();
        registerLoopMetrics(r, ['console']);
        return r.metrics();
      })(),
    );
    expect(fresh.value('reprise_recall_decisions_total', { answer: 'runbook' })).toBe(0);
    expect(fresh.value('reprise_recall_stopped_total', { gate: 'verify' })).toBe(0);
    expect(fresh.value('reprise_ledger_appended_total', { type: 'finding' })).toBe(0);
    expect(fresh.value('reprise_chat_delivery_retries_total', { surface: 'console' })).toBe(0);
  });
});
