/**
 * Model failures end on a clear status (issue 11 e): one repair prompt, then the fallback
 * model, then a degraded answer; HTTP 500 degrades; a turn without usage fails the run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { REPAIR_TEXT } from '../../src/core/investigate/prompts.js';
import {
  byRole,
  crashLoopIncident,
  type Engine,
  fake,
  finding,
  mcp,
  OOM_ENTRY,
  sinkOf,
  startEngine,
  toolCall,
  useModelAndTools,
  verdict,
} from './helpers/investigation.js';

useModelAndTools();
let engine: Engine | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

const repairPrefix = REPAIR_TEXT.split('{error}')[0]!;
const lastUser = (i: number) => fake.requests[i]!.body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';

describe('model failures', () => {
  it('malformed JSON → one repair prompt → success', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url } });
    fake.respond(byRole({ investigate: [{ content: 'The pods are OOMKilled, I am fairly sure.' }, finding()], verify: [verdict('supported', 0.8)] }));
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res.status).toBe('completed');
    expect(lastUser(1).startsWith(repairPrefix)).toBe(true);
    expect(res.steps.filter((s) => s.kind === 'model').map((s) => s.kind === 'model' && s.outcome)).toEqual(['malformed', 'ok', 'ok']);
  });

  it('a malformed tool call → one repair (a tool message saying why) → success', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url } });
    fake.respond(
      byRole({
        investigate: [toolCall('k8s__pod_status', '{"namespace": "payments"'), toolCall('k8s__pod_status', { namespace: 'payments' }), finding()],
        verify: [verdict('supported', 0.8)],
      }),
    );
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res.status).toBe('completed');
    const toolMsg = fake.requests[1]!.body.messages.find((m) => m.role === 'tool');
    expect(toolMsg?.content).toMatch(/^not executed: arguments are not valid JSON/);
    expect(res.steps.some((s) => s.kind === 'note' && s.event === 'repair')).toBe(true);
  });

  it('still malformed after the repair → the fallback model → degraded, marked, with the closest entries', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url }, model: ['  fallback_model: fallback-model'] });
    fake.respond(() => ({ content: 'no json here' }));
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'degraded', reason: 'malformed', finding: null });
    expect(fake.requests.map((r) => r.body.model)).toEqual(['main-model', 'main-model', 'fallback-model']);
    expect(res.degraded?.marker).toBe('degraded');
    expect(res.degraded?.closest.map((c) => c.id)).toContain(OOM_ENTRY);
    expect(res.steps.filter((s) => s.kind === 'note').map((s) => s.kind === 'note' && s.event)).toEqual(
      expect.arrayContaining(['repair', 'fallback', 'degraded']),
    );
  });

  it('an endpoint answering 500 (no fallback) → degraded with the reason', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url } });
    fake.respond(() => ({ status: 500 }));
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'degraded', reason: 'model_error' });
    expect(res.detail).toMatch(/HTTP 500/);
    expect(fake.requests).toHaveLength(1); // SDK retries are off in tests
  });

  it('an endpoint answering 500 with a fallback configured → the fallback answers', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url }, model: ['  fallback_model: fallback-model'] });
    fake.respond((req) =>
      req.body.model === 'main-model'
        ? { status: 500 }
        : req.body.messages[0]?.content?.startsWith('You are an adversarial')
          ? verdict('supported', 0.8)
          : finding(),
    );
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res.status).toBe('completed');
    expect(res.finding?.investigator.model).toBe('fallback-model');
  });

  it('a turn without usage fails the run, clearly', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url } });
    fake.respond(() => ({ ...toolCall('k8s__events', { namespace: 'payments' }), usage: null }));
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res).toMatchObject({ status: 'failed', reason: 'no_usage', finding: null });
    expect(res.detail).toMatch(/without token usage/);
    expect(res.steps.find((s) => s.kind === 'model')).toMatchObject({ outcome: 'no_usage' });
  });
});
