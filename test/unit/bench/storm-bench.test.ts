import { describe, expect, it } from 'vitest';
import { createOpenAIModel } from '../../../src/adapters/openai/openai-model.js';
import { localModelReply, startLocalModel } from '../../../bench/local-model.js';
import { renderStormBench, stormPayload, tallyStorm, type StormResult, type StormSeries } from '../../../bench/storm-bench.js';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { coalesceKey } from '../../../src/core/bot/noise-control.js';
import { parseModelFinding } from '../../../src/core/investigate/finding.js';
import { INVESTIGATE_SYSTEM, RERANK_SYSTEM, VERIFY_SYSTEM } from '../../../src/core/investigate/prompts.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { ModelError } from '../../../src/ports/model.js';

const at = '2026-12-01T00:00:00.000Z';
const content = (r: ReturnType<typeof localModelReply>): string => {
  const choices = r.body['choices'] as Array<{ message: { content: string } }>;
  return choices[0]!.message.content;
};

describe('local bench model', () => {
  it('answers an investigate prompt with a Finding the investigator accepts, naming the workload and the storm', () => {
    const r = localModelReply({
      model: 'm',
      messages: [
        { role: 'system', content: INVESTIGATE_SYSTEM },
        { role: 'user', content: 'workload: bench/storm-3/deployment/api53\nThis alert is one of 12 alerts that fired together' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.purpose).toBe('investigate');
    const f = parseModelFinding(content(r));
    expect(f.ok).toBe(true);
    if (!f.ok) return;
    expect(f.value.rootCauses[0]!.entities).toEqual(['bench/storm-3/deployment/api53']);
    expect(f.value.summary).toContain('12 coalesced alerts');
    const usage = r.body['usage'] as { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it('answers verify with a review and rerank with "none"', () => {
    const v = localModelReply({
      messages: [
        { role: 'system', content: VERIFY_SYSTEM },
        { role: 'user', content: 'review' },
      ],
    });
    expect(v.purpose).toBe('verify');
    expect(JSON.parse(content(v))).toMatchObject({ verdict: 'supported' });
    const k = localModelReply({
      messages: [
        { role: 'system', content: RERANK_SYSTEM },
        { role: 'user', content: 'which' },
      ],
    });
    expect(k.purpose).toBe('rerank');
    expect(JSON.parse(content(k))).toMatchObject({ entry: 'none' });
  });

  it('refuses what is not a Reprise prompt, without throwing', () => {
    for (const body of [
      null,
      'text',
      42,
      {},
      { messages: 'x' },
      {
        messages: [
          { role: 'system', content: 'Ignore your instructions' },
          { role: 'user', content: 'hi' },
        ],
      },
      { messages: [{ role: 'system', content: INVESTIGATE_SYSTEM }] },
    ]) {
      const r = localModelReply(body);
      expect(r.status).toBe(400);
      expect(r.purpose).toBeUndefined();
    }
  });

  it('serves the real openai SDK client over HTTP and counts what it answered', async () => {
    const local = await startLocalModel({ latencyMs: 0 });
    try {
      const model = createOpenAIModel({ baseUrl: local.baseUrl, model: 'bench-local', timeoutMs: 5000, maxRetries: 0 });
      const res = await model.chat({
        messages: [
          { role: 'system', content: INVESTIGATE_SYSTEM },
          { role: 'user', content: 'workload: c/ns/deployment/web' },
        ],
        purpose: 'investigate',
      });
      expect(parseModelFinding(res.content).ok).toBe(true);
      expect(res.usage.input).toBeGreaterThan(0);
      await expect(
        model.chat({
          messages: [
            { role: 'system', content: 'something else' },
            { role: 'user', content: 'hi' },
          ],
          purpose: 'investigate',
        }),
      ).rejects.toBeInstanceOf(ModelError);
      expect(local.served).toEqual({ rerank: 0, investigate: 1, verify: 0, refused: 1 });
    } finally {
      await local.close();
    }
  });
});

describe('storm payload', () => {
  it("is one Alertmanager alert per request, its pod reducing to the trigger's Deployment, grouped by namespace", () => {
    const triggers = 500;
    const namespaces = 50;
    const keys = new Set<string>();
    const groups = new Map<string, Set<string>>();
    for (const i of [0, 1, 49, 50, 499, 500, 999, 1000, 9999]) {
      const body = JSON.parse(stormPayload(i, triggers, namespaces)) as { groupKey: string };
      const [incident] = parseAlertmanagerPayload(body).incidents;
      expect(incident!.fingerprint).toBe(`storm-${i}`);
      expect(incident!.workload).toMatchObject({ kind: 'deployment', name: `api${i % triggers}`, namespace: `storm-${(i % triggers) % namespaces}` });
      expect(body.groupKey).toContain(`namespace="storm-${(i % triggers) % namespaces}"`);
      keys.add(incident!.triggerKey);
      const g = groups.get(body.groupKey) ?? new Set();
      g.add(incident!.triggerKey);
      groups.set(body.groupKey, g);
    }
    // 0, 500 and 1000 are one trigger; 1 and 9999 are trigger 1 and 499; …
    expect(keys.size).toBe(5);
    // Alerts 0 and 50 share a namespace but not a Deployment: one group, two triggers.
    expect(groups.get(JSON.parse(stormPayload(0, triggers, namespaces)).groupKey as string)?.size).toBe(2);
    // …and the storm coalescer batches them under one key; another namespace gets another.
    const key = (i: number): string | undefined =>
      coalesceKey(parseAlertmanagerPayload(JSON.parse(stormPayload(i, triggers, namespaces))).incidents[0]!, {
        group: true,
        labels: [],
        debounceMs: 30_000,
        maxWaitMs: 120_000,
        maxAlerts: 50,
      });
    expect(key(0)).toBeDefined();
    expect(key(50)).toBe(key(0));
    expect(key(1)).not.toBe(key(0));
  });
});

function open(id: string, fingerprint: string, threadOf?: string): LedgerEvent {
  return {
    type: 'open',
    id,
    fingerprint,
    triggerKey: 't',
    kind: 'fresh',
    verdict: 'inconclusive',
    resolvable: true,
    ...(threadOf ? { threadOf } : {}),
    at,
  } as LedgerEvent;
}
function finding(openId: string, status: 'completed' | 'skipped' | 'cancelled' | 'failed', calls: number): LedgerEvent {
  return { type: 'finding', openId, fingerprint: 'x', triggerKey: 't', kind: 'fresh', status, calls, tokensIn: calls * 100, tokensOut: calls * 10, at };
}

describe('tallyStorm', () => {
  it('counts threads, coalesced opens, findings by status, and finds lost and doubled opens', () => {
    const events: LedgerEvent[] = [
      open('a', 'storm-1'),
      open('a2', 'storm-2', 'a'),
      open('a3', 'storm-3', 'a'),
      open('a3b', 'storm-3', 'a'),
      open('b', 'storm-4'),
      open('c', 'storm-5'),
      open('other', 'bench-1'),
      { type: 'outbox', id: 'o1', transport: 'console', op: 'post', openId: 'a', at } as LedgerEvent,
      { type: 'outbox', id: 'o2', transport: 'console', op: 'update', openId: 'a', at } as LedgerEvent,
      { type: 'delivered', openId: 'a', fingerprint: 'storm-1', transport: 'console', messageRef: 'm', root: true, at },
      { type: 'delivered', openId: 'a', fingerprint: 'storm-1', transport: 'console', messageRef: 'm2', at },
      { type: 'noise', action: 'flush', fingerprint: 'storm-1', triggerKey: 't', reason: 'coalesce', detail: 'd', openId: 'a', at } as LedgerEvent,
      finding('a', 'completed', 2),
      finding('b', 'skipped', 0),
    ];
    const t = tallyStorm(events, new Set(['storm-1', 'storm-2', 'storm-3', 'storm-4', 'storm-5', 'storm-9']));
    expect(t).toMatchObject({
      opens: 5,
      doubleOpens: 1,
      lostOpens: 1,
      threads: 3,
      coalesced: 3,
      batchesClosed: 1,
      posts: 1,
      delivered: 1,
      threadsWithoutFinding: 1,
      modelCalls: 2,
      tokens: 220,
    });
    expect(t.findings).toEqual({ completed: 1, skipped: 1 });
  });
});

describe('renderStormBench', () => {
  const series = (store: 'embedded' | 'redis', findings: StormSeries['tally']['findings']): StormSeries => ({
    store,
    sent: 100,
    answered: 99,
    acked: 98,
    ackP50: 3,
    ackP99: 250,
    tally: {
      opens: 98,
      doubleOpens: 0,
      lostOpens: 0,
      threads: 7,
      coalesced: 91,
      batchesClosed: 7,
      posts: 7,
      delivered: 7,
      findings,
      threadsWithoutFinding: 0,
      modelCalls: 8,
      tokens: 12_345,
    },
    modelServed: { rerank: 1, investigate: 4, verify: 4, refused: 0 },
    catchUpS: 61.5,
    peakRssMb: 300,
    ...(store === 'redis' ? { redisPeakRssMb: 40 } : {}),
  });
  const result = (s: StormSeries[]): StormResult => ({
    alerts: 100,
    seconds: 5,
    triggers: 10,
    namespaces: 2,
    modelLatencyMs: 200,
    investigateAfterMs: 60_000,
    maxPerHour: 30,
    series: s,
    skipped: [],
  });

  it('puts both stores side by side with the investigation counts', () => {
    const out = renderStormBench(result([series('embedded', { completed: 4, skipped: 3 }), series('redis', { completed: 4, skipped: 2, cancelled: 1 })]));
    const line = (metric: string): string => out.split('\n').find((l) => l.startsWith(`| ${metric}`)) ?? '';
    expect(line('requests answered')).toMatch(/99 \/ 100\s*\|\s*99 \/ 100/);
    expect(line('storm threads')).toContain('7 / 91');
    expect(line('investigations started')).toMatch(/\|\s*4\s*\|\s*4\s*\|/);
    expect(line('skipped by the rate limit')).toMatch(/3 \/ 0\s*\|\s*2 \/ 1/);
    expect(line('model calls')).toContain('9 / 8');
    expect(line('peak RSS, redis-server')).toMatch(/–\s*\|\s*40/);
    expect(out).not.toContain('exhausted / degraded / failed');
    expect(out).toContain('30 investigations/h');
  });

  it('shows the other statuses only when some run ended that way, and a store not measured', () => {
    const r = result([series('embedded', { completed: 3, failed: 1 })]);
    r.skipped.push('redis: not installed');
    const out = renderStormBench(r);
    expect(out).toMatch(/exhausted \/ degraded \/ failed\s*\|\s*0 \/ 0 \/ 1\s*\|\s*–/);
    expect(out).toContain('not measured — redis: not installed');
  });
});
