import { describe, expect, it } from 'vitest';
import { fence } from '../../../src/core/investigate/fence.js';
import { parseModelFinding } from '../../../src/core/investigate/finding.js';
import { capBytes, forStep, redactSecrets } from '../../../src/core/investigate/redact.js';
import { checkScope } from '../../../src/core/investigate/scope.js';
import { Semaphore } from '../../../src/core/investigate/budget.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { crashLoopPayload } from '../../integration/helpers/alerts.js';
import { OOM_FINDING } from '../../integration/helpers/investigation.js';

const incident = (labels: Record<string, string> = {}) => {
  const p = crashLoopPayload({ status: 'firing' }) as { alerts: Array<{ labels: Record<string, string> }> };
  Object.assign(p.alerts[0]!.labels, labels);
  return parseAlertmanagerPayload(p).incidents[0]!;
};

describe('scope rules', () => {
  const own = { when: {}, args: ['namespace'], allow: ['${namespace}'], deny: [] };
  it('keeps an investigation in the alert’s own namespace', () => {
    expect(checkScope([own], incident(), { namespace: 'payments' })).toEqual({ ok: true });
    expect(checkScope([own], incident(), { namespace: 'kube-system' })).toEqual({
      ok: false,
      reason: 'scope rule 1: namespace="kube-system" is outside payments',
    });
    expect(checkScope([own], incident(), { namespaces: ['payments', 'other'] }).ok).toBe(true);
    expect(checkScope([{ ...own, args: ['namespaces'] }], incident(), { namespaces: ['payments', 'other'] }).ok).toBe(false);
  });
  it('never reads staging from a prod alert, and only applies when its labels match', () => {
    const rule = { when: { cluster: 'prod-*' }, args: ['cluster', 'namespace'], allow: [], deny: ['*staging*'] };
    expect(checkScope([rule], incident(), { namespace: 'payments-staging' }).ok).toBe(false);
    expect(checkScope([rule], incident({ cluster: 'dev-1' }), { namespace: 'payments-staging' }).ok).toBe(true);
  });
  it('a required rule refuses a call that leaves the scoped argument out, when the tool accepts it', () => {
    const rule = { when: {}, args: ['namespace'], allow: ['${namespace}'], deny: [], required: true };
    expect(checkScope([rule], incident(), {}, ['namespace', 'limit'])).toEqual({
      ok: false,
      reason: "scope rule 1: give namespace (left out, the call would read beyond the incident's scope)",
    });
    expect(checkScope([rule], incident(), { namespace: '' }, ['namespace']).ok).toBe(false);
    expect(checkScope([rule], incident(), { namespace: 'payments' }, ['namespace'])).toEqual({ ok: true });
    // A tool without such an argument (kb_search) is not affected; nor is a rule not marked required.
    expect(checkScope([rule], incident(), { query: 'x' }, ['query'])).toEqual({ ok: true });
    expect(checkScope([{ ...rule, required: false }], incident(), {}, ['namespace'])).toEqual({ ok: true });
  });
  it('an allow pattern naming a label the incident lacks refuses (unknown is not "anything")', () => {
    const rule = { when: {}, args: ['cluster'], allow: ['${region}'], deny: [] };
    expect(checkScope([rule], incident(), { cluster: 'x' })).toMatchObject({ ok: false, reason: expect.stringMatching(/unknown for this incident/) });
  });
});

describe('fence and redaction', () => {
  it('a fence outlasts any backtick run inside it', () => {
    const f = fence('alert', 'a ```` b');
    expect(f.startsWith('`````data alert')).toBe(true);
    expect(f.endsWith('\n`````')).toBe(true);
  });
  it('masks keys, tokens and known secrets, and bounds text by bytes', () => {
    const t = redactSecrets('key sk-abcdefghijklmnop1234 and password=hunter22 and Authorization: Bearer abc.def and my-known-secret', ['my-known-secret']);
    expect(t).not.toMatch(/sk-abc|hunter22|abc\.def|my-known-secret/);
    expect(capBytes('ééé', 3)).toEqual({ text: 'é', truncated: true, bytes: 6 });
    expect(forStep('x'.repeat(100), 10)).toMatch(/^x{10}\n… \[90 more bytes not kept\]$/);
  });
});

describe('Finding parsing', () => {
  it('accepts bare JSON, a fenced block or JSON within prose, ranks causes, and says what is wrong otherwise', () => {
    const two = { ...OOM_FINDING, rootCauses: [{ ...OOM_FINDING.rootCauses[0]!, confidence: 0.2, cause: 'weak' }, OOM_FINDING.rootCauses[0]!] };
    for (const text of [JSON.stringify(two), '```json\n' + JSON.stringify(two) + '\n```', `Here it is: ${JSON.stringify(two)} done`]) {
      const r = parseModelFinding(text);
      expect(r.ok && r.value.rootCauses.map((c) => c.cause)[1]).toBe('weak');
    }
    const bad = parseModelFinding(JSON.stringify({ ...OOM_FINDING, verdict: 'panic', extra: 1 }));
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/verdict/);
    expect(parseModelFinding('no').ok).toBe(false);
  });
});

describe('Semaphore', () => {
  it('queues in order, never drops, and lets an aborted waiter leave', async () => {
    const s = new Semaphore(1);
    const order: string[] = [];
    const r1 = await s.acquire();
    const ctl = new AbortController();
    const p2 = s.acquire(ctl.signal).then(
      () => order.push('aborted one ran'),
      () => order.push('left'),
    );
    const p3 = s.acquire().then((r) => {
      order.push('third');
      r();
    });
    ctl.abort();
    await p2;
    r1();
    await p3;
    expect(order).toEqual(['left', 'third']);
    expect(s.free).toBe(1);
  });
  it('reports its free slots and waiters, and a holder whose signal aborts keeps its slot until it releases', async () => {
    const s = new Semaphore(2);
    const ctl = new AbortController();
    const r1 = await s.acquire(ctl.signal);
    const r2 = await s.acquire();
    expect([s.free, s.waiting]).toEqual([0, 0]);
    let third: (() => void) | undefined;
    const p3 = s.acquire().then((r) => (third = r));
    expect(s.waiting).toBe(1);
    ctl.abort(new Error('cancelled'));
    await new Promise((r) => setImmediate(r)); // every promise callback the abort set off has run

    expect([s.free, s.waiting, third]).toEqual([0, 1, undefined]);
    r1();
    r1(); // a second release is a no-op
    await p3;
    expect([s.free, s.waiting]).toEqual([0, 0]);
    r2();
    third!();
    expect(s.free).toBe(2);
    await expect(s.acquire(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    expect([s.free, s.waiting]).toEqual([2, 0]);
  });
});

describe('tool output on its way to the model', () => {
  it('is masked for secrets (patterns and known values) before it is fenced for the model and recorded', async () => {
    const { Toolbox } = await import('../../../src/core/investigate/toolbox.js');
    const { StepRecorder } = await import('../../../src/core/investigate/step.js');
    const leak = 'env: DB_PASSWORD=hunter22-secret\nGITHUB=ghp_abcdefghijklmnopqrstuvwxyz012345\nconfig token-of-the-bot-9f8e7d\npod ok';
    const provider = {
      server: 'k8s',
      access: 'read' as const,
      listTools: async () => [{ name: 'env_dump', description: 'env', inputSchema: { type: 'object' }, readOnlyHint: true }],
      callTool: async () => ({ text: leak, isError: false }),
      close: async () => undefined,
    };
    const box = await Toolbox.open([provider], { allow: ['k8s__env_dump'], scope: [], callTimeoutMs: 5000, resultCapBytes: 16384 });
    const steps: unknown[] = [];
    const rec = new StepRecorder({
      run: 'r1',
      clock: new ManualClock('2026-12-01T00:00:00Z'),
      sink: (s: unknown) => void steps.push(s),
      capBytes: 4096,
      secrets: ['token-of-the-bot-9f8e7d'],
    } as never);
    const out = await box.call('k8s__env_dump', {}, incident(), new AbortController().signal, rec);
    expect(out.outcome).toBe('ok');
    for (const text of [out.content, out.output, JSON.stringify(steps)]) {
      expect(text).not.toMatch(/hunter22|ghp_abc|token-of-the-bot/);
      expect(text).toContain('pod ok');
      expect(text).toContain('[redacted]');
    }
  });
});

describe('a required scope rule through the toolbox', () => {
  it('reads the tool’s declared arguments: a namespace-less list is refused and never called', async () => {
    const { Toolbox } = await import('../../../src/core/investigate/toolbox.js');
    const { StepRecorder } = await import('../../../src/core/investigate/step.js');
    const calls: unknown[] = [];
    const provider = {
      server: 'k8s',
      access: 'read' as const,
      listTools: async () => [
        { name: 'events_list', description: 'events', inputSchema: { type: 'object', properties: { namespace: { type: 'string' } } }, readOnlyHint: true },
      ],
      callTool: async (_n: string, args: unknown) => {
        calls.push(args);
        return { text: '[]', isError: false };
      },
      close: async () => undefined,
    };
    const scope = [{ when: {}, args: ['namespace'], allow: ['${namespace}'], deny: [], required: true }];
    const box = await Toolbox.open([provider], { allow: ['k8s__events_list'], scope, callTimeoutMs: 5000, resultCapBytes: 16384 });
    const rec = new StepRecorder({ run: 'r2', clock: new ManualClock('2026-12-01T00:00:00Z'), sink: () => undefined, capBytes: 4096 });
    const refused = await box.call('k8s__events_list', {}, incident(), new AbortController().signal, rec);
    expect(refused.outcome).toBe('refused');
    expect(refused.content).toMatch(/give namespace/);
    expect(calls).toEqual([]);
    const ok = await box.call('k8s__events_list', { namespace: 'payments' }, incident(), new AbortController().signal, rec);
    expect(ok.outcome).toBe('ok');
    expect(calls).toEqual([{ namespace: 'payments' }]);
  });
});
