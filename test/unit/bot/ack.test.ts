/**
 * Acknowledge (issue 21 item 1), through the one entrance: an ack intent from any surface or the
 * CLI is recorded once per person and thread, the card names who is on it and after how long,
 * and an ack is never a silence and never a vote. The timeline and `/reprise status` read it.
 */
import { describe, expect, it } from 'vitest';
import { ackIntent, incidentIntents } from '../../../src/core/bot/intent.js';
import { ackLine } from '../../../src/core/bot/ack-flow.js';
import { incidentTimeline, timelineSummary } from '../../../src/core/bot/incident-timeline.js';
import type { CardView, EphemeralView, NoticeView, RichText } from '../../../src/core/chat/thread-view.js';
import { asRichText, richText } from '../../../src/core/chat/thread-view.js';
import { threadReplyIntent } from '../../../src/core/chat/thread-text.js';
import type { MessageRef } from '../../../src/core/chat/chat-types.js';
import { renderCard } from '../../../src/adapters/slack/render-slack-card.js';
import { renderCard as renderCardMatrix } from '../../../src/adapters/matrix/render-matrix.js';
import { renderConsoleCard } from '../../../src/adapters/console/render-console.js';
import type { LoopObserver } from '../../../src/ports/loop-observer.js';
import { alert, fixedSnapshot, incidentEntry } from '../recall/recall-fixtures.js';
import { botHarness } from './bot-harness.js';

const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });
const firing = (fingerprint = 'fp-1') =>
  alert({
    alertname: 'KubePodCrashLooping',
    fingerprint,
    labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'warning' },
    startsAt: '2026-01-01T00:00:00Z',
  });
const TK = firing().triggerKey;

async function withThread(observer?: LoopObserver) {
  const h = await botHarness({ snapshot, ...(observer ? { observer } : {}) });
  await h.bot.handle(incidentIntents([firing()]));
  await h.settle();
  const root = h.transport.posts[0]!.ref! as MessageRef;
  return { ...h, root };
}
const ack = (root: MessageRef, id: string, eventId: string, name?: string) => ({
  type: 'ack' as const,
  eventId,
  actor: { id, ...(name ? { name } : {}), via: 'rec' },
  target: { message: root },
});
const lastCard = (h: { transport: { updates: Array<{ view: unknown }> } }) => h.transport.updates.at(-1)!.view as CardView;

describe('ack', () => {
  it('edits the card in place with who is on it and how long after it fired; a second person adds themselves', async () => {
    const h = await withThread();
    h.clock.advance(4 * 60_000);
    const [o] = await h.bot.handle(ack(h.root, 'U1', 'ev-1', 'alice'));
    expect(o).toMatchObject({ status: 'recorded', kind: 'ack', triggerKey: TK });
    await h.settle();
    expect(richText(asRichText(lastCard(h).ack))).toBe('👀 alice is on it · 4 min after it fired');
    h.clock.advance(60_000);
    await h.bot.handle(ack(h.root, 'U2', 'ev-2', 'bob'));
    await h.settle();
    expect(richText(asRichText(lastCard(h).ack))).toBe('👀 alice and bob are on it · 4 min after it fired');
    expect(asRichText(lastCard(h).ack)).toContainEqual({ person: { via: 'rec', id: 'U2', name: 'bob' } });
    // The card keeps its state: an ack is not a silence.
    expect(lastCard(h).state).toBe('firing');
    const notices = h.transport.replies.map((r) => r.view).filter((v): v is NoticeView => v.kind === 'notice');
    expect(notices.map((n) => `${n.icon} ${richText(n.text)}`)).toEqual(['👀 alice is on it', '👀 bob is on it']);
  });

  it('counts once per event and once per person; never a vote, never a silence', async () => {
    const h = await withThread();
    await h.bot.handle(ack(h.root, 'U1', 'ev-1', 'alice'));
    const [again] = await h.bot.handle(ack(h.root, 'U1', 'ev-1', 'alice')); // a retried delivery
    const [twice] = await h.bot.handle(ack(h.root, 'U1', 'ev-9', 'alice')); // the same person again
    expect(again).toMatchObject({ status: 'duplicate' });
    expect(twice).toMatchObject({ status: 'ignored', reason: 'alice is already on it' });
    expect((await h.events()).filter((e) => e.type === 'ack')).toHaveLength(1);
    expect(h.ledger.read.votes(TK)).toEqual({});
    expect(h.ledger.read.entryStats(oom.id)).toMatchObject({ up: 0, down: 0 });
    expect(h.ledger.read.silence(TK, h.clock.now())).toMatchObject({ active: false });
    expect(h.ledger.read.newestThread(TK)?.state).toBe('firing');
  });

  it('refuses someone off the allowlist and an ack on a message the bot did not send', async () => {
    const h = await botHarness({ snapshot, allow: (a) => a.id === 'U1' });
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    const root = h.transport.posts[0]!.ref! as MessageRef;
    expect((await h.bot.handle(ack(root, 'U2', 'ev-1')))[0]).toMatchObject({ status: 'refused' });
    expect((await h.bot.handle(ack({ ...root, id: 'not-ours' }, 'U1', 'ev-2')))[0]).toMatchObject({ status: 'ignored' });
    expect((await h.events()).filter((e) => e.type === 'ack')).toHaveLength(0);
  });

  it('from the CLI by trigger key, as user U; an unknown trigger is a clear error, nothing recorded', async () => {
    const h = await withThread();
    const [o] = await h.bot.handle(ackIntent({ triggerKey: TK, user: 'carol' }));
    expect(o).toMatchObject({ status: 'recorded', kind: 'ack' });
    await h.settle();
    expect(richText(asRichText(lastCard(h).ack))).toMatch(/^👀 carol is on it/);
    await expect(h.bot.handle(ackIntent({ triggerKey: 'nope|x', user: 'carol' }))).rejects.toThrow(/no incident thread for trigger nope\|x/);
  });

  it('`ack` in the thread is an ack; a word that starts with ack is not (a question, issue 21 item 3)', () => {
    const ctx = { eventId: 'e', actor: { id: 'U1', via: 'slack' }, thread: { transport: 'slack', channel: 'C', id: '1.0' } };
    expect(threadReplyIntent('ack', ctx)?.type).toBe('ack');
    expect(threadReplyIntent('ACK: looking now', ctx)?.type).toBe('ack');
    expect(threadReplyIntent('acknowledged the cache is cold', ctx)?.type).toBe('question');
    expect(threadReplyIntent('note: acknowledged the cache is cold', ctx)?.type).toBe('note');
  });

  it('/reprise ack in a thread, /reprise ack <trigger> anywhere, and a clear answer without either', async () => {
    const h = await withThread();
    const respond = { kind: 'ephemeral' as const, channel: '#rec', user: 'U1' };
    const cmd = (args: string, eventId: string, thread?: MessageRef) => ({
      type: 'command' as const,
      eventId,
      actor: { id: 'U1', name: 'alice', via: 'rec' },
      name: 'ack',
      args,
      channel: '#rec',
      ...(thread ? { thread } : {}),
      replyTo: respond,
    });
    await h.bot.handle(cmd('', 'c-1'));
    await h.bot.handle(cmd(TK, 'c-2'));
    await h.bot.handle(cmd('', 'c-3', h.root)); // already on it
    await h.settle();
    const answers = h.transport.ephemerals.map((e) => e.view as EphemeralView);
    expect(answers.map((a) => a.title)).toEqual(['Ack', 'On it', 'Not recorded']);
    expect(richText(answers[1]!.body[0]!)).toBe(`👀 recorded: you are on ${TK}`);
    expect((await h.events()).filter((e) => e.type === 'ack')).toHaveLength(1);
  });

  it('`!reprise ack` typed in the thread is answered by the card and the notice alone (no third message)', async () => {
    const h = await withThread();
    await h.bot.handle({
      type: 'command',
      eventId: 'c-t',
      actor: { id: 'U1', name: 'alice', via: 'rec' },
      name: 'ack',
      args: '',
      channel: '#rec',
      thread: h.root,
      replyTo: { kind: 'thread', ref: h.root },
    });
    await h.settle();
    expect(h.transport.ephemerals).toHaveLength(0);
    expect(richText(asRichText(lastCard(h).ack))).toMatch(/^👀 alice is on it/);
    expect(h.transport.replies.map((r) => r.view).filter((v) => v.kind === 'notice' && richText(v.text).includes('is on it'))).toHaveLength(1);
  });

  it('time to acknowledge: the first ack of a thread on the metrics port once, and a figure in /reprise status', async () => {
    const seen: number[] = [];
    const observer: LoopObserver = { recallDecided() {}, investigationEnded() {}, deliveryEnded() {}, acknowledged: (s) => void seen.push(s) };
    const h = await withThread(observer);
    h.clock.advance(4 * 60_000);
    await h.bot.handle(ack(h.root, 'U1', 'ev-1', 'alice'));
    await h.bot.handle(ack(h.root, 'U2', 'ev-2', 'bob'));
    expect(seen).toEqual([240]);
    const [o] = await h.bot.handle({
      type: 'command',
      eventId: 'c-1',
      actor: { id: 'U1', via: 'rec' },
      name: 'status',
      args: '',
      channel: '#rec',
      replyTo: { kind: 'ephemeral', channel: '#rec', user: 'U1' },
    });
    expect(o).toMatchObject({ status: 'answered' });
    await h.settle();
    const status = h.transport.ephemerals.at(-1)!.view as EphemeralView;
    expect(status.body.map(richText)).toContain('👀 time to acknowledge: median 4 min, p90 4 min over the last 1 acknowledged incident.');
  });
});

describe("the card names people the surface's way; a display name is never markup", () => {
  const card = (line: RichText): CardView => ({
    kind: 'card',
    state: 'firing',
    alertname: 'A',
    where: 'x',
    severity: 'warning',
    verdict: 'inconclusive',
    headline: { answer: 'none' },
    links: [],
    triggerKey: 'a',
    controlsId: 'c',
    controls: true,
    mentions: [],
    ack: line,
  });
  const HOSTILE = '<!channel> <@U999> *bold* <b>x</b> @room [x](https://evil.example)';
  const slackAck = ackLine([{ user: 'slack:U0ANN', via: 'slack', name: HOSTILE, at: '2026-01-01T00:04:00Z' }], '2026-01-01T00:00:00Z')!;
  const matrixAck = ackLine([{ user: 'matrix:@ann:example.org', via: 'matrix', name: HOSTILE, at: '2026-01-01T00:04:00Z' }], '2026-01-01T00:00:00Z')!;
  const cliAck = ackLine([{ user: 'ops', via: 'cli', name: HOSTILE, at: '2026-01-01T00:04:00Z' }], '2026-01-01T00:00:00Z')!;

  it('Slack: the Slack person is their own mention (Slack shows their name); nothing else pings', () => {
    const msg = renderCard(card(slackAck));
    const json = JSON.stringify(msg.blocks);
    expect(json).toContain('is on it · 4 min after it fired');
    expect(json).toContain('{"type":"user","user_id":"U0ANN"}');
    expect(json).not.toContain('U999');
    expect(json).not.toMatch(/"type":"(broadcast|usergroup)"/);
    expect(msg.text).not.toContain('<!channel>');
  });

  it('Slack: someone from another surface is literal text, never a mention', () => {
    const json = JSON.stringify(renderCard(card(cliAck)).blocks);
    expect(json).not.toMatch(/"type":"(broadcast|user|usergroup|link)"/);
    expect(json).toContain('<!channel>');
  });

  it('Matrix: a Matrix person is a pill, the name escaped; no m.mentions, no other link', () => {
    const m = renderCardMatrix(card(matrixAck));
    expect(m.formatted_body).toContain('<a href="https://matrix.to/#/%40ann%3Aexample.org">&lt;!channel&gt;');
    expect(m.formatted_body).not.toContain('<b>x</b>');
    expect(m.formatted_body).not.toContain('evil.example"');
    expect(m.body).toContain('@\u2060room');
    expect(JSON.stringify(m['m.mentions'] ?? {})).toBe('{}');
    const other = renderCardMatrix(card(slackAck));
    expect(other.formatted_body).not.toContain('matrix.to');
  });

  it('console: escaped like every other line', () => {
    const out = renderConsoleCard(card(cliAck)).join('\n');
    expect(out).toContain('is on it · 4 min after it fired');
    expect(richText(slackAck)).toContain('is on it');
  });
});

describe('the timeline', () => {
  it('tells the episode from the ledger read API: fired, posted, ack, vote, note, fix, silence, resolved, with durations', async () => {
    const h = await withThread();
    h.clock.advance(4 * 60_000);
    await h.bot.handle(ack(h.root, 'U1', 'ev-1', 'alice'));
    h.clock.advance(60_000);
    await h.bot.handle({ type: 'vote', eventId: 'ev-2', actor: { id: 'U2', via: 'rec' }, vote: 'up', target: { message: h.root } });
    await h.bot.handle({
      type: 'note',
      eventId: 'ev-3',
      actor: { id: 'U1', via: 'rec' },
      text: 'rolled back <!channel>\nsecond line',
      target: { message: h.root },
    });
    await h.bot.handle({
      type: 'fixed',
      eventId: 'ev-5',
      actor: { id: 'U1', via: 'rec' },
      text: 'raised the memory limit to 1Gi',
      target: { message: h.root },
    });
    await h.bot.handle({ type: 'silence', eventId: 'ev-4', actor: { id: 'U1', via: 'rec' }, duration: '1h', target: { message: h.root } });
    h.clock.advance(18 * 60_000);
    await h.bot.handle(incidentIntents([{ ...firing(), status: 'resolved', endsAt: h.clock.now().toISOString() }]));
    await h.settle();
    const t = incidentTimeline(h.ledger.read, TK);
    expect(t.items.map((i) => i.kind)).toEqual(['fired', 'opened', 'posted', 'ack', 'vote', 'note', 'fix', 'silence', 'resolved']);
    expect(t.items.find((i) => i.kind === 'fix')?.detail).toBe('raised the memory limit to 1Gi');
    expect(t.items.find((i) => i.kind === 'note')?.detail).toBe('rolled back <!channel>');
    expect(richText(timelineSummary(t))).toBe('acknowledged after 4 min · resolved after 23 min · on it: alice');
    // /reprise status <trigger>: the same timeline as a private answer.
    await h.bot.handle({
      type: 'command',
      eventId: 'c-1',
      actor: { id: 'U1', via: 'rec' },
      name: 'status',
      args: TK,
      channel: '#rec',
      replyTo: { kind: 'ephemeral', channel: '#rec', user: 'U1' },
    });
    await h.settle();
    const answer = h.transport.ephemerals.at(-1)!.view as EphemeralView;
    expect(answer.title).toBe(`Timeline of ${TK}`);
    expect(answer.body.map(richText).slice(0, 2)).toEqual([
      'acknowledged after 4 min · resolved after 23 min · on it: alice',
      expect.stringMatching(/🚨 fired/),
    ]);
    expect(answer.body.map(richText).join('\n')).toMatch(/\+4 min\s+👀 acknowledged by alice via rec/);
    // A silence's end as a time people read (the day too only when it is another), never an ISO stamp.
    expect(answer.body.map(richText).join('\n')).toMatch(/🔕 silenced by \S+ via rec until \d\d:\d\d UTC$/m);
    expect(answer.body.map(richText).join('\n')).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
  });

  it('an unknown trigger has an empty timeline and a clear answer', async () => {
    const h = await withThread();
    expect(incidentTimeline(h.ledger.read, 'nope').items).toEqual([]);
  });

  it('survives a restart: the read model folded from the log says the same', async () => {
    const h = await withThread();
    await h.bot.handle(ack(h.root, 'U1', 'ev-1', 'alice'));
    const { replayEvents } = await import('../../../src/core/ledger/ledger-state.js');
    const replayed = replayEvents(await h.events());
    const live = h.ledger.read.newestThread(TK)!;
    const again = Object.values(replayed.threads).find((t) => t.openId === live.openId)!;
    expect(again.acks).toEqual(live.acks);
    expect(again.timeline).toEqual(live.timeline);
  });
});
