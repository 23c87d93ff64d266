/**
 * Who is on call (issue 32) through the one entrance: a critical firing that carries its on-call
 * answer gets the line on every surface's card with that surface's id, a warning none; nobody
 * acking within remind_after means one reminder in the thread (durable: a reopened ledger does
 * not say it again); an ack or a resolve before cancels it; an unknown answer says why.
 */
import { describe, expect, it } from 'vitest';
import { ackIntent } from '../../../src/core/bot/intent.js';
import type { Intent } from '../../../src/core/bot/intent.js';
import type { CardView, NoticeView } from '../../../src/core/chat/thread-view.js';
import { richText } from '../../../src/core/chat/thread-view.js';
import { renderCard } from '../../../src/adapters/slack/render-slack-card.js';
import { renderNotice } from '../../../src/adapters/slack/render-slack-detail.js';
import { renderCard as renderMatrixCard, renderNotice as renderMatrixNotice } from '../../../src/adapters/matrix/render-matrix.js';
import { renderConsoleCard } from '../../../src/adapters/console/render-console.js';
import type { OnCallAnswer } from '../../../src/ports/oncall.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { alert, fixedSnapshot } from '../recall/recall-fixtures.js';
import { botHarness, tick } from './bot-harness.js';

const snapshot = fixedSnapshot([], {});
const ann: OnCallAnswer = {
  known: true,
  people: [{ name: 'Ann <!channel>', email: 'ann@example.org', chat: { slack: 'U0ANN', matrix: '@ann:example.org' } }],
  until: '2026-01-01T09:00:00Z',
  source: 'rotation',
};
/** A firing carrying its on-call answer (`null`: none, as without a provider); `app` names its workload (its trigger). */
const firing = (severity: string, onCall: OnCallAnswer | null = ann, app = 'api'): Extract<Intent, { type: 'firing' }> => ({
  type: 'firing',
  incident: alert({
    alertname: 'KubePodCrashLooping',
    fingerprint: `fp-${severity}-${app}`,
    labels: { namespace: 'shop', pod: `${app}-7d9f8c6b5-x2k4q`, severity },
    startsAt: '2026-01-01T00:00:00Z',
  }),
  ...(onCall ? { onCall: { route: 'default', answer: onCall } } : {}),
});
const TEN_MIN = 10 * 60_000;

async function harness(clock = new ManualClock('2026-01-01T00:00:00Z'), store?: Parameters<typeof botHarness>[0]['store']) {
  return botHarness({ snapshot, clock, ...(store ? { store } : {}), transports: [{ name: 'slack' }, { name: 'matrix' }], onCall: { remindAfterMs: TEN_MIN } });
}

describe('the on-call line on critical cards', () => {
  it('names and pings the person its surface way on Slack and Matrix; the text stays text', async () => {
    const h = await harness();
    await h.bot.handle(firing('critical'));
    await h.settle();
    const [slack, matrix] = h.transports;
    const card = slack!.posts[0]!.view as CardView;
    expect(card.onCall).toEqual({ people: [{ name: 'Ann <!channel>', id: 'U0ANN' }], detail: 'rotation · until 09:00 UTC' });
    const s = renderCard(card);
    expect(s.text.startsWith('<@U0ANN> ')).toBe(true);
    expect(JSON.stringify(s.blocks)).toContain('{"type":"user","user_id":"U0ANN"}');
    expect(JSON.stringify(s.blocks)).not.toContain('<!channel>');
    const mcard = matrix!.posts[0]!.view as CardView;
    expect(mcard.onCall?.people).toEqual([{ name: 'Ann <!channel>', id: '@ann:example.org' }]);
    const m = renderMatrixCard(mcard);
    expect(m['m.mentions']).toEqual({ user_ids: ['@ann:example.org'] });
    expect(m.formatted_body).toContain('https://matrix.to/#/%40ann%3Aexample.org');
  });

  it('a person without an id on a surface is named as text there: hostile names stay text and ping nobody', async () => {
    const h = await harness();
    const hostile: OnCallAnswer = { known: true, people: [{ name: '@room <img src=x> <!here>', chat: {} }], source: 'grafana' };
    await h.bot.handle(firing('critical', hostile));
    await h.settle();
    const [slack, matrix] = h.transports;
    const s = renderCard(slack!.posts[0]!.view as CardView);
    expect(s.text).not.toContain('<!here>');
    expect(JSON.stringify(s.blocks)).not.toContain('"type":"user"');
    const m = renderMatrixCard(matrix!.posts[0]!.view as CardView);
    expect(m['m.mentions']).toEqual({});
    expect(m.formatted_body).not.toContain('<img');
    expect(m.formatted_body).toContain('&lt;img src=x&gt;');
    expect(renderConsoleCard(slack!.posts[0]!.view as CardView)).toContain('📟 on call: @room <img src=x> <!here> (Grafana OnCall)');
  });

  it('a warning gets no on-call line; a card with unknown says why and pings nobody', async () => {
    const h = await harness();
    await h.bot.handle(firing('warning'));
    await h.bot.handle(firing('critical', { known: false, reason: 'PagerDuty did not answer within 1.5 s', source: 'pagerduty' }));
    await h.settle();
    const [warn, crit] = h.transports[0]!.posts.map((p) => p.view as CardView);
    expect(warn!.onCall).toBeUndefined();
    expect(crit!.onCall).toEqual({ people: [], detail: 'PagerDuty', unknown: 'PagerDuty did not answer within 1.5 s' });
    expect(renderConsoleCard(crit!)).toContain('📟 on call: unknown (PagerDuty did not answer within 1.5 s)');
    expect(renderCard(crit!).text.startsWith('<@')).toBe(false);
    // Nobody known: nobody to remind.
    h.clock.advance(TEN_MIN + 1000);
    await tick(h.bot);
    await h.settle();
    expect(h.transports[0]!.replies.filter((r) => (r.view as NoticeView).icon === '⏰')).toEqual([]);
  });

  it('a card without an answer (no provider configured) has no line', async () => {
    const h = await harness();
    await h.bot.handle(firing('critical', null));
    await h.settle();
    expect((h.transports[0]!.posts[0]!.view as CardView).onCall).toBeUndefined();
  });
});

describe('the reminder', () => {
  const reminders = (h: Awaited<ReturnType<typeof harness>>, i = 0): NoticeView[] =>
    h.transports[i]!.replies.map((r) => r.view as NoticeView).filter((v) => v.kind === 'notice' && v.icon === '⏰');

  it('nobody acked within remind_after: the thread mentions them once, on each surface, and never again', async () => {
    const h = await harness();
    await h.bot.handle(firing('critical'));
    await h.settle();
    h.clock.advance(TEN_MIN - 1000);
    await tick(h.bot);
    await h.settle();
    expect(reminders(h)).toEqual([]);
    h.clock.advance(2000);
    await tick(h.bot);
    await tick(h.bot);
    await h.settle();
    const [r] = reminders(h);
    expect(reminders(h)).toHaveLength(1);
    // Plain text names the person (renderers mention them their surface's way; the name is escaped there).
    expect(richText(r!.text)).toBe('nobody has acknowledged after 10 min · 📟 on call: Ann <!channel> (rotation · until 09:00 UTC)');
    expect(r!.mentions).toEqual(['U0ANN']);
    expect(renderNotice(r!).text.startsWith('<@U0ANN> ')).toBe(true);
    const [mr] = reminders(h, 1);
    expect(mr!.mentions).toEqual(['@ann:example.org']);
    expect(renderMatrixNotice(mr!)['m.mentions']).toEqual({ user_ids: ['@ann:example.org'] });
    h.clock.advance(TEN_MIN * 3);
    await tick(h.bot);
    await h.settle();
    expect(reminders(h)).toHaveLength(1);
  });

  it('is durable: a bot on the same store after a restart does not remind again', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const first = await harness(clock);
    await first.bot.handle(firing('critical'));
    await first.settle();
    clock.advance(TEN_MIN + 1000);
    await tick(first.bot);
    await first.settle();
    expect(reminders(first)).toHaveLength(1);
    await first.outbox.stop();
    const again = await harness(clock, first.store);
    await tick(again.bot);
    await again.settle();
    expect(reminders(again)).toEqual([]);
    expect((await again.events()).filter((e) => e.type === 'oncall_reminder')).toHaveLength(1);
  });

  it('an ack before it is due cancels it; so does a resolve', async () => {
    const h = await harness();
    await h.bot.handle(firing('critical'));
    await h.bot.handle(firing('critical', ann, 'web'));
    await h.settle();
    await h.bot.handle(ackIntent({ triggerKey: firing('critical').incident.triggerKey, user: 'bob' }));
    const other = firing('critical', ann, 'web').incident;
    await h.bot.handle({ type: 'resolve', incident: { ...other, status: 'resolved', endsAt: '2026-01-01T00:05:00Z' } });
    expect(h.transports[0]!.posts).toHaveLength(2);
    h.clock.advance(TEN_MIN + 1000);
    await tick(h.bot);
    await h.settle();
    expect(reminders(h)).toEqual([]);
  });
});

describe('a late answer', () => {
  it('edits the cards that said unknown, mentions the person once in the thread, and reminds from then', async () => {
    const h = await harness();
    const late: Intent = {
      ...firing('critical', null),
      onCall: { route: 'default', answer: { known: false, reason: 'PagerDuty did not answer within 1.5 s', source: 'pagerduty' }, late: true },
    };
    await h.bot.handle(late);
    await h.settle();
    const [slack, matrix] = h.transports;
    expect((slack!.posts[0]!.view as CardView).onCall?.unknown).toBe('PagerDuty did not answer within 1.5 s');
    // Another route's answer is not this thread's.
    await h.bot.handle({ type: 'oncall_answered', route: 'payments', answer: ann });
    await h.bot.handle({ type: 'oncall_answered', route: 'default', answer: ann });
    await h.bot.handle({ type: 'oncall_answered', route: 'default', answer: ann });
    await h.settle();
    const edited = slack!.updates.map((u) => u.view as CardView);
    expect(edited).toHaveLength(1);
    expect(edited[0]!.onCall).toEqual({ people: [{ name: 'Ann <!channel>', id: 'U0ANN' }], detail: 'rotation · until 09:00 UTC' });
    expect(edited[0]!.state).toBe('firing');
    const told = slack!.replies.map((r) => r.view as NoticeView).filter((v) => v.kind === 'notice' && v.icon === '📟');
    expect(told).toHaveLength(1);
    expect(told[0]!.mentions).toEqual(['U0ANN']);
    expect((matrix!.updates[0]!.view as CardView).onCall?.people).toEqual([{ name: 'Ann <!channel>', id: '@ann:example.org' }]);
    // The reminder counts from the late answer.
    h.clock.advance(TEN_MIN + 1000);
    await tick(h.bot);
    await h.settle();
    expect(slack!.replies.filter((r) => (r.view as NoticeView).icon === '⏰')).toHaveLength(1);
  });

  it('a card that had its answer in time is not edited by a later one', async () => {
    const h = await harness();
    await h.bot.handle(firing('critical'));
    await h.bot.handle({ type: 'oncall_answered', route: 'default', answer: ann });
    await h.settle();
    expect(h.transports[0]!.updates).toEqual([]);
  });
});

describe('/reprise oncall', () => {
  it('answers from the configured lookup, once per command event; without one it says how to configure it', async () => {
    const asked: Array<[string | undefined, string]> = [];
    const h = await botHarness({
      snapshot,
      transports: [{ name: 'slack' }],
      whoIsOnCall: (route, via) => (asked.push([route, via]), Promise.resolve({ kind: 'ephemeral', title: '📟 On call · payments', body: [['ann']] })),
    });
    const cmd = (eventId: string): Intent => ({
      type: 'command',
      eventId,
      name: 'oncall',
      args: 'payments',
      actor: { id: 'U1', via: 'slack' },
      channel: '#slack',
      replyTo: { kind: 'ephemeral', channel: '#slack', user: 'U1' },
    });
    await h.bot.handle(cmd('e1'));
    await h.bot.idle();
    await h.bot.handle({
      type: 'answer',
      via: 'slack',
      replyTo: { kind: 'ephemeral', channel: '#slack', user: 'U1' },
      view: { kind: 'ephemeral', title: 'again', body: [] },
      eventId: 'e1',
    });
    await h.settle();
    expect(asked).toEqual([['payments', 'slack']]);
    const answers = h.transports[0]!.ephemerals;
    expect(answers.map((a) => a.view.kind === 'ephemeral' && a.view.title)).toEqual(['📟 On call · payments']);
    const bare = await botHarness({ snapshot, transports: [{ name: 'slack' }] });
    await bare.bot.handle(cmd('e2'));
    await bare.settle();
    expect(JSON.stringify(bare.transports[0]!.ephemerals[0]!.view)).toContain('No on-call source is configured');
  });
});
