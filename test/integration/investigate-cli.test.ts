/**
 * The two CLI commands, as a user runs them: `reprise investigate` with the model from env
 * only (no config file) against the OpenAI-compatible fake, and plain help without a model;
 * `reprise eval investigate` on the scripted fake.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake, type OpenAIFake } from '../fakes/openai-fake.js';
import { crashLoopPayload } from './helpers/alerts.js';
import { byRole, finding, roleOf, verdict } from './helpers/investigation.js';
import { cleanup, makeTmpDir, runCli } from './helpers/spawn-bot.js';

let fake: OpenAIFake;
beforeAll(async () => {
  fake = await startOpenAIFake();
});
afterAll(async () => {
  await fake.close();
  await cleanup();
});

describe('reprise investigate', () => {
  it('says plainly how to configure a model when none is, exit 2', async () => {
    const r = await runCli(['investigate', '--text', 'checkout is down']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no model is configured');
    expect(r.stderr).toContain('REPRISE_MODEL_BASE_URL');
  });

  it('runs one investigation from an alert file with the model from env alone, and prints the Finding, Steps and cost', async () => {
    const dir = makeTmpDir();
    const alert = join(dir, 'alert.json');
    writeFileSync(alert, JSON.stringify(crashLoopPayload({ status: 'firing' })));
    fake.respond(
      byRole({
        investigate: [{ toolCalls: [{ name: 'kb_search', arguments: { query: 'checkout-api OOMKilled' } }] }, finding()],
        verify: [verdict('supported', 0.8)],
      }),
    );
    const env = { REPRISE_MODEL_BASE_URL: fake.baseUrl, REPRISE_MODEL: 'env-model', OPENAI_API_KEY: 'sk-test-not-a-real-key-123456' };
    const r = await runCli(['investigate', '--alert', alert], { env });
    expect(r.stderr).not.toMatch(/bearer_token/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^status: completed/);
    expect(r.stdout).toContain('verdict: action_required');
    expect(r.stdout).toMatch(/tool kb_search: ok/);
    expect(r.stdout).toMatch(/3 model calls · \d+ tokens in \/ \d+ out · cost unknown/);
    expect(fake.requests.map(roleOf)).toEqual(['investigate', 'investigate', 'verify']);
    expect(fake.requests[0]!.body.model).toBe('env-model');
    expect(fake.requests[0]!.headers['authorization']).toBe('Bearer sk-test-not-a-real-key-123456');

    fake.requests.length = 0;
    fake.respond(byRole({ investigate: [finding()], verify: [verdict('weakened', 0.5)] }));
    const j = await runCli(['investigate', '--text', 'checkout-api pods restart', '--json'], { env });
    const out = JSON.parse(j.stdout) as { status: string; finding: { confidence: number; verified: boolean }; steps: unknown[] };
    expect(out.status).toBe('completed');
    expect(out.finding).toMatchObject({ confidence: 0.5, verified: true });
  });
});

describe('reprise eval investigate', () => {
  it('without a model runs the scripted fake, says so, and scores every scenario', async () => {
    const r = await runCli(['eval', 'investigate', '--json']);
    expect(r.stderr).toContain('no model configured');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { model: string; scenarios: Array<{ id: string; passed: boolean }> };
    expect(out.model).toBe('scripted-fake');
    expect(out.scenarios.map((s) => [s.id, s.passed])).toEqual([
      ['checkout-oom', true],
      ['kafka-disk-latency', true],
      ['poisoned-recall', true],
    ]);
  });
});
