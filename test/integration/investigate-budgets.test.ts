/**
 * Budgets end runs on the record (issue 11 d): steps, tokens and wall time → `exhausted` with
 * a partial Finding and the reason; the daily budget → `skipped`; concurrency waits;
 * cancellation ends a run `cancelled`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InMemoryTokenMeter } from '../../src/core/investigate/memory-stores.js';
import { LAST_TURN_TEXT } from '../../src/core/investigate/prompts.js';
import {
  byRole,
  crashLoopIncident,
  type Engine,
  fake,
  finding,
  mcp,
  sinkOf,
  startEngine,
  toolCall,
  useModelAndTools,
  verdict,
} from './helpers/investigation.js';
import { waitFor } from '../helpers/wait-for.js';

useModelAndTools();
let engine: Engine | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

const always = (reply: ReturnType<typeof toolCall>) => () => reply;
const notes = (e: Engine, event: string) => e.sunk.filter((s) => s.kind === 'note' && s.event === event).map((s) => (s.kind === 'note' ? s.reason : ''));

describe('budgets', () => {
  it('the step budget ends the run exhausted; the last turn offers no tools and the partial Finding is kept', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url }, model: ['  max_steps: 3'] });
    fake.respond(always(toolCall('k8s__pod_status', { namespace: 'payments' })));
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'exhausted', reason: 'max_steps' });
    expect(res.finding).toMatchObject({ partial: true, verdict: 'inconclusive', rootCauses: [] });
    expect(res.finding?.dataGaps[1]).toBe(
      'checked before stopping: k8s__pod_status {"namespace":"payments"}: ok; k8s__pod_status {"namespace":"payments"}: ok',
    );
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[2]!.body.tools).toBeUndefined();
    expect(fake.requests[2]!.body.messages.at(-1)?.content).toBe(LAST_TURN_TEXT);
    expect(notes(engine, 'budget')[0]).toMatch(/last of 3 turns did not conclude/);
  });

  it('a model that concludes on its forced last turn: exhausted, with its own Finding marked partial', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url }, model: ['  max_steps: 2'] });
    fake.respond(byRole({ investigate: [toolCall('k8s__pod_status', { namespace: 'payments' }), finding()] }));
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'exhausted', reason: 'max_steps' });
    expect(res.finding).toMatchObject({ partial: true, verdict: 'action_required' });
  });

  it('the token budget ends the run exhausted with the reason', async () => {
    engine = await startEngine({
      modelBaseUrl: fake.baseUrl,
      mcp: { http: mcp.url },
      model: ['  max_tokens: 500', '  prices: { main-model: { input: 2, output: 8 } }'],
    });
    fake.respond(always({ ...toolCall('k8s__events', { namespace: 'payments' }), usage: { prompt_tokens: 250, completion_tokens: 50 } }));
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'exhausted', reason: 'max_tokens', usage: { calls: 2, input: 500, output: 100 } });
    expect(res.detail).toBe('600 tokens reached the 500-token budget');
    // Cost is a fact: per call on the Steps, summed on the result (2 × 250 in at $2/M, 2 × 50 out at $8/M).
    expect(res.usage.costUsd).toBeCloseTo(0.0018, 10);
    expect(res.steps.filter((s) => s.kind === 'model').map((s) => s.kind === 'model' && s.costUsd)).toEqual([0.0009, 0.0009]);
    expect(res.finding?.partial).toBe(true);
    // Each turn may write only what the budget has left.
    expect(fake.requests[1]!.body.max_tokens).toBe(200);
  });

  it('the wall-time budget aborts the call in flight and ends the run exhausted', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url }, model: ['  wall_time: 1500ms'] });
    fake.respond(byRole({ investigate: [toolCall('k8s__pod_status', { namespace: 'payments' }), { ...finding(), delayMs: 10_000 }] }));
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'exhausted', reason: 'wall_time' });
    // The call in flight was aborted on the wire, not waited out: the fake sees the hang-up
    // (its close event lands a moment after the client's abort) long before its 10 s answer.
    await vi.waitFor(() => expect(fake.requests[1]?.abandoned).toBe(true), { timeout: 8000, interval: 20 });
    expect(res.finding?.dataGaps[1]).toMatch(/k8s__pod_status \{"namespace":"payments"\}: ok/);
    expect(notes(engine, 'budget')).toEqual(['wall time reached the 1500 ms budget']);
  });

  it('the daily token budget records new runs as skipped, without a model call', async () => {
    const meter = new InMemoryTokenMeter();
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url }, model: ['  daily_token_budget: 1000'], meter });
    fake.respond(byRole({ investigate: [finding()], verify: [verdict('supported', 0.9)] }));
    const first = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(first.status).toBe('completed');
    await meter.add(new Date().toISOString().slice(0, 10), 1000);
    const calls = fake.requests.length;
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'skipped', reason: 'daily_budget', finding: null });
    expect(res.detail).toMatch(/daily token budget spent: 1240 of 1000 tokens/);
    expect(fake.requests.length).toBe(calls);
    expect(notes(engine, 'skipped')).toHaveLength(1);
  });

  it('max concurrent investigations: the second run waits (recorded), then runs; none is dropped', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url }, model: ['  max_concurrent: 1'] });
    fake.respond(byRole({ investigate: [{ ...finding(), delayMs: 200 }, finding()], verify: [verdict('supported', 0.9), verdict('supported', 0.9)] }));
    const steps: string[] = [];
    const sink = (id: string) => (s: { kind: string; event?: string }) => void steps.push(`${id}:${s.kind === 'note' ? s.event : s.kind}`);
    const [a, b] = await Promise.all([
      engine.investigator.run({ incident: crashLoopIncident(), id: 'a' }, sink('a')),
      engine.investigator.run({ incident: crashLoopIncident(), id: 'b' }, sink('b')),
    ]);
    expect([a.status, b.status]).toEqual(['completed', 'completed']);
    expect(steps).toContain('b:queued');
    expect(steps.indexOf('b:started')).toBeGreaterThan(steps.indexOf('a:completed'));
    expect(b.queuedMs).toBeGreaterThan(100);
  });

  it('cancellation via AbortSignal ends the run cancelled, in the queue or while running', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url } });
    fake.respond(() => ({ ...finding(), delayMs: 3000 }));
    const ctl = new AbortController();
    // Cancelled while running: once the model has the request (it would answer in 3 s).
    const calls = fake.requests.length;
    void waitFor(() => fake.requests.length > calls, 'the model call').then(() => ctl.abort());
    const res = await engine.investigator.run({ incident: crashLoopIncident(), signal: ctl.signal }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
    const pre = await engine.investigator.run({ incident: crashLoopIncident(), signal: AbortSignal.abort() }, sinkOf(engine));
    expect(pre.status).toBe('cancelled');
  });
});
