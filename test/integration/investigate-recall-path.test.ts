/**
 * The recall path through the real openai SDK and a real MCP server: rerank → confirm →
 * verify, and fail-closed fall-through to a full investigation (issue 11 a, b, c).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rerank } from '../../src/core/investigate/rerank.js';
import {
  agreeingCandidates,
  byRole,
  crashLoopIncident,
  type Engine,
  fake,
  finding,
  mcp,
  OOM_ENTRY,
  POISONED_ENTRY,
  roleOf,
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

const rerankReply = (entry: string, confidence: number) => ({ content: JSON.stringify({ entry, confidence, reason: 'same workload, same failure' }) });

describe('recall path', () => {
  it('a. rerank → confirm (stdio MCP) → verify pass: delivered in exactly 2 model calls', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: 'stdio' });
    const incident = crashLoopIncident();
    fake.respond(byRole({ rerank: [rerankReply(OOM_ENTRY, 0.9)], verify: [verdict('supported', 0.95)] }));
    const candidates = agreeingCandidates(incident, engine.snapshot);
    expect(candidates.map((c) => c.entry.id).sort()).toEqual([OOM_ENTRY, POISONED_ENTRY]);

    const r = await rerank(incident, candidates, [engine.models.rerank], { k: 5, threshold: 0.7, minScore: 0.1 });
    expect(r.hit).toBe(true);
    if (!r.hit) return;
    expect(r.trace).toEqual([expect.objectContaining({ gate: 'rerank', entry: OOM_ENTRY, passed: true, value: 0.9, threshold: 0.7 })]);

    const res = await engine.investigator.run({ incident, recall: { entry: r.entry, confidence: 0.86 } }, sinkOf(engine));
    expect(res.status).toBe('completed');
    expect(res.kind).toBe('recall');
    expect(res.recall).toMatchObject({ entry: OOM_ENTRY, delivered: true, confirmed: true, confidence: 0.86 });
    expect(res.finding?.verified).toBe(true);
    expect(fake.requests.map(roleOf)).toEqual(['rerank', 'verify']);
    // The reviewer saw the live state confirm read, fenced as data.
    const review = fake.requests[1]!.body.messages.find((m) => m.role === 'user')!.content!;
    expect(review).toMatch(/data live state k8s__pod_status[^\n]*\n[\s\S]*OOMKilled/);
    expect(res.trace.map((t) => [t.gate, t.passed])).toEqual([
      ['confirm', true],
      ['verify', true],
    ]);
    expect(res.usage).toMatchObject({ calls: 1, input: 100, output: 20 });
    expect(engine.sunk.filter((s) => s.kind === 'tool').map((s) => s.kind === 'tool' && [s.tool, s.outcome])).toEqual([
      ['k8s__pod_status', 'ok'],
      ['k8s__events', 'ok'],
    ]);
  });

  it('b. a poisoned entry is recalled, verify rejects it, and the full investigation’s Finding is the result', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url } });
    const incident = crashLoopIncident();
    fake.respond(
      byRole({
        rerank: [rerankReply(POISONED_ENTRY, 0.8)],
        verify: [verdict('rejected', 0.1, ['live state shows OOMKilled, exit 137; nothing about TLS']), verdict('supported', 0.8)],
        investigate: [toolCall('k8s__pod_status', { namespace: 'payments' }), finding()],
      }),
    );
    const r = await rerank(incident, agreeingCandidates(incident, engine.snapshot), [engine.models.rerank], { k: 5, threshold: 0.7, minScore: 0.1 });
    expect(r.hit && r.entry.id).toBe(POISONED_ENTRY);
    if (!r.hit) return;
    const res = await engine.investigator.run({ incident, recall: { entry: r.entry, confidence: 0.85 } }, sinkOf(engine));
    expect(res.status).toBe('completed');
    expect(res.kind).toBe('fresh');
    expect(res.recall).toMatchObject({ entry: POISONED_ENTRY, delivered: false, verify: expect.objectContaining({ verdict: 'rejected' }) });
    expect(res.finding?.rootCauses[0]?.entities).toContain('JAVA_TOOL_OPTIONS');
    expect(JSON.stringify(res.finding)).not.toMatch(/TLS_VERIFY/);
    expect(res.trace.find((t) => t.gate === 'verify')).toMatchObject({ entry: POISONED_ENTRY, passed: false, value: 'rejected' });
    expect(fake.requests.map(roleOf)).toEqual(['rerank', 'verify', 'investigate', 'investigate', 'verify']);
    expect(engine.sunk.some((s) => s.kind === 'note' && s.event === 'recall' && /withdrawn/.test(s.reason))).toBe(true);
  });

  it.each([
    ['answers 500', { status: 500 }, 'error'],
    ['answers without usage', { content: JSON.stringify({ verdict: 'supported', confidence: 0.9 }), usage: null }, 'no_usage'],
    ['answers garbage twice', 'garbage', 'unusable'],
  ] as const)('c. the verify model %s on the recall path → fall-through, never an unverified recall', async (_, reply, expected) => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url } });
    const incident = crashLoopIncident();
    const bad = reply === 'garbage' ? [{ content: 'I think it is fine' }, { content: 'still fine' }] : [reply];
    fake.respond(byRole({ verify: [...bad, verdict('supported', 0.8)], investigate: [toolCall('k8s__events', { namespace: 'payments' }), finding()] }));
    const entry = engine.snapshot.byId.get(OOM_ENTRY)!;
    const res = await engine.investigator.run({ incident, recall: { entry, confidence: 0.86 } }, sinkOf(engine));
    expect(res.recall).toMatchObject({ delivered: false, verify: expect.objectContaining({ verdict: expected, passed: false }) });
    expect(res.kind).toBe('fresh');
    expect(res.status).toBe('completed');
    expect(res.finding?.investigator.model).toBe('main-model');
    expect(fake.requests.filter((q) => roleOf(q) === 'investigate')).toHaveLength(2);
  });

  it('rerank misses: an id it was not offered, "none", low confidence and an error', async () => {
    engine = await startEngine({ modelBaseUrl: fake.baseUrl, mcp: { http: mcp.url } });
    const incident = crashLoopIncident();
    const cands = agreeingCandidates(incident, engine.snapshot);
    const opts = { k: 5, threshold: 0.7, minScore: 0.1 };
    const cases = [
      [rerankReply('incidents/made-up.md', 0.99), 'not_offered'],
      [rerankReply('none', 0.9), 'none'],
      [rerankReply(OOM_ENTRY, 0.5), 'low_confidence'],
      [{ status: 503 }, 'error'],
    ] as const;
    for (const [reply, miss] of cases) {
      fake.respond(() => reply);
      const r = await rerank(incident, cands, [engine.models.rerank], opts);
      expect(r.hit ? 'hit' : r.miss).toBe(miss);
      expect(r.trace[0]).toMatchObject({ gate: 'rerank', passed: false });
    }
    const before = fake.requests.length;
    const skipped = await rerank(incident, cands, [engine.models.rerank], { ...opts, minScore: 1e9 });
    expect(skipped.hit ? 'hit' : skipped.miss).toBe('skipped');
    expect(fake.requests.length).toBe(before);
  });
});
