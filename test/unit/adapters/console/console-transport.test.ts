import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConsoleTransport } from '../../../../src/adapters/console/console-transport.js';
import type { CardView, DetailView } from '../../../../src/core/chat/thread-view.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-console-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const card = (triggerKey: string, over: Partial<CardView> = {}): CardView => ({
  kind: 'card',
  state: 'firing',
  alertname: 'KubePodCrashLooping',
  where: 'prod/payments/api',
  severity: 'warning',
  verdict: 'action_suggested',
  headline: { answer: 'instant', entry: 'incidents/a.md', title: 'api OOMKilled', confidence: 0.7 },
  links: [{ label: 'source', url: 'http://prom:9090/graph?g0.expr=up' }],
  triggerKey,
  controlsId: 'open-1',
  controls: true,
  mentions: [],
  ...over,
});
const detail: DetailView = {
  kind: 'detail',
  sections: [{ kind: 'fall_through', note: 'no model' }],
  facts: [['alert', 'KubePodCrashLooping']],
  labels: [['namespace', 'payments']],
  triggerKey: 'tk-a',
};
const opts = { idempotencyKey: 'k' };
const to = { transport: 'console', channel: 'console' };

describe('ConsoleTransport', () => {
  it('prints each thread with its id, and each reply, update and private answer under it', async () => {
    const printed: string[] = [];
    const t = new ConsoleTransport({ write: (s) => printed.push(s) });
    const first = await t.post(to, card('tk-a'), detail, opts);
    const second = await t.post(to, card('tk-b', { headline: { answer: 'none' } }), undefined, opts);
    await t.reply(first, { kind: 'notice', topic: 'resolved', icon: '✅', text: ['resolved after 3 min'] }, opts);
    await t.update(
      second,
      card('tk-b', { state: 'silenced', stateNote: ['silenced by ', { person: { via: 'slack', id: 'U0ANN', name: 'Ann' } }, ' until 04:00 UTC'] }),
      opts,
    );
    await t.ephemeral(
      { kind: 'ephemeral', channel: 'console', user: 'ann' },
      { kind: 'ephemeral', title: 'Reprise status', body: [['No open incidents.']] },
      { idempotencyKey: 'test-answer' },
    );
    await t.close();

    expect(first.id).not.toBe(second.id);
    expect(first).toMatchObject({ transport: 'console', channel: 'console' });
    expect(printed[0]).toContain(`thread ${first.id}`);
    expect(printed[0]).toContain('│ 🔍 KubePodCrashLooping — prod/payments/api');
    expect(printed[2]).toContain(`↳ [${first.id}] ✅ resolved after 3 min`);
    expect(printed[3]).toContain('🔕 silenced (silenced by Ann until 04:00 UTC)');
    expect(printed[4]).toContain('(only for ann) Reprise status');
  });

  it('never prints raw control or bidi characters from the views', async () => {
    const printed: string[] = [];
    const t = new ConsoleTransport({ write: (s) => printed.push(s) });
    const ref = await t.post(to, card('tk', { alertname: 'X\u001b[2J', where: 'a\u202Eb\nc' }), undefined, opts);
    await t.reply(ref, { kind: 'notice', topic: 'note', icon: '📝', text: ['saved\u0007\r'] }, opts);
    const all = printed.join('');
    expect(all).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u202E]/);
    expect(all).toContain('X\\u{001B}[2J');
  });

  it('hands injected intents to the sink it was started with', async () => {
    const t = new ConsoleTransport({ write: () => {} });
    const seen: string[] = [];
    await expect(
      t.inject({
        type: 'command',
        eventId: 'e0',
        actor: { id: 'ann', via: 'console' },
        channel: 'console',
        name: 'status',
        args: '',
        replyTo: { kind: 'ephemeral', channel: 'console', user: 'ann' },
      }),
    ).rejects.toThrow(/not started/);
    await t.start(async (e) => void seen.push(e.eventId));
    await t.inject({
      type: 'command',
      eventId: 'e1',
      actor: { id: 'ann', via: 'console' },
      channel: 'console',
      name: 'status',
      args: '',
      replyTo: { kind: 'ephemeral', channel: 'console', user: 'ann' },
    });
    expect(seen).toEqual(['e1']);
  });
});
