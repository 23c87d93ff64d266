/**
 * Refusals said once (issue 29 item 5): 40 questions past the hourly cap, notes past theirs and
 * fixes past 5 are answered to their sender privately once per thread per window ("further
 * refusals … are not answered for N min"), on Slack and Matrix alike; the thread (the channel's
 * rate limit incident cards need) gets none of them; after the window the next one is said again.
 */
import { describe, expect, it } from 'vitest';
import { incidentIntents } from '../../../src/core/bot/intent.js';
import type { ChatIntent } from '../../../src/core/chat/chat-types.js';
import type { EphemeralView, NoticeView } from '../../../src/core/chat/thread-view.js';
import { alert, fixedSnapshot, playbook } from '../recall/recall-fixtures.js';
import { botHarness } from './bot-harness.js';

const crash = playbook('runbooks/crashloop.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: 'logs' });
const snapshot = fixedSnapshot([crash], { [crash.id]: 20 });
const firing = alert({
  alertname: 'KubePodCrashLooping',
  fingerprint: 'fp-ref',
  labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'warning' },
});
const said = (v: EphemeralView): string => v.body.map((l) => l.map((r) => (typeof r === 'string' ? r : 'code' in r ? r.code : '')).join('')).join('\n');

async function setup() {
  const h = await botHarness({
    snapshot,
    transports: [{ name: 'slack' }, { name: 'matrix' }],
    notes: { maxBytes: 8192, perThread: 3 },
  });
  await h.bot.handle(incidentIntents([firing]));
  await h.settle();
  const root = (via: string) => h.transports.find((t) => t.name === via)!.posts[0]!.ref!;
  let n = 0;
  const send = async (mk: (id: string) => ChatIntent): Promise<void> => {
    await h.bot.handle(mk(`ev-${++n}`));
  };
  return { ...h, root, send };
}

describe('refusals are said once per person per thread per window', () => {
  for (const via of ['slack', 'matrix'])
    it(`${via}: 40 questions give the 5 answers the cap allows and one private refusal; the thread gets no refusal`, async () => {
      const h = await setup();
      const t = h.transports.find((x) => x.name === via)!;
      const actor = { id: via === 'slack' ? 'U0ANN' : '@ann:example.org', via };
      const target = { message: h.root(via) };
      const repliesBefore = t.replies.length;
      for (let i = 0; i < 40; i++) await h.send((eventId) => ({ type: 'question', eventId, actor, text: `what now ${i}?`, target }));
      await h.settle();
      const answers = t.replies.slice(repliesBefore).map((r) => (r.view as NoticeView).icon);
      expect(answers).toEqual(['💬', '💬', '💬', '💬', '💬']);
      expect(t.ephemerals).toHaveLength(1);
      const refusal = t.ephemerals[0]!;
      expect(refusal.to).toMatchObject({ kind: 'ephemeral', user: actor.id, channel: target.message.channel, thread: target.message.id });
      expect(said(refusal.view as EphemeralView)).toMatch(
        /question not answered: this thread had 5 questions in the last hour[\s\S]*Further refusals to you in this thread are not answered for 10 min\./,
      );
      expect((await h.events()).filter((e) => e.type === 'refusal')).toHaveLength(1);
      // Someone else is told once too; and after the window the same person is told again.
      const bob = { id: via === 'slack' ? 'U0BOB' : '@bob:example.org', via };
      await h.send((eventId) => ({ type: 'question', eventId, actor: bob, text: 'and me?', target }));
      await h.send((eventId) => ({ type: 'question', eventId, actor: bob, text: 'and me again?', target }));
      h.clock.advance(11 * 60_000);
      await h.send((eventId) => ({ type: 'question', eventId, actor, text: 'still?', target }));
      await h.settle();
      expect(t.ephemerals.map((e) => (e.to as { user: string }).user)).toEqual([actor.id, bob.id, actor.id]);
      // A re-read of a refused event that was said says nothing again.
      const first = (await h.events()).find((e) => e.type === 'refusal') as { eventId: string };
      await h.bot.handle({ type: 'question', eventId: first.eventId, actor, text: 'what now 5?', target });
      await h.settle();
      expect(t.ephemerals).toHaveLength(3);
    });

  it('notes past their cap and fixes past 5 are refused alike on each surface, each told once, never in the thread', async () => {
    const h = await setup();
    for (const via of ['slack', 'matrix']) {
      const t = h.transports.find((x) => x.name === via)!;
      const actor = { id: via === 'slack' ? 'U0CAROL' : '@carol:example.org', via };
      const target = { message: h.root(via) };
      for (let i = 0; i < 10; i++) await h.send((eventId) => ({ type: 'note', eventId, actor, text: `${via} note ${i}`, target }));
      for (let i = 0; i < 10; i++) await h.send((eventId) => ({ type: 'fixed', eventId, actor, text: `${via} fix ${i}`, target }));
      await h.settle();
      const told = t.ephemerals.map((e) => said(e.view as EphemeralView));
      // One refusal for both kinds in the window: the person has been told their words are not being kept.
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/note not saved: this thread already has \d notes/);
      const thread = t.replies.map((r) => JSON.stringify(r.view));
      expect(thread.join('\n')).not.toMatch(/not saved/);
    }
    const events = await h.events();
    // The caps are per thread, whichever surface the words came from: 3 notes and 5 fixes in all.
    expect(events.filter((e) => e.type === 'note')).toHaveLength(3);
    expect(events.filter((e) => e.type === 'fix')).toHaveLength(5);
    // From the CLI (no chat message to answer), a refusal is its outcome, said by the CLI, nothing in chat.
    const before = h.transports.map((t) => t.sent.length);
    const [o] = await h.bot.handle({
      type: 'note',
      actor: { id: 'dave', via: 'cli' },
      text: 'from the CLI',
      target: { triggerKey: firing.triggerKey },
    } as never);
    await h.settle();
    expect(o).toMatchObject({ status: 'refused', reason: 'too many notes in this thread' });
    expect(h.transports.map((t) => t.sent.length)).toEqual(before);
  });
});
