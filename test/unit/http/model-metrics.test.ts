/**
 * Model series: the metered port counts each call under the role it was configured for, with
 * the engine's purpose and the outcome, adds the reported tokens, passes answers and errors
 * through untouched; the daily budget gauges read the spend at scrape time.
 */
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { registerModelMetrics } from '../../../src/http/model-metrics.js';
import { ModelError, type ChatRequest, type ChatResponse, type ModelPort } from '../../../src/ports/model.js';
import { parseExposition } from '../../helpers/prom-text.js';

function port(name: string, answer: (req: ChatRequest) => ChatResponse | Error): ModelPort {
  return {
    name,
    chat: async (req) => {
      const a = answer(req);
      if (a instanceof Error) throw a;
      return a;
    },
  };
}
const ok = (input: number, output: number): ChatResponse => ({ content: '{}', toolCalls: [], usage: { input, output }, model: 'm', finishReason: 'stop' });
const req = (purpose: ChatRequest['purpose']): ChatRequest => ({ messages: [{ role: 'user', content: 'x' }], purpose });

describe('model metrics', () => {
  it('counts calls by role, purpose and outcome, and the tokens each reported', async () => {
    const registry = new Registry();
    const mm = registerModelMetrics(registry, { budget: undefined, spentToday: () => 0 });
    const main = port('big', () => ok(100, 20));
    const failing = port('small', () => new ModelError('timeout', 'took too long'));
    // verify and rerank default to the main model's port: each is still counted under its own role.
    const models = mm.meter({ main, verify: main, rerank: main, fallback: failing });
    const answer = await models.main.chat(req('investigate'));
    expect(answer).toEqual(ok(100, 20));
    await models.main.chat(req('repair'));
    await models.rerank.chat(req('rerank'));
    await expect(models.fallback!.chat(req('investigate'))).rejects.toMatchObject({ code: 'timeout' });
    await expect(mm.meter({ main: port('x', () => new TypeError('boom')), verify: main, rerank: main }).main.chat(req('verify'))).rejects.toThrow('boom');
    expect(models.main.name).toBe('big');

    const m = parseExposition(await registry.metrics());
    expect(m.value('reprise_model_calls_total', { role: 'main', purpose: 'investigate', outcome: 'ok' })).toBe(1);
    expect(m.value('reprise_model_calls_total', { role: 'main', purpose: 'repair', outcome: 'ok' })).toBe(1);
    expect(m.value('reprise_model_calls_total', { role: 'rerank', purpose: 'rerank', outcome: 'ok' })).toBe(1);
    expect(m.value('reprise_model_calls_total', { role: 'fallback', purpose: 'investigate', outcome: 'timeout' })).toBe(1);
    expect(m.value('reprise_model_calls_total', { role: 'main', purpose: 'verify', outcome: 'other' })).toBe(1);
    expect(m.value('reprise_model_calls_total', { role: 'verify' })).toBeUndefined();
    expect(m.value('reprise_model_tokens_total', { role: 'main', type: 'prompt' })).toBe(200);
    expect(m.value('reprise_model_tokens_total', { role: 'main', type: 'completion' })).toBe(40);
    expect(m.value('reprise_model_tokens_total', { role: 'rerank', type: 'prompt' })).toBe(100);
    expect(m.value('reprise_model_tokens_total', { role: 'fallback' })).toBe(0);
    expect(m.value('reprise_model_call_duration_seconds_count', { role: 'main' })).toBe(3);
    expect(m.value('reprise_model_call_duration_seconds_count', { role: 'fallback' })).toBe(1);
    // No daily budget: nothing to run out, so no remaining gauge and never exhausted.
    expect(m.has('reprise_model_daily_tokens_remaining')).toBe(false);
    expect(m.has('reprise_model_daily_token_budget')).toBe(false);
    expect(m.value('reprise_model_daily_budget_exhausted')).toBe(0);
  });

  it('never lets a malformed usage make a counter throw (the answer still goes through)', async () => {
    const registry = new Registry();
    const mm = registerModelMetrics(registry, { budget: undefined, spentToday: () => 0 });
    const odd = mm.meter({ main: port('m', () => ok(Number.NaN, -5)), verify: port('v', () => ok(1, 1)), rerank: port('r', () => ok(1, 1)) });
    await expect(odd.main.chat(req('investigate'))).resolves.toMatchObject({ content: '{}' });
    const m = parseExposition(await registry.metrics());
    expect(m.value('reprise_model_tokens_total', { role: 'main' })).toBe(0);
    expect(m.value('reprise_model_calls_total', { role: 'main', outcome: 'ok' })).toBe(1);
  });

  it('reads the daily budget at scrape time: remaining, then exhausted', async () => {
    const registry = new Registry();
    let spent = 400;
    registerModelMetrics(registry, { budget: 1000, spentToday: () => spent });
    let m = parseExposition(await registry.metrics());
    expect(m.value('reprise_model_daily_token_budget')).toBe(1000);
    expect(m.value('reprise_model_daily_tokens_spent')).toBe(400);
    expect(m.value('reprise_model_daily_tokens_remaining')).toBe(600);
    expect(m.value('reprise_model_daily_budget_exhausted')).toBe(0);
    spent = 1240; // a run may overshoot: it stops at its next turn
    m = parseExposition(await registry.metrics());
    expect(m.value('reprise_model_daily_tokens_remaining')).toBe(0);
    expect(m.value('reprise_model_daily_budget_exhausted')).toBe(1);
    spent = 0; // a new UTC day
    m = parseExposition(await registry.metrics());
    expect(m.value('reprise_model_daily_budget_exhausted')).toBe(0);
    expect(m.value('reprise_model_daily_tokens_remaining')).toBe(1000);
  });
});
