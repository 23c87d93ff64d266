/**
 * Chat in, effects out (issue 10): reactions, clicks, thread replies and commands reach the
 * bot as ChatEvents; what they mean is recorded once, by allowed users only, and answered
 * through the outbox (thread notices, card edits) or privately (clicks, commands).
 */
import type { TestChatEvent } from './recording-transport.js';
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { describe, expect, it } from 'vitest';
import type { MessageRef } from '../../../src/core/chat/chat-types.js';
import type { CardView, EphemeralView, NoticeView } from '../../../src/core/chat/thread-view.js';
import { asRichText, richText } from '../../../src/core/chat/thread-view.js';
import type { Incident } from '../../../src/core/types.js';
import { alert, fixedSnapshot, incidentEntry, playbook } from '../recall/recall-fixtures.js';
import { botHarness } from './bot-harness.js';

const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const crash = playbook('runbooks/crashloop.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: 'logs' });
const snapshot = fixedSnapshot([oom, crash], { [oom.id]: 30, [crash.id]: 20 });

function firing(fingerprint = 'fp-1', labels: Record<string, string> = {}): Incident {
  return alert({
    alertname: 'KubePodCrashLooping',
    fingerprint,
    labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'warning', ...labels },
    annotations: { summary: 'Pod is crash looping.' },
  });
}
const TK = firing().triggerKey;
const user = (id: string, name?: string) => ({ id, ...(name ? { name } : {}) });
const notices = (sent: Array<{ view: unknown }>): string[] =>
  sent.filter((s) => (s.view as NoticeView).kind === 'notice').map((s) => `${(s.view as NoticeView).icon} ${richText((s.view as NoticeView).text)}`);

async function withThread(opts: Parameters<typeof botHarness>[0] | undefined = undefined) {
  const h = await botHarness(opts ?? { snapshot });
  await h.bot.handle(incidentIntents([firing()]));
  await h.settle();
  const root = h.transport.posts[0]!.ref!;
  const reply = (await h.events()).find((e) => e.type === 'delivered' && !e.root) as { messageRef: string };
  return { ...h, root, detailRef: { ...root, id: reply.messageRef } as MessageRef, controlsId: (h.transport.posts[0]!.view as CardView).controlsId };
}

const reaction = (target: MessageRef, reaction: string, eventId: string, who = 'U1', removed = false): TestChatEvent => ({
  type: 'reaction',
  eventId,
  transport: 'rec',
  user: user(who),
  target,
  reaction,
  removed,
});
const respond = { kind: 'ephemeral' as const, channel: '#rec', user: 'U1' };

describe('votes from chat', () => {
  it("counts a 👎 reaction on the bot's card or its analysis against the recalled entry, once per event", async () => {
    const { bot, transport, ledger, root, detailRef, settle } = await withThread();
    await transport.inject(reaction(root, '-1', 'ev-1'));
    await transport.inject(reaction(root, '-1', 'ev-1')); // Slack retried the same event
    expect(ledger.read.entryStats(oom.id)).toMatchObject({ down: 1 });
    // 👍 from someone else, on the analysis in the thread: also a message the bot sent.
    await transport.inject(reaction(detailRef, '+1', 'ev-2', 'U2'));
    expect(ledger.read.entryStats(oom.id)).toMatchObject({ down: 1, up: 1 });
    // Removing a reaction clears that user's vote.
    await transport.inject(reaction(root, '-1', 'ev-3', 'U1', true));
    expect(ledger.read.entryStats(oom.id)).toMatchObject({ down: 0, up: 1 });
    // Other emoji mean nothing.
    await transport.inject(reaction(root, 'eyes', 'ev-4'));
    await settle();
    expect(ledger.read.votes(TK)).toEqual({ 'rec:U2': expect.objectContaining({ vote: 'up', entry: oom.id }) });
    void bot;
  });

  it('a 👎 (reaction or button) rewrites the card in place with the new tally and the track record it moved', async () => {
    const { transport, root, controlsId, settle } = await withThread();
    await transport.inject(reaction(root, '-1', 'ev-1'));
    await settle();
    const card = () => transport.updates.at(-1)!.view as CardView;
    expect(transport.updates.at(-1)!.ref).toMatchObject({ id: root.id });
    expect(card().feedback).toBe('votes on this alert: 👍 0 👎 1 · entry track record: resolved 0 of 0 concluded recalls (1 in progress) · 👍 0 👎 1');
    expect(card().state).toBe('firing');
    await transport.inject({ type: 'action', eventId: 'click-up', transport: 'rec', user: user('U2'), action: 'vote_up', target: root, controlsId, respond });
    await settle();
    expect(card().feedback).toMatch(/^votes on this alert: 👍 1 👎 1 · .*👍 1 👎 1$/);
    // Changing your mind moves your vote: the tally says so.
    await transport.inject(reaction(root, '+1', 'ev-2'));
    await settle();
    expect(card().feedback).toMatch(/^votes on this alert: 👍 2 👎 0 /);
  });

  it('ignores a reaction on a message the bot did not send, and one from a user outside the allowlist', async () => {
    const { transport, ledger, root } = await withThread({ snapshot, allow: (a) => a.id !== 'U-stranger' });
    const seq = ledger.seq;
    await transport.inject(reaction({ ...root, id: 'someone-elses-message' }, '-1', 'ev-x'));
    await transport.inject(reaction(root, '-1', 'ev-y', 'U-stranger'));
    expect(ledger.seq).toBe(seq);
    expect(ledger.read.entryStats(oom.id)).toMatchObject({ up: 0, down: 0 });
  });

  it('records a button click once, however often it is delivered, and answers the clicker privately, once', async () => {
    const { transport, ledger, root, controlsId, settle } = await withThread();
    const click: TestChatEvent = {
      type: 'action',
      eventId: 'click-1',
      transport: 'rec',
      user: user('U1', 'ann'),
      action: 'vote_up',
      target: root,
      controlsId,
      respond,
    };
    await transport.inject(click);
    await transport.inject(click); // a double click delivers the same action id
    await settle();
    expect(ledger.read.entryStats(oom.id)).toMatchObject({ up: 1 });
    // The answer goes through the outbox with the event: a second delivery of it is answered by the first.
    expect(transport.ephemerals.map((e) => (e.view as EphemeralView).title)).toEqual(['Thanks']);
    expect(transport.ephemerals[0]!.to).toEqual(respond);
  });
});

describe('silences from chat', () => {
  it('🔕 Silence… 4h from the card: recorded, the card is rewritten, the thread is told, the next firing posts nothing', async () => {
    const { bot, transport, ledger, root, controlsId, clock, settle } = await withThread();
    await transport.inject({
      type: 'action',
      eventId: 'sel-1',
      transport: 'rec',
      user: user('U1', 'ann'),
      action: 'silence',
      value: '4h',
      target: root,
      controlsId,
      respond,
    });
    await settle();
    expect(ledger.read.silence(TK, clock.now())).toMatchObject({ active: true, silence: { user: 'rec:U1', until: '2026-01-01T04:00:00.000Z' } });
    expect(transport.updates.map((u) => [(u.view as CardView).state, richText(asRichText((u.view as CardView).stateNote))])).toEqual([
      ['silenced', 'silenced by ann until 04:00 UTC'],
    ]);
    expect(notices(transport.replies)).toEqual(['🔕 silenced by ann until 04:00 UTC']);
    expect((transport.ephemerals[0]!.view as EphemeralView).title).toBe('Silenced');
    // The private answer says the end as the card does, not as an ISO stamp.
    expect((transport.ephemerals[0]!.view as EphemeralView).body.map((p) => richText(p))).toEqual(['🔕 until 04:00 UTC']);
    const seq = ledger.seq;
    clock.advance(60_000);
    expect((await bot.handle(incidentIntents([firing('fp-2')])))[0]).toMatchObject({ status: 'silenced' });
    await settle();
    expect(transport.posts).toHaveLength(1);
    expect(ledger.seq).toBe(seq + 1);
    expect(ledger.read.noiseCounts()['drop:silence']).toBe(1);
  });

  it('a 🔕 reaction silences for 4 h; "@reprise silence: 24h" in the thread for longer; a bad duration is refused with a reason', async () => {
    const { transport, ledger, root, clock, settle, events } = await withThread();
    await transport.inject(reaction(root, 'no_bell', 'r-1'));
    expect(ledger.read.silence(TK, clock.now()).silence?.until).toBe('2026-01-01T04:00:00.000Z');
    await transport.inject({
      type: 'message',
      eventId: 'm-1',
      transport: 'rec',
      user: user('U2'),
      thread: root,
      channel: '#rec',
      text: 'silence: 24h',
      addressed: true,
    });
    expect(ledger.read.silence(TK, clock.now()).silence?.until).toBe('2026-01-02T00:00:00.000Z');
    await settle();
    const silences = async () => (await events()).filter((e) => e.type === 'silence').length;
    const before = await silences();
    await transport.inject({ type: 'action', eventId: 'sel-2', transport: 'rec', user: user('U1'), action: 'silence', value: '90d', target: root, respond });
    await settle();
    expect(await silences()).toBe(before);
    // Refused, and said once, privately (the outbox delivers the answer).
    expect(transport.ephemerals.map((e) => (e.view as EphemeralView).body[0]!.join(''))).toEqual([expect.stringMatching(/30d maximum/)]);
  });
});

describe('notes from threads', () => {
  it('files "@reprise note: …" as a note event and acknowledges it in the thread, once', async () => {
    const { transport, events, root, settle, controlsId } = await withThread();
    const note: TestChatEvent = {
      type: 'message',
      eventId: 'n-1',
      transport: 'rec',
      user: user('U3', 'bob'),
      thread: root,
      channel: '#rec',
      text: 'note: the JVM flag came from the perf branch <!channel>',
      addressed: true,
    };
    await transport.inject(note);
    await transport.inject(note);
    await settle();
    const notes = (await events()).filter((e) => e.type === 'note');
    expect(notes).toEqual([
      expect.objectContaining({
        type: 'note',
        triggerKey: TK,
        openId: controlsId,
        user: 'rec:U3',
        via: 'rec',
        eventId: 'n-1',
        text: 'the JVM flag came from the perf branch <!channel>',
      }),
    ]);
    expect(notices(transport.replies)).toEqual(['📝 saved — note from bob filed with this incident']);
  });

  it('ignores replies that do not address the bot, and refuses notes over 8 KiB or past 20 per thread', async () => {
    const { transport, events, root, settle } = await withThread({ snapshot, notes: { maxBytes: 8 * 1024, perThread: 2 } });
    const say = (id: string, text: string, addressed = true) =>
      transport.inject({ type: 'message', eventId: id, transport: 'rec', user: user('U3'), thread: root, channel: '#rec', text, addressed });
    await say('a', 'just chatting', false);
    await say('b', `note: ${'x'.repeat(9000)}`);
    await say('c', 'note: first');
    await say('d', 'note: second');
    await say('e', 'note: third');
    await settle();
    expect((await events()).filter((e) => e.type === 'note').map((e) => (e as { text: string }).text)).toEqual(['first', 'second']);
    // Refusals are said privately, once per person per thread per window (issue 29 item 5): the
    // note past the cap, from the same person minutes later, is refused without another answer.
    expect(notices(transport.replies)).toEqual([expect.stringMatching(/^📝 saved/), expect.stringMatching(/^📝 saved/)]);
    expect(transport.ephemerals.map((e) => (e.view as EphemeralView).body.map((l) => l.join('')))).toEqual([
      ['⚠️ note not saved: it is longer than 8 KiB; shorten it or link to a document', 'Further refusals to you in this thread are not answered for 10 min.'],
    ]);
    expect((await events()).filter((e) => e.type === 'refusal')).toHaveLength(1);
  });
});

describe('commands', () => {
  const command = (text: string, thread?: MessageRef): TestChatEvent => ({
    type: 'command',
    eventId: `c-${text}`,
    transport: 'rec',
    user: user('U1'),
    channel: '#rec',
    text,
    respond,
    ...(thread ? { thread } : {}),
  });

  it('answers recall, status, help, investigate and unknown words privately, recording nothing but the answers', async () => {
    const { transport, events, settle } = await withThread();
    const answer = async (text: string): Promise<EphemeralView> => {
      await transport.inject(command(text));
      await settle();
      return transport.ephemerals.at(-1)!.view as EphemeralView;
    };
    const recalled = await answer('recall KubePodCrashLooping');
    expect(recalled.title).toBe('Recall for “KubePodCrashLooping”');
    expect(recalled.body[0]!.map((r) => (typeof r === 'string' ? r : 'code' in r ? r.code : '')).join('')).toContain('📚 runbook: runbooks/crashloop.md');
    expect(recalled.trace?.some((t) => t.gate === 'margin')).toBe(true);
    const status = await answer('status');
    expect(status.body.map((p) => p.map((r) => (typeof r === 'string' ? r : 'code' in r ? r.code : '')).join(''))).toEqual([
      '1 open incident.',
      `• ${TK} since 2025-12-31 23:50 UTC`, // when it fired (its startsAt), not when the bot opened it
      'No silences in force.',
      '👀 time to acknowledge: no incident acknowledged yet.',
    ]);
    expect((await answer('help')).title).toBe('Reprise commands');
    expect((await answer('investigate why is checkout down')).body[0]!.join('')).toMatch(/No model is configured/);
    expect((await answer('frobnicate')).title).toMatch(/^Unknown command “frobnicate”/);
    // Each command is one answer in the outbox (delivered once, however often the command is read), nothing else.
    const answers = (await events()).filter((e) => e.type === 'outbox' && e.op === 'answer');
    expect(answers.map((e) => (e as { eventId?: string }).eventId)).toEqual(
      ['recall KubePodCrashLooping', 'status', 'help', 'investigate why is checkout down', 'frobnicate'].map((t) => `c-${t}`),
    );
    expect((await events()).filter((e) => !['outbox', 'delivered', 'open'].includes(e.type))).toEqual([]);
    await transport.inject(command('status'));
    await settle();
    expect(transport.ephemerals).toHaveLength(5);
  });

  it('silences from a thread with `silence 1h`, and asks for a trigger outside one', async () => {
    const { transport, ledger, root, clock, settle } = await withThread();
    await transport.inject(command('silence 1h'));
    await settle();
    expect((transport.ephemerals.at(-1)!.view as EphemeralView).body[0]!.join('')).toMatch(/inside an incident thread/);
    await transport.inject({ ...command('silence 1h', root), eventId: 'c-silence-in-thread' });
    await settle();
    expect(ledger.read.silence(TK, clock.now()).active).toBe(true);
    expect(transport.ephemerals.map((e) => (e.view as EphemeralView).title)).toEqual(['Silence', 'Silenced']);
    expect(richText((transport.ephemerals.at(-1)!.view as EphemeralView).body[0]!)).toBe(`🔕 ${TK} until 01:00 UTC`);
  });

  it('names a trigger by a unique part or a few words in status, ack, silence and postmortem; a name that fits none or several is answered with the triggers it might mean', async () => {
    const { bot, transport, ledger, clock, settle } = await withThread();
    // A second trigger on the same workload: `checkout-api` alone names two.
    await bot.handle(
      incidentIntents([
        alert({ alertname: 'KubeContainerOOMKilled', fingerprint: 'fp-oom', labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q' } }),
      ]),
    );
    await settle();
    const OOM_TK = 'kubecontaineroomkilled|payments|deployment|checkout-api|';
    expect(ledger.read.knowsTrigger(OOM_TK)).toBe(true);
    const said = async (text: string): Promise<{ title: string; text: string[] }> => {
      await transport.inject(command(text));
      await settle();
      const v = transport.ephemerals.at(-1)!.view as EphemeralView;
      return { title: v.title, text: v.body.map((p) => p.map((r) => (typeof r === 'string' ? r : 'code' in r ? `\`${r.code}\`` : '')).join('')) };
    };
    const timeline = await said('status checkout-api crashloop');
    expect(timeline.title).toBe(`Timeline of ${TK}`);
    expect(timeline.text[1]).toMatch(/🚨 fired \(alertmanager\)$/);
    expect(await said('ack Checkout-API crashlooping')).toEqual({ title: 'On it', text: [`👀 recorded: you are on ${TK}`] });
    expect((await said('silence crashloop checkout-api 2h')).title).toBe('Silenced');
    expect(ledger.read.silence(TK, clock.now()).active).toBe(true);
    expect(ledger.read.silence(OOM_TK, clock.now()).active).toBe(false);
    expect((await said('postmortem oomkilled')).title).toBe(`Postmortem of ${OOM_TK}`);

    expect(await said('status checkout-api')).toEqual({
      title: 'Which trigger?',
      text: [`“checkout-api” fits 2 triggers equally: \`${OOM_TK}\`, \`${TK}\`. Say more of the one you mean.`],
    });
    expect(await said('ack chekout-api crashlop')).toEqual({
      title: 'Which trigger?',
      text: [`No trigger is named “chekout-api crashlop”. The closest: \`${TK}\`.`],
    });
    // Nothing was recorded for the names that named no one trigger.
    expect(ledger.read.silence(OOM_TK, clock.now()).active).toBe(false);
    const before = transport.ephemerals.length;
    await transport.inject(command('silence nothing-like-it 1h'));
    await settle();
    expect(transport.ephemerals).toHaveLength(before + 1);
    expect((transport.ephemerals.at(-1)!.view as EphemeralView).body[0]!.join('')).toBe(
      'No trigger is named “nothing-like-it” (`status` lists open incidents).',
    );
  });
});

describe('routing, mentions and several surfaces', () => {
  it("sends two alerts to two channels by rule, and each one's resolve follows it", async () => {
    const h = await botHarness({
      snapshot,
      rules: [
        { match: { namespace: 'payments' }, channels: { rec: '#payments' } },
        { match: { namespace: 'search' }, channels: { rec: '#search' } },
      ],
    });
    const search = alert({ alertname: 'KubePodCrashLooping', fingerprint: 'fp-s', labels: { namespace: 'search', pod: 'indexer-7d9f8c6b5-x2k4q' } });
    await h.bot.handle(incidentIntents([firing('fp-p'), search]));
    await h.settle();
    expect(h.transport.posts.map((p) => (p.to as { channel: string }).channel)).toEqual(['#payments', '#search']);
    await h.bot.handle(
      incidentIntents([
        { ...search, status: 'resolved' },
        { ...firing('fp-p'), status: 'resolved' },
      ]),
    );
    await h.settle();
    expect(h.transport.updates.map((u) => u.ref?.channel)).toEqual(['#search', '#payments']);
  });

  it("lets the webhook's ?channel= win over rules", async () => {
    const h = await botHarness({ snapshot, rules: [{ match: { namespace: 'payments' }, channels: { rec: '#payments' } }] });
    await h.bot.handle([{ type: 'firing', incident: firing(), route: { channel: '#from-alertmanager' } }]);
    await h.settle();
    expect((h.transport.posts[0]!.to as { channel: string }).channel).toBe('#from-alertmanager');
  });

  it("pings owners on critical firings only, never on the resolve's card edit", async () => {
    const h = await botHarness({ snapshot, mentions: [{ match: { namespace: 'payments' }, ids: { rec: ['S-oncall'] } }] });
    await h.bot.handle(incidentIntents([firing('fp-w'), firing('fp-c', { severity: 'critical', pod: 'checkout-api-7d9f8c6b5-p4q7z' })]));
    await h.settle();
    expect(h.transport.posts.map((p) => (p.view as CardView).mentions)).toEqual([[], ['S-oncall']]);
    await h.bot.handle(incidentIntents([{ ...firing('fp-c'), status: 'resolved' }]));
    await h.settle();
    expect(h.transport.updates.map((u) => (u.view as CardView).mentions)).toEqual([[]]);
  });

  it('posts each incident to every surface at once, and resolves it on each', async () => {
    const h = await botHarness({ snapshot, transports: [{ name: 'slack' }, { name: 'matrix' }] });
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    const [slack, matrix] = h.transports;
    expect(slack!.posts).toHaveLength(1);
    expect(matrix!.posts).toHaveLength(1);
    expect((matrix!.posts[0]!.to as { channel: string }).channel).toBe('#matrix');
    await h.bot.handle(incidentIntents([{ ...firing(), status: 'resolved' }]));
    await h.settle();
    expect(slack!.updates).toHaveLength(1);
    expect(matrix!.updates).toHaveLength(1);
  });
});

describe('the card always shows the state (issue 28 item 2)', () => {
  it('a 👎 that ends a silence edits the card back to firing, names who, and the thread reads firing as status does', async () => {
    const { transport, ledger, root, clock, settle } = await withThread();
    await transport.inject(reaction(root, 'no_bell', 'r-1'));
    await settle();
    expect((transport.updates.at(-1)!.view as CardView).state).toBe('silenced');
    clock.advance(60_000);
    await transport.inject(reaction(root, '-1', 'r-2', 'U2'));
    await settle();
    expect(ledger.read.silence(TK, clock.now())).toMatchObject({ active: false });
    const card = transport.updates.at(-1)!.view as CardView;
    expect(card.state).toBe('firing');
    expect(richText(asRichText(card.stateNote))).toBe('silence ended by a 👎 from U2');
    expect(asRichText(card.stateNote)).toContainEqual({ person: { via: 'rec', id: 'U2' } });
    expect(card.feedback).toMatch(/👎 1/);
    expect(notices(transport.replies).at(-1)).toBe('🔔 silence ended by a 👎 from U2');
    expect(ledger.read.newestThread(TK)?.state).toBe('firing');
  });

  it('a 👎 with no silence in force only moves the tally: no state change, no notice', async () => {
    const { transport, root, settle } = await withThread();
    const before = transport.replies.length;
    await transport.inject(reaction(root, '-1', 'r-9'));
    await settle();
    expect((transport.updates.at(-1)!.view as CardView).state).toBe('firing');
    expect(transport.replies.length).toBe(before);
  });

  it('a resolve of a recalled incident is one message, and the same card edit shows the track record it moved', async () => {
    const { bot, transport, clock, settle } = await withThread();
    const replies = transport.replies.length;
    clock.advance(7 * 60_000);
    await bot.handle(incidentIntents([{ ...firing(), status: 'resolved' }]));
    await settle();
    expect(transport.replies.length - replies).toBe(1);
    expect(notices(transport.replies).at(-1)).toMatch(/^✅ resolved after \d+ min$/);
    const card = transport.updates.at(-1)!.view as CardView;
    expect(card.state).toBe('resolved');
    expect(card.feedback).toMatch(/track record: resolved 1 of 1/);
  });
});
