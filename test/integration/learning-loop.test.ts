/**
 * The learning loop over HTTP against the real `reprise serve` (issue 2, first "Done when"):
 * firing → instant recall of an Incident → resolve pairs with it → the track record rises and
 * the confidence does not drop; then firings left unresolved past the resolve window → the
 * entry decays below the floor → recall refused by the outcome gate → the thread falls through
 * with recurrence facts and a near miss / runbook, clearly marked. Each run's `/metrics` says
 * what the loop did (issue 7 item 3): recall decisions and the gate that stopped one, webhook
 * latency, ledger appends by type, console deliveries.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKOUT_ENTRY, SAMPLE_POD, crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { recallJson } from './helpers/recall-cli.js';
import { cleanup, makeTmpDir, spawnBot } from './helpers/spawn-bot.js';
import { scrape, type Exposition } from '../helpers/prom-text.js';
import { waitFor } from '../helpers/wait-for.js';

const CATALOG = 'catalog';
/** Short enough for a test to outwait, long enough that two quick firings are both "in progress". */
const WINDOW_MS = 400;

/** Scrapes until `settled` holds (a delivery is counted just after its transcript line is written). */
async function scrapeWhen(url: string, settled: (m: Exposition) => boolean, timeoutMs?: number): Promise<Exposition> {
  let last: Exposition | undefined;
  try {
    return await waitFor(
      async () => {
        last = await scrape(url);
        return settled(last) ? last : undefined;
      },
      { what: 'the metrics to settle', ...(timeoutMs ? { timeoutMs } : {}) },
    );
  } catch (err) {
    const ours = (last?.samples ?? []).filter((s) => s.name.startsWith('reprise_')).map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`);
    throw new Error(`${(err as Error).message}; last scrape:\n${ours.join('\n')}`, { cause: err });
  }
}

afterEach(cleanup);

describe('the learning loop over HTTP', () => {
  it('recalls, pairs the resolve, raises the track record, then decays below the floor and falls through', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    const store = `sqlite://${join(dir, 'reprise.sqlite')}`;
    const config = join(dir, 'reprise.yaml');
    writeFileSync(config, `ledger:\n  resolve_window: ${WINDOW_MS}ms\n`);

    // ── Run 1: one firing, recalled instantly; its resolve pairs into the same thread.
    const bot = await spawnBot({ dataDir: dir, transcript: join(dir, 't1.jsonl'), args: ['--config', config] });
    const fired = await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: SAMPLE_POD }));
    expect(fired.status, fired.text).toBe(202);
    const firedBody = fired.json as WebhookAccepted;
    expect(firedBody.accepted).toBe(1);
    expect(firedBody.results[0]?.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });

    const rca = (await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'))).find((l) => l.kind === 'rca');
    expect(rca, 'an rca line in the transcript').toBeDefined();
    expect(rca!.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    expect(rca!.text).toContain('Instant recall');
    expect(rca!.text).toContain('first time seen');

    const resolved = await postAlert(bot.url, crashLoopPayload({ status: 'resolved', pod: SAMPLE_POD }));
    expect(resolved.status, resolved.text).toBe(202);
    expect((resolved.json as WebhookAccepted).results[0]).toMatchObject({ status: 'resolved', paired: true, threadId: rca!.threadId });
    const reply = (await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'resolved'))).find((l) => l.kind === 'resolved');
    expect(reply, 'a resolved line in the transcript').toBeDefined();
    expect(reply!.threadId).toBe(rca!.threadId);
    expect(reply!.triggerKey).toBe(rca!.triggerKey);
    expect(reply!.text).toMatch(/✅ resolved after \d+ min/);

    // What run 1's /metrics says: one instant recall, two webhooks, the open and the resolve
    // appended, the card posted and restated on the console, nothing left in the outbox.
    const m1 = await scrapeWhen(
      bot.url,
      (m) => (m.value('reprise_outbox_pending') ?? 1) === 0 && (m.value('reprise_chat_deliveries_total', { surface: 'console', op: 'update' }) ?? 0) >= 1,
    );
    expect(m1.value('reprise_recall_decisions_total', { answer: 'incident' })).toBe(1);
    expect(m1.value('reprise_recall_decisions_total', { answer: 'runbook' })).toBe(0);
    expect(m1.value('reprise_recall_decisions_total', { answer: 'none' })).toBe(0);
    expect(m1.value('reprise_recall_stopped_total')).toBe(0);
    expect(m1.value('reprise_webhook_duration_seconds_count', { source: 'alertmanager' })).toBe(2);
    expect(m1.value('reprise_webhook_duration_seconds_count', { source: 'pagerduty' })).toBe(0);
    expect(m1.value('reprise_webhook_alerts_total', { source: 'alertmanager' })).toBe(2);
    expect(m1.value('reprise_ledger_appended_total', { type: 'open' })).toBe(1);
    expect(m1.value('reprise_ledger_appended_total', { type: 'resolve' })).toBe(1);
    expect(m1.value('reprise_ledger_appended_total', { type: 'outbox' })).toBeGreaterThanOrEqual(3);
    expect(m1.value('reprise_ledger_appended_total', { type: 'delivered' })).toBe(m1.value('reprise_ledger_appended_total', { type: 'outbox' }));
    expect(m1.value('reprise_chat_deliveries_total', { surface: 'console', op: 'post' })).toBe(1);
    expect(m1.value('reprise_chat_delivery_failures_total', { surface: 'console' })).toBe(0);
    expect(m1.value('reprise_ledger_events')).toBe(m1.value('reprise_ledger_appended_total'));
    expect(m1.value('reprise_leader')).toBe(1);
    expect(m1.value('reprise_ready')).toBe(1);
    expect(m1.value('reprise_outbox_oldest_pending_age_seconds')).toBe(0);
    expect(m1.value('reprise_catalog_entries')).toBeGreaterThan(0);

    expect(await bot.stop()).toEqual({ code: 0, signal: null });

    // The rate rose from ungraded to (1 resolved + 1) / (1 concluded + 2) = 0.667, and the
    // confidence did not drop: the factor stays 1 after a success.
    const [afterResolve] = await recallJson(crashLoopPayload({ status: 'firing' }), { catalog: CATALOG, store, dir, name: 'after-resolve', config });
    const passed = afterResolve!.trace.find((s) => s.gate === 'outcome' && s.entry === CHECKOUT_ENTRY);
    expect(passed, JSON.stringify(afterResolve!.trace)).toBeDefined();
    expect(passed!.passed).toBe(true);
    expect(passed!.value as number).toBeCloseTo(2 / 3, 2);
    expect(passed!.reason).toContain('confidence factor (…+1)/(…+1) = 1');
    expect(afterResolve!.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    expect(afterResolve!.answer!.confidence).toBeGreaterThanOrEqual(firedBody.results[0]!.answer!.confidence);

    // ── Run 2, same data dir: firings on new pods (new fingerprints), never resolved, each one
    // after the previous one's resolve window lapsed.
    const bot2 = await spawnBot({ dataDir: dir, transcript: join(dir, 't2.jsonl'), args: ['--config', config] });
    let fallThrough: { body: WebhookAccepted; text: string; answer: unknown; n: number } | undefined;
    let lapses = 0;
    for (let n = 1; n <= 6 && !fallThrough; n++) {
      // Time passing is the input here: the bot's own clock must run past the previous firing's
      // resolve window (WINDOW_MS, with margin) for it to count as unresolved.
      await waitFor(() => Date.now() >= lapses, "the previous firing's resolve window to lapse");
      const pod = `checkout-api-7d9f8c6b5-r${n}x9z`;
      const res = await postAlert(bot2.url, crashLoopPayload({ status: 'firing', pod }));
      lapses = Date.now() + WINDOW_MS + 100;
      expect(res.status, res.text).toBe(202);
      const lines = (await bot2.waitForTranscript((ls) => ls.filter((l) => l.kind === 'rca').length >= n)).filter((l) => l.kind === 'rca');
      expect(lines).toHaveLength(n);
      const line = lines[n - 1]!;
      // Recurrence continues across the restart: run 1 saw one firing.
      expect(line.text).toContain(`🔁 #${n + 1}`);
      if (line.answer === null || line.answer.kind === 'runbook') fallThrough = { body: res.json as WebhookAccepted, text: line.text, answer: line.answer, n };
      else expect(line.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    }
    expect(fallThrough, 'the entry never fell below the floor within 6 unresolved firings').toBeDefined();
    const ft = fallThrough!;
    // rate 0.667 → (1 + 1)/(2 + 2) = 0.5 (still ≥ floor) → 2/5 = 0.4: the third firing is refused.
    expect(ft.n).toBe(3);
    expect(ft.body.results[0]?.answer ?? null).toEqual(ft.answer);
    expect(ft.text).toContain('Fall-through');
    expect(ft.text).toContain('Recall refused');
    expect(ft.text).toContain(CHECKOUT_ENTRY);
    expect(ft.text).toMatch(/below floor/);
    expect(ft.text).toContain('🔁 #');
    expect(ft.text).toMatch(/Near miss|Runbook/);
    expect(ft.text).not.toContain('Instant recall');

    // Run 2's /metrics (counters start again with the process): two instant recalls, then the
    // third decided by the outcome gate, with the answer the thread led with instead.
    const m2 = await scrapeWhen(bot2.url, (m) => (m.value('reprise_chat_deliveries_total', { surface: 'console', op: 'post' }) ?? 0) >= 3);
    const fellTo = (ft.answer as { kind?: string } | null)?.kind ?? 'none';
    expect(m2.value('reprise_recall_decisions_total', { answer: 'incident' })).toBe(2);
    expect(m2.value('reprise_recall_decisions_total', { answer: fellTo })).toBe(1);
    expect(m2.value('reprise_recall_decisions_total')).toBe(3);
    expect(m2.value('reprise_recall_stopped_total', { gate: 'outcome' })).toBe(1);
    expect(m2.value('reprise_recall_stopped_total')).toBe(1);
    expect(m2.value('reprise_webhook_duration_seconds_count', { source: 'alertmanager' })).toBe(3);
    expect(m2.value('reprise_webhook_duration_seconds_bucket', { source: 'alertmanager', le: '+Inf' })).toBe(3);
    expect(m2.value('reprise_ledger_appended_total', { type: 'open' })).toBe(3);
    expect(m2.value('reprise_ledger_appended_total', { type: 'resolve' })).toBe(0);
    // The ledger's head counts run 1's events too; this process appended only its own.
    expect(m2.value('reprise_ledger_events')!).toBeGreaterThan(m2.value('reprise_ledger_appended_total')!);
    expect(m2.value('reprise_incidents_total', { outcome: 'recall_incident' })).toBe(2);

    expect(await bot2.stop()).toEqual({ code: 0, signal: null });

    // The gate trace says why: the outcome gate refused the entry, below the floor.
    const [refused] = await recallJson(crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-z9z9z' }), {
      catalog: CATALOG,
      store,
      dir,
      name: 'refused',
      config,
    });
    const step = refused!.trace.find((s) => s.gate === 'outcome' && s.entry === CHECKOUT_ENTRY);
    expect(step, JSON.stringify(refused!.trace)).toBeDefined();
    expect(step!.passed).toBe(false);
    expect(step!.reason).toMatch(/below floor/);
    expect(step!.value as number).toBeLessThan(0.5);
    expect(refused!.answer?.kind === 'incident' && refused!.answer.entry === CHECKOUT_ENTRY).toBe(false);
  });

  it('keeps thread ids unique across a restart, so a late resolve replies into exactly its own thread', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const transcript = join(dir, 't.jsonl'); // one transcript across both runs, as a real deployment has

    const first = await spawnBot({ dataDir: dir, transcript });
    expect((await postAlert(first.url, crashLoopPayload({ status: 'firing', pod: SAMPLE_POD }))).status).toBe(202);
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = await spawnBot({ dataDir: dir, transcript });
    expect((await postAlert(second.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-y2k4q' }))).status).toBe(202);
    const res = await postAlert(second.url, crashLoopPayload({ status: 'resolved', pod: SAMPLE_POD }));
    expect(res.status).toBe(202);
    const lines = await second.waitForTranscript((ls) => ls.filter((l) => l.kind === 'rca').length === 2 && ls.some((l) => l.kind === 'resolved'));
    const rcas = lines.filter((l) => l.kind === 'rca');
    expect(rcas).toHaveLength(2);
    const reply = lines.find((l) => l.kind === 'resolved');
    expect(reply?.threadId).toBe(rcas[0]!.threadId);
    // The second run's thread must not reuse the first run's id, or the resolve lands in both.
    expect(rcas[1]!.threadId, 'thread id reused after a restart').not.toBe(rcas[0]!.threadId);
    expect(rcas.filter((l) => l.threadId === reply!.threadId)).toHaveLength(1);
  });
});
