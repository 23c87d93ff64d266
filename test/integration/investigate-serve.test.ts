/**
 * The investigator wired into `reprise serve` (issue 11 with the chat issue's threads): the
 * thread is posted at once, the model's work follows as a job — rerank → confirm → verify on a
 * recall (2 model calls), a full investigation when verify rejects, a waiting investigation
 * cancelled by the resolve — and each result is recorded with its open and delivered into the
 * same thread with its cost footer. `/metrics` counts each model call by role and purpose, its
 * tokens, the investigations by status, the recall decision the model's match gate settled, and
 * the daily token budget running out (issue 7 item 3).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { byRole, fake, finding, OOM_ENTRY, POISONED_ENTRY, roleOf, toolCall, serveModelConfig, useModelAndTools, verdict } from './helpers/investigation.js';
import { cleanup, makeTmpDir, runCli, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { scrape, type Exposition } from '../helpers/prom-text.js';
import { waitFor } from '../helpers/wait-for.js';

useModelAndTools();

afterEach(async () => {
  await cleanup();
});

async function serveWithModel(investigateAfter = '60s', modelLines: string[] = []): Promise<{ bot: BotProcess; dir: string }> {
  const dir = makeTmpDir();
  const config = join(dir, 'reprise.yaml');
  writeFileSync(
    config,
    serveModelConfig({ trigger: [`  investigate_after: ${investigateAfter}`], model: ['  prices: { main-model: { input: 1, output: 4 } }', ...modelLines] }),
  );
  return { bot: await spawnBot({ dataDir: dir, args: ['--config', config] }), dir };
}

const post = (bot: BotProcess, payload: unknown) => postAlert(bot.url, payload, { authorization: 'Bearer test-token-for-investigations' });
/** Scrapes until `settled` holds: the job's counters move just after its finding is recorded. */
async function metricsWhen(bot: BotProcess, settled: (m: Exposition) => boolean): Promise<Exposition> {
  let last: Exposition | undefined;
  try {
    return await waitFor(async () => {
      last = await scrape(bot.url);
      return settled(last) ? last : undefined;
    }, 'the metrics to settle');
  } catch (err) {
    const moved = (last?.samples ?? []).filter((x) => x.name.startsWith('reprise_') && x.value !== 0);
    throw new Error(`${(err as Error).message}:\n${moved.map((x) => `${x.name}${JSON.stringify(x.labels)} ${x.value}`).join('\n')}`, { cause: err });
  }
}

const rerankReply = (entry: string, confidence: number) => ({ content: JSON.stringify({ entry, confidence, reason: 'same workload, same failure' }) });

async function ledgerEvents(dir: string): Promise<Array<Record<string, unknown>>> {
  const r = await runCli(['ledger', 'events', '--json'], { env: { REPRISE_DATA_DIR: dir } });
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('serve with a model', () => {
  it(
    'posts at once, then delivers the verified recall into the thread: rerank + verify, 2 model calls, recorded as a recall',
    { timeout: 60_000 },
    async () => {
      fake.respond(byRole({ rerank: [rerankReply(OOM_ENTRY, 0.9)], verify: [verdict('supported', 0.95)] }));
      const { bot, dir } = await serveWithModel();
      const res = await post(bot, crashLoopPayload({ status: 'firing' }));
      expect(res.status, res.text).toBe(202);
      const lines = await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'detail'), 20_000);
      const rca = lines.find((l) => l.kind === 'rca')!;
      expect(rca.text).toContain('the model is checking whether memory answers this');
      expect(fake.requests.map(roleOf)).toEqual(['rerank', 'verify']);
      const update = lines.find((l) => l.kind === 'update')!;
      expect(update.threadId).toBe(rca.threadId);
      expect(update.text).toContain('⚡ Instant recall: checkout-api crashlooping');
      const detail = lines.find((l) => l.kind === 'detail')!;
      expect(detail.threadId).toBe(rca.threadId);
      expect(detail.text).toContain('🧭 Finding — ');
      expect(detail.text).not.toContain('*Finding*');
      expect(detail.text).toContain(`Answered from your knowledge base: ${OOM_ENTRY}`);
      expect(detail.text).toMatch(/verified ✓ · 2 model calls · 2\d\d in \/ 4\d out tokens · ~\$0\.000\d+ · main-model@[0-9a-f]{12}/);
      const events = await ledgerEvents(dir);
      const recorded = events.find((e) => e['type'] === 'finding')!;
      expect(recorded).toMatchObject({ kind: 'recall', status: 'completed', entry: OOM_ENTRY, calls: 2 });

      const m = await metricsWhen(bot, (x) => (x.value('reprise_investigations_total') ?? 0) >= 1);
      expect(m.value('reprise_model_calls_total', { role: 'rerank', purpose: 'rerank', outcome: 'ok' })).toBe(1);
      expect(m.value('reprise_model_calls_total', { role: 'verify', purpose: 'verify', outcome: 'ok' })).toBe(1);
      expect(m.value('reprise_model_calls_total')).toBe(2);
      expect(m.value('reprise_model_call_duration_seconds_count', { role: 'rerank' })).toBe(1);
      // The tokens the metrics counted are the ones the finding recorded, and the day's spend.
      expect(m.value('reprise_model_tokens_total', { type: 'prompt' })).toBe(recorded['tokensIn']);
      expect(m.value('reprise_model_tokens_total', { type: 'completion' })).toBe(recorded['tokensOut']);
      expect(m.value('reprise_model_daily_tokens_spent')).toBe((recorded['tokensIn'] as number) + (recorded['tokensOut'] as number));
      expect(m.value('reprise_model_daily_budget_exhausted')).toBe(0);
      expect(m.has('reprise_model_daily_tokens_remaining')).toBe(false);
      expect(m.value('reprise_investigations_total', { status: 'completed', reason: 'none' })).toBe(1);
      expect(m.value('reprise_investigations_total')).toBe(1);
      // The recall was the model's to decide: one instant recall, settled once, after verify.
      expect(m.value('reprise_recall_decisions_total', { answer: 'incident' })).toBe(1);
      expect(m.value('reprise_recall_decisions_total')).toBe(1);
      expect(m.value('reprise_recall_stopped_total')).toBe(0);
      expect(await bot.stop()).toEqual({ code: 0, signal: null });
    },
  );

  it('when verify rejects a poisoned recall, runs the full investigation and delivers its Finding instead', { timeout: 60_000 }, async () => {
    fake.respond(
      byRole({
        rerank: [rerankReply(POISONED_ENTRY, 0.8)],
        verify: [verdict('rejected', 0.1, ['live state shows OOMKilled, exit 137; nothing about TLS']), verdict('supported', 0.8)],
        investigate: [toolCall('k8s__pod_status', { namespace: 'payments' }), finding()],
      }),
    );
    const { bot, dir } = await serveWithModel();
    expect((await post(bot, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
    const lines = await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'detail'), 20_000);
    const detail = lines.find((l) => l.kind === 'detail')!;
    expect(detail.text).toContain('checkout-api is OOMKilled');
    expect(detail.text).not.toContain(POISONED_ENTRY);
    const f = (await ledgerEvents(dir)).find((e) => e['type'] === 'finding');
    expect(f).toMatchObject({ kind: 'fresh', status: 'completed', verdict: 'action_required' });
    expect(f).not.toHaveProperty('entry');

    const m = await metricsWhen(bot, (x) => (x.value('reprise_investigations_total') ?? 0) >= 1);
    // Verify refused the recall: the decision says so, and the fresh run is what completed.
    expect(m.value('reprise_recall_stopped_total', { gate: 'verify' })).toBe(1);
    expect(m.value('reprise_recall_stopped_total')).toBe(1);
    expect(m.value('reprise_recall_decisions_total', { answer: 'incident' })).toBe(0);
    expect(m.value('reprise_recall_decisions_total')).toBe(1);
    expect(m.value('reprise_investigations_total', { status: 'completed' })).toBe(1);
    expect(m.value('reprise_model_calls_total', { role: 'rerank', purpose: 'rerank' })).toBe(1);
    expect(m.value('reprise_model_calls_total', { role: 'verify', purpose: 'verify' })).toBe(2);
    expect(m.value('reprise_model_calls_total', { role: 'main', purpose: 'investigate', outcome: 'ok' })).toBe(2);
    expect(m.value('reprise_model_calls_total')).toBe(fake.requests.length);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });

  it('waits investigate_after on a miss, and a resolve meanwhile cancels it: recorded, no model call', { timeout: 60_000 }, async () => {
    fake.respond(() => ({ status: 418 }));
    const { bot, dir } = await serveWithModel('30s');
    // An alert no catalog entry is scoped to: no recall candidate, so an investigation waits.
    const payload = crashLoopPayload({ status: 'firing', pod: 'billing-api-7d9f8c6b5-x2k4q' });
    expect((await post(bot, payload)).status).toBe(202);
    const rca = (await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'))).find((l) => l.kind === 'rca')!;
    expect(rca.text).toContain('an investigation starts in 30 s unless the alert resolves first');
    expect((await post(bot, crashLoopPayload({ status: 'resolved', pod: 'billing-api-7d9f8c6b5-x2k4q' }))).status).toBe(202);
    await bot.waitForLog((l) => l.msg === 'investigation cancelled: resolved before it started');
    expect(fake.requests).toEqual([]);
    expect((await ledgerEvents(dir)).find((e) => e['type'] === 'finding')).toMatchObject({ status: 'cancelled', calls: 0 });
    const m = await metricsWhen(bot, (x) => (x.value('reprise_investigations_total') ?? 0) >= 1);
    expect(m.value('reprise_investigations_total', { status: 'cancelled', reason: 'resolved' })).toBe(1);
    expect(m.value('reprise_model_calls_total') ?? 0).toBe(0);
    // No entry is scoped to billing-api: decided at intake, nothing agreed structurally.
    expect(m.value('reprise_recall_stopped_total', { gate: 'structural' })).toBe(1);
    expect(m.value('reprise_recall_decisions_total', { answer: 'incident' })).toBe(0);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });

  it('investigates a critical miss at once, without waiting', { timeout: 60_000 }, async () => {
    fake.respond(
      byRole({
        investigate: [finding({ summary: 'billing-api keeps restarting: its config map is missing a key', verdict: 'action_suggested' })],
        verify: [verdict('supported', 0.8)],
      }),
    );
    const { bot } = await serveWithModel('10m');
    expect((await post(bot, crashLoopPayload({ status: 'firing', severity: 'critical', pod: 'billing-api-7d9f8c6b5-x2k4q' }))).status).toBe(202);
    const lines = await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'detail'), 20_000);
    expect(lines.find((l) => l.kind === 'detail')!.text).toContain('billing-api keeps restarting');
    expect(lines.find((l) => l.kind === 'update')!.text).toContain('🧭 billing-api keeps restarting');
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });
  it('exposes the daily token budget running out, and counts the investigation it skips', { timeout: 60_000 }, async () => {
    fake.respond(
      byRole({
        investigate: [finding({ summary: 'billing-api keeps restarting: its config map is missing a key', verdict: 'action_suggested' })],
        verify: [verdict('supported', 0.8)],
      }),
    );
    const { bot } = await serveWithModel('10m', ['  daily_token_budget: 150']);
    const before = await scrape(bot.url);
    expect(before.value('reprise_model_daily_token_budget')).toBe(150);
    expect(before.value('reprise_model_daily_tokens_remaining')).toBe(150);
    expect(before.value('reprise_model_daily_budget_exhausted')).toBe(0);

    // A critical miss investigates at once: 2 calls of 120 tokens each spend the day's 150.
    expect((await post(bot, crashLoopPayload({ status: 'firing', severity: 'critical', pod: 'billing-api-7d9f8c6b5-x2k4q' }))).status).toBe(202);
    const spent = await metricsWhen(bot, (x) => (x.value('reprise_investigations_total') ?? 0) >= 1);
    expect(spent.value('reprise_investigations_total', { status: 'completed' })).toBe(1);
    expect(spent.value('reprise_model_daily_tokens_spent')).toBeGreaterThanOrEqual(150);
    expect(spent.value('reprise_model_daily_tokens_remaining')).toBe(0);
    expect(spent.value('reprise_model_daily_budget_exhausted')).toBe(1);

    // The next one is skipped without a model call, and counted with its reason.
    const calls = fake.requests.length;
    expect((await post(bot, crashLoopPayload({ status: 'firing', severity: 'critical', pod: 'ledger-api-7d9f8c6b5-q8w2e' }))).status).toBe(202);
    const skipped = await metricsWhen(bot, (x) => (x.value('reprise_investigations_total') ?? 0) >= 2);
    expect(skipped.value('reprise_investigations_total', { status: 'skipped', reason: 'daily_budget' })).toBe(1);
    expect(fake.requests.length).toBe(calls);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });
});
