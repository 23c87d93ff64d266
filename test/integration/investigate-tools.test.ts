/**
 * Tool policy on the wire (issue 11 f): outside the allowlist, write servers and
 * `readOnlyHint: false` are refused; scope rules refuse out-of-scope arguments; a slow tool
 * times out and an oversized result is truncated — each recorded, and the run goes on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolStep } from '../../src/core/investigate/step.js';
import { byRole, crashLoopIncident, type Engine, fake, finding, mcp, sinkOf, startEngine, useModelAndTools, verdict } from './helpers/investigation.js';

useModelAndTools({ slowMs: 5000 });
let engine: Engine | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

describe('tool policy', () => {
  it('refuses, times out and truncates on the record, and the run goes on', async () => {
    // A second server declared write (the same fake), so its tools are refused whatever they say.
    engine = await startEngine({
      modelBaseUrl: fake.baseUrl,
      mcp: { http: mcp.url },
      servers: [`    - { name: kw, access: write, transport: http, url: "${mcp.url}" }`],
      callTimeout: '1s',
      confirm: '[k8s__pod_status]',
      tools: [
        '  allow: [k8s__pod_status, k8s__slow_probe, k8s__big_dump, k8s__delete_pod, kw__pod_status]',
        '  scope:',
        '    - { args: [namespace], allow: ["${namespace}"] }',
      ],
    });
    fake.respond(
      byRole({
        investigate: [
          {
            toolCalls: [
              { name: 'k8s__logs', arguments: { namespace: 'payments', pod: 'x' } },
              { name: 'k8s__delete_pod', arguments: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' } },
              { name: 'kw__pod_status', arguments: { namespace: 'payments' } },
              { name: 'k8s__pod_status', arguments: { namespace: 'payments-staging' } },
              { name: 'k8s__slow_probe', arguments: { namespace: 'payments' } },
              { name: 'k8s__big_dump', arguments: { namespace: 'payments' } },
              { name: 'k8s__pod_status', arguments: { namespace: 'payments' } },
            ],
          },
          finding(),
        ],
        verify: [verdict('supported', 0.8)],
      }),
    );
    const res = await engine.investigator.run({ incident: crashLoopIncident() }, sinkOf(engine));
    expect(res.status).toBe('completed');
    const tools = engine.sunk.filter((s): s is ToolStep => s.kind === 'tool');
    expect(tools.map((t) => [t.tool, t.outcome])).toEqual([
      ['k8s__logs', 'refused'],
      ['k8s__delete_pod', 'refused'],
      ['kw__pod_status', 'refused'],
      ['k8s__pod_status', 'refused'],
      ['k8s__slow_probe', 'timeout'],
      ['k8s__big_dump', 'ok'],
      ['k8s__pod_status', 'ok'],
    ]);
    expect(tools[0]!.reason).toBe('k8s__logs is not on the tool allowlist');
    expect(tools[1]!.reason).toBe('k8s__delete_pod is marked readOnlyHint: false by its server');
    expect(tools[2]!.reason).toMatch(/server kw is declared access: write/);
    expect(tools[3]!.reason).toBe('scope rule 1: namespace="payments-staging" is outside payments');
    expect(tools[4]!.reason).toBe('timed out after 1000 ms');
    expect(tools[5]).toMatchObject({ truncated: true, bytes: 40 * 1024 + 3 });
    // Refused calls never reached the server; the rest did.
    expect(mcp.received.map((c) => c.tool).sort()).toEqual(['big_dump', 'pod_status', 'slow_probe']);
    // The model was told, and saw at most the cap of the big result.
    const toolMsgs = fake.requests[1]!.body.messages.filter((m) => m.role === 'tool').map((m) => m.content ?? '');
    expect(toolMsgs[0]).toBe('refused: k8s__logs is not on the tool allowlist');
    expect(toolMsgs[5]).toMatch(/\[truncated: showing 16384 of 40963 bytes\]$/);
    expect(toolMsgs[5]).not.toContain('END');
    // Only usable tools are offered to the model.
    expect(fake.requests[0]!.body.tools?.map((t) => t.function.name)).toEqual(['k8s__big_dump', 'k8s__pod_status', 'k8s__slow_probe']);
  });
});
