/**
 * Who may ask what, where (issue 29 item 3), walked per command and per surface: a command from
 * a DM or an unconfigured channel is refused with one line naming where to ask, and records
 * nothing; a person outside the allowlist gets no incident content from any command and changes
 * nothing from a thread; an admitted person in the incident channel is answered as before.
 */
import { describe, expect, it } from 'vitest';
import { incidentIntents } from '../../../src/core/bot/intent.js';
import type { Actor, ChatIntent, MessageRef, ResponseTarget } from '../../../src/core/chat/chat-types.js';
import type { EphemeralView, RichText } from '../../../src/core/chat/thread-view.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import { alert, fixedSnapshot, playbook } from '../recall/recall-fixtures.js';
import { botHarness } from './bot-harness.js';

const crash = playbook('runbooks/crashloop.md', { title: 'Pod crash looping', alerts: ['KubePodCrashLooping'], body: 'logs' });
const snapshot = fixedSnapshot([crash], { [crash.id]: 20 });
const firing = alert({
  alertname: 'KubePodCrashLooping',
  fingerprint: 'fp-gate',
  labels: { namespace: 'payments', pod: 'checkout-api-7d9f8c6b5-x2k4q', severity: 'warning' },
  annotations: { summary: 'Pod is crash looping.' },
});
const TK = firing.triggerKey;

/** Each surface as its adapter names things: Slack (slash command or mention), Matrix (`!reprise`). */
const SURFACES = [
  { via: 'slack', channel: '#slack', dm: 'D0DIRECT', other: 'C0RANDOM', admitted: 'U0ANN', stranger: 'U0EVE' },
  {
    via: 'matrix',
    channel: '#matrix',
    dm: '!dm-with-eve:example.org',
    other: '!random:example.org',
    admitted: '@ann:example.org',
    stranger: '@eve:example.org',
  },
] as const;

/** Every command word, with arguments naming the incident's trigger where it takes one. */
const COMMANDS = [
  'status',
  `status ${TK}`,
  `ack ${TK}`,
  `silence ${TK} 1h`,
  `postmortem ${TK}`,
  'recall KubePodCrashLooping',
  'investigate checkout is down',
  'help',
  'frobnicate',
];

const text = (v: EphemeralView): string =>
  [v.title, ...v.body.map((l: RichText) => l.map((r) => (typeof r === 'string' ? r : 'code' in r ? r.code : 'link' in r ? r.link.label : '')).join(''))].join(
    '\n',
  );
const changes = (events: LedgerEvent[]): string[] => events.filter((e) => !['outbox', 'delivered', 'open'].includes(e.type)).map((e) => e.type);

async function setup() {
  const allowed = new Set<string>(SURFACES.map((s) => s.admitted));
  const h = await botHarness({ snapshot, transports: [{ name: 'slack' }, { name: 'matrix' }], allow: (a: Actor) => allowed.has(a.id) });
  await h.bot.handle(incidentIntents([firing]));
  await h.settle();
  const roots = new Map(h.transports.map((t) => [t.name, t.posts[0]!.ref!]));
  let n = 0;
  const command = async (s: (typeof SURFACES)[number], who: string, channel: string, words: string, thread?: MessageRef): Promise<EphemeralView[]> => {
    const t = h.transports.find((x) => x.name === s.via)!;
    const before = t.ephemerals.length;
    const [name = '', ...rest] = words.split(' ');
    const replyTo: ResponseTarget = { kind: 'ephemeral', channel, user: who };
    const intent: ChatIntent = {
      type: 'command',
      eventId: `cmd-${++n}`,
      actor: { id: who, via: s.via },
      name,
      args: rest.join(' '),
      channel,
      replyTo,
      ...(thread ? { thread } : {}),
    };
    await h.bot.handle(intent);
    await h.settle();
    return t.ephemerals.slice(before).map((e) => e.view as EphemeralView);
  };
  return { ...h, roots, command };
}

describe('commands act only in configured channels', () => {
  for (const s of SURFACES)
    it(`${s.via}: every command from a DM or another channel is refused with one line saying where to ask, and records nothing`, async () => {
      const h = await setup();
      const before = changes(await h.events());
      for (const where of [s.dm, s.other])
        for (const words of COMMANDS) {
          const answers = await h.command(s, s.admitted, where, words);
          expect(answers, `${where} ${words}`).toHaveLength(1);
          const said = text(answers[0]!);
          expect(said).toContain(`ask in ${s.channel}`);
          expect(said).not.toContain(TK);
          expect(said).not.toContain('payments');
          expect(answers[0]!.body).toHaveLength(1);
        }
      if (s.via === 'slack') expect(text((await h.command(s, s.admitted, s.dm, 'status'))[0]!)).toMatch(/no commands in direct messages/);
      expect(changes(await h.events())).toEqual(before);
      expect(h.ledger.read.silence(TK, h.clock.now()).active).toBe(false);
    });

  it('a command typed in the thread of an incident the bot posted is taken there', async () => {
    const h = await setup();
    const s = SURFACES[0];
    const root = h.roots.get('slack')!;
    // A thread in a channel a webhook routed it to (not the configured one) is still the bot's.
    const [answer] = await h.command(s, s.admitted, root.channel === s.channel ? 'C0ROUTED' : root.channel, 'silence 1h', { ...root, channel: root.channel });
    expect(answer?.title).toBe('Silenced');
  });
});

describe('answers with incident content go only to admitted people', () => {
  for (const s of SURFACES)
    it(`${s.via}: a stranger in the incident channel learns nothing from any command and changes nothing`, async () => {
      const h = await setup();
      const before = changes(await h.events());
      for (const words of COMMANDS) {
        const answers = await h.command(s, s.stranger, s.channel, words);
        expect(answers, words).toHaveLength(1);
        const said = text(answers[0]!);
        expect(said).not.toContain(TK);
        expect(said).not.toContain('payments');
        expect(said).not.toContain('runbooks/crashloop.md');
        if (words === 'help') expect(said).toContain('Reprise commands');
        else expect(said).toMatch(new RegExp(`allowlist[\\s\\S]*${s.stranger.replace(/[.]/g, '\\.')}[\\s\\S]*transport\\.${s.via}\\.allow_users`));
      }
      expect(changes(await h.events())).toEqual(before);
    });

  for (const s of SURFACES)
    it(`${s.via}: a stranger's thread mentions (note, fixed, question, ack, postmortem, silence, vote) change nothing and answer nothing`, async () => {
      const h = await setup();
      const t = h.transports.find((x) => x.name === s.via)!;
      const root = h.roots.get(s.via)!;
      const before = { changes: changes(await h.events()), replies: t.replies.length, ephemerals: t.ephemerals.length };
      const actor = { id: s.stranger, via: s.via };
      const target = { message: root };
      const thread: ResponseTarget = { kind: 'thread', ref: root };
      const intents: ChatIntent[] = [
        { type: 'note', eventId: 'n1', actor, text: 'it was DNS', target },
        { type: 'fixed', eventId: 'f1', actor, text: 'rolled back', target },
        { type: 'question', eventId: 'q1', actor, text: 'what happened before?', target },
        { type: 'ack', eventId: 'a1', actor, target, replyTo: thread },
        { type: 'postmortem', eventId: 'p1', actor, target },
        { type: 'silence', eventId: 's1', actor, duration: '1h', target, replyTo: thread },
        { type: 'vote', eventId: 'v1', actor, vote: 'down', target },
      ];
      for (const i of intents) await h.bot.handle(i);
      await h.settle();
      expect(changes(await h.events())).toEqual(before.changes);
      expect(t.replies.length).toBe(before.replies);
      for (const e of t.ephemerals.slice(before.ephemerals)) expect(text(e.view as EphemeralView)).not.toContain('payments');
    });

  for (const s of SURFACES)
    it(`${s.via}: an admitted person in the incident channel is answered with the incident`, async () => {
      const h = await setup();
      const [status] = await h.command(s, s.admitted, s.channel, 'status');
      expect(text(status!)).toContain(TK);
      const [ack] = await h.command(s, s.admitted, s.channel, `ack ${TK}`);
      expect(ack?.title).toBe('On it');
    });
});
