/**
 * The real matrix-bot-sdk client, through the Matrix transport, against the fake homeserver on
 * 127.0.0.1: what goes out on the wire, and what comes in over /sync.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MatrixTransport, transactionId } from '../../src/adapters/matrix/matrix-transport.js';
import { DeliveryError, type ChatIntent } from '../../src/core/chat/chat-types.js';
import { silentLogger } from '../../src/ports/logger.js';
import { startMatrixFake, type MatrixFake } from '../fakes/matrix-homeserver.js';
import { card, detail, HOSTILE } from '../unit/adapters/matrix/views.js';
import { ALICE, BOB, memoryStore, startTransport, type Harness } from './matrix-helpers.js';
import { waitFor } from '../helpers/wait-for.js';

let fake: MatrixFake;
const open: Harness[] = [];

afterEach(async () => {
  for (const h of open.splice(0)) await h.transport.close();
  await fake?.close();
});

async function boot(over: Parameters<typeof startTransport>[2] = {}, store = memoryStore()): Promise<Harness> {
  const h = await startTransport(fake, store, over);
  open.push(h);
  return h;
}

const key = (k: string) => ({ idempotencyKey: k });
const dest = (room: string) => ({ transport: 'matrix', channel: room });

describe('Matrix transport: sending', () => {
  it('posts the card, replies in its thread, and edits it in place, with the right relations', async () => {
    fake = await startMatrixFake();
    const { transport } = await boot();
    const root = await transport.post(dest(fake.room), card(), undefined, key('open-1'));
    expect(root).toEqual({ transport: 'matrix', channel: fake.room, id: expect.stringMatching(/^\$/) });

    const d = await transport.reply(root, detail(), key('detail-1'));
    expect(d).toMatchObject({ channel: fake.room, thread: root.id });
    const resolvedNote = await transport.reply(root, { kind: 'notice', topic: 'resolved', icon: '✅', text: ['resolved after 23 min'] }, key('resolve-note-1'));
    await transport.update(root, card({ state: 'resolved', stateNote: 'resolved after 23 min', controls: false }), key('resolve-card-1'));

    const [c, dd, n, edit] = fake.sent;
    expect(fake.sent).toHaveLength(4);
    expect(c).toMatchObject({ type: 'm.room.message', user: fake.botUserId, txnId: transactionId(fake.room, 'm.room.message', 'open-1') });
    expect(c!.content).toMatchObject({ msgtype: 'm.notice', format: 'org.matrix.custom.html', 'm.mentions': {} });
    expect(c!.content).not.toHaveProperty('m.relates_to');
    for (const s of [dd!, n!]) {
      expect(s.content['m.relates_to']).toEqual({ rel_type: 'm.thread', event_id: root.id, is_falling_back: true, 'm.in_reply_to': { event_id: root.id } });
      expect(s.content['m.mentions']).toEqual({});
    }
    expect(String(dd!.content['formatted_body'])).toContain('<pre><code>kubectl -n checkout get pods -l app=web</code></pre>');
    expect(edit!.content).toMatchObject({ 'm.relates_to': { rel_type: 'm.replace', event_id: root.id }, 'm.mentions': {} });
    expect(String(edit!.content['body']).startsWith('* 🔍 KubePodCrashLooping')).toBe(true);

    // What a client shows: the card now says resolved; the thread holds the detail and the note.
    expect(String(fake.current(root.id)!['body'])).toContain('✅ resolved — resolved after 23 min');
    expect(String(fake.current(root.id)!['body'])).not.toContain('React 👍');
    expect(fake.thread(root.id).map((e) => e.event_id)).toEqual([d.id, resolvedNote.id]);
  });

  it("looks a person's display name up in their profile: none is undefined, a server error is a retryable DeliveryError", async () => {
    fake = await startMatrixFake({ displayNames: { [ALICE]: 'Alice <b>Ops</b>' } });
    const { transport } = await boot();
    const matrix = transport as MatrixTransport;
    // The name as the profile says it: renderers escape it, the directory cleans it.
    expect(await matrix.displayName(ALICE)).toBe('Alice <b>Ops</b>');
    expect(await matrix.displayName(BOB)).toBeUndefined();
    fake.setBehaviour({ failEndpoint: { endpoint: /^GET \/profile/, times: 1, status: 502, errcode: 'M_UNKNOWN' } });
    const err = await matrix.displayName(ALICE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
  });

  it('makes a retried send one event: the idempotency key is the transaction id', async () => {
    fake = await startMatrixFake();
    const { transport } = await boot();
    const a = await transport.post(dest(fake.room), card(), undefined, key('outbox-7'));
    const b = await transport.post(dest(fake.room), card(), undefined, key('outbox-7'));
    const c = await transport.post(dest(fake.room), card(), undefined, key('outbox-8'));
    expect(b.id).toBe(a.id);
    expect(c.id).not.toBe(a.id);
    expect(fake.sent.map((s) => s.replay)).toEqual([false, true, false]);
    expect(fake.events(fake.room).filter((e) => e.type === 'm.room.message' && e.sender === fake.botUserId)).toHaveLength(2);
  });

  it('turns M_LIMIT_EXCEEDED into a retryable DeliveryError with the delay, and succeeds after', async () => {
    fake = await startMatrixFake();
    const { transport } = await boot();
    fake.setBehaviour({ rateLimit: { sends: 1, retryAfterMs: 1_500 } });
    const err = await transport.post(dest(fake.room), card(), undefined, key('rl-1')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect(err).toMatchObject({ retryable: true, retryAfterMs: 1_500 });
    expect((err as Error).message).toContain('M_LIMIT_EXCEEDED');
    const ok = await transport.post(dest(fake.room), card(), undefined, key('rl-1'));
    expect(fake.sent.filter((s) => !s.replay).map((s) => s.eventId)).toEqual([ok.id]);
  });

  it('says which failures are worth retrying: 5xx and down yes, forbidden and unconfigured no', async () => {
    fake = await startMatrixFake();
    const { transport } = await boot();
    fake.setBehaviour({ failSends: { times: 1, status: 502, errcode: 'M_UNKNOWN' } });
    await expect(transport.post(dest(fake.room), card(), undefined, key('a'))).rejects.toMatchObject({ retryable: true });
    fake.setBehaviour({ failSends: { times: 1, status: 403, errcode: 'M_FORBIDDEN' } });
    const forbidden = await transport.post(dest(fake.room), card(), undefined, key('b')).catch((e: unknown) => e);
    expect(forbidden).toMatchObject({ retryable: false });
    expect((forbidden as Error).message).toMatch(/M_FORBIDDEN.*invited/);
    await expect(transport.post(dest('!elsewhere:fake.test'), card(), undefined, key('c'))).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining('not configured'),
    });
    fake.setBehaviour({ down: true });
    await expect(transport.post(dest(fake.room), card(), undefined, key('d'))).rejects.toMatchObject({
      retryable: true,
      message: expect.stringContaining('unreachable'),
    });
    fake.setBehaviour({ down: false });
    await expect(transport.post(dest(fake.room), card(), undefined, key('d'))).resolves.toMatchObject({ channel: fake.room });
    await expect(
      transport.ephemeral(
        { kind: 'response_url', url: 'https://hooks.slack.example/x' },
        { kind: 'ephemeral', title: 't', body: [] },
        { idempotencyKey: 'test-answer' },
      ),
    ).rejects.toMatchObject({ retryable: false });
  });

  it('posts an oversized card cut to fit rather than failing (the fake enforces 65,536 bytes)', async () => {
    fake = await startMatrixFake();
    const { transport } = await boot();
    const huge = 'A'.repeat(70_000);
    const root = await transport.post(dest(fake.room), card({ alertname: huge, stateNote: huge }), undefined, key('big'));
    await transport.reply(root, detail({ labels: Array.from({ length: 300 }, (_, i): [string, string] => [`l${i}`, huge]) }), key('big-detail'));
    await transport.update(root, card({ alertname: huge, where: huge, state: 'resolved', stateNote: huge }), key('big-edit'));
    expect(fake.sent.map((s) => s.replay)).toEqual([false, false, false]);
    expect(String(fake.sent[1]!.content['body'])).toContain('cut to fit the Matrix event size limit');
  });

  it('sends hostile alert text inert: no pings, no markup, no links on the wire', async () => {
    fake = await startMatrixFake();
    const { transport } = await boot();
    const root = await transport.post(
      dest(fake.room),
      card({ alertname: HOSTILE, where: HOSTILE, links: [{ label: HOSTILE, url: 'javascript:alert(1)' }] }),
      undefined,
      key('evil'),
    );
    await transport.reply(root, detail({ labels: [['description', HOSTILE]], facts: [['alert', HOSTILE]] }), key('evil-detail'));
    await transport.update(root, card({ state: 'silenced', stateNote: HOSTILE }), key('evil-edit'));
    for (const s of fake.sent) {
      const shown = [s.content, s.content['m.new_content'] as Record<string, unknown> | undefined].filter((c) => c !== undefined);
      for (const c of shown) {
        expect(c['m.mentions']).toEqual({});
        expect(String(c['body'])).not.toMatch(/@room/i);
        expect(String(c['formatted_body'])).not.toMatch(/<script|<a href="(?!https:\/\/(prometheus|runbooks|grafana|alertmanager|git)\.example)/);
      }
    }
  });

  it('answers a command in its thread, addressed to nobody in particular, or to the user', async () => {
    fake = await startMatrixFake();
    const { transport } = await boot();
    const root = await transport.post(dest(fake.room), card(), undefined, key('open'));
    await transport.ephemeral(
      { kind: 'thread', ref: root },
      { kind: 'ephemeral', title: 'status', body: [['2 open incidents']] },
      { idempotencyKey: 'test-answer' },
    );
    await transport.ephemeral(
      { kind: 'ephemeral', channel: fake.room, user: ALICE },
      { kind: 'ephemeral', title: 'help', body: [] },
      { idempotencyKey: 'test-answer' },
    );
    const [, inThread, toUser] = fake.sent;
    expect(inThread!.content['m.relates_to']).toMatchObject({ rel_type: 'm.thread', event_id: root.id });
    expect(toUser!.content['m.mentions']).toEqual({ user_ids: [ALICE] });
    expect(toUser!.content).not.toHaveProperty('m.relates_to');
  });
});

describe('Matrix transport: receiving', () => {
  it('delivers reactions on the bot’s messages only, never the bot’s own, and their removal', async () => {
    fake = await startMatrixFake();
    const { transport, events } = await boot();
    const root = await transport.post(dest(fake.room), card(), undefined, key('open'));
    const d = await transport.reply(root, detail(), key('detail'));
    const someone = fake.say(fake.room, BOB, 'hello');

    const up = fake.react(fake.room, ALICE, root.id, '👍️');
    fake.react(fake.room, ALICE, someone, '👍'); // not the bot's message
    fake.react(fake.room, fake.botUserId, root.id, '👍'); // the bot's own reaction
    const bell = fake.react(fake.room, BOB, d.id, '🔕');
    const down = fake.react(fake.room, BOB, root.id, '👎🏽');
    // Taken back once counted (a reaction redacted before the bot synced arrives stripped: no vote at all).
    await waitFor(() => events.find((e) => e.eventId === down), 'the 👎');
    const undo = fake.redact(fake.room, ALICE, up);
    await waitFor(() => events.find((e) => e.eventId === undo), 'the removal');

    const on = (id: string, thread?: string) => ({ message: { transport: 'matrix', channel: fake.room, id, ...(thread ? { thread } : {}) } });
    expect(events).toEqual([
      { type: 'vote', eventId: up, actor: { id: ALICE, via: 'matrix' }, vote: 'up', target: on(root.id) },
      { type: 'silence', eventId: bell, actor: { id: BOB, via: 'matrix' }, duration: '4h', target: on(d.id, root.id) },
      { type: 'vote', eventId: down, actor: { id: BOB, via: 'matrix' }, vote: 'down', target: on(root.id) },
      { type: 'vote', eventId: undo, actor: { id: ALICE, via: 'matrix' }, vote: 'clear', target: on(root.id) },
    ]);
  });

  it('hands over !reprise commands anywhere, thread replies, and mentions', async () => {
    fake = await startMatrixFake();
    const { transport, events } = await boot();
    const root = await transport.post(dest(fake.room), card(), undefined, key('open'));
    const cmd = fake.say(fake.room, ALICE, '!reprise recall foo');
    const silence = fake.replyInThread(fake.room, BOB, root.id, '!reprise silence 4h');
    const chatter = fake.replyInThread(fake.room, BOB, root.id, 'looks like the cache again');
    const note = fake.replyInThread(fake.room, ALICE, root.id, 'Reprise: note: bump the limit', {
      format: 'org.matrix.custom.html',
      formatted_body: `<a href="https://matrix.to/#/${fake.botUserId}">Reprise</a>: note: bump the limit`,
      'm.mentions': { user_ids: [fake.botUserId] },
    });
    fake.say(fake.room, BOB, 'unrelated chatter in the room');
    fake.inject(fake.room, { sender: '@otherbot:fake.test', type: 'm.room.message', content: { msgtype: 'm.notice', body: '!reprise status' } });
    const last = fake.say(fake.room, ALICE, '!REPRISE help');
    await waitFor(() => events.find((e) => e.eventId === last), 'the help command');

    const rootRef = { transport: 'matrix', channel: fake.room, id: root.id };
    // An unaddressed reply in the thread (the chatter) means nothing; the mention is a note.
    void chatter;
    expect(events).toEqual([
      {
        type: 'command',
        eventId: cmd,
        actor: { id: ALICE, via: 'matrix' },
        name: 'recall',
        args: 'foo',
        channel: fake.room,
        replyTo: { kind: 'thread', ref: { transport: 'matrix', channel: fake.room, id: cmd } },
      },
      {
        type: 'command',
        eventId: silence,
        actor: { id: BOB, via: 'matrix' },
        name: 'silence',
        args: '4h',
        channel: fake.room,
        thread: rootRef,
        replyTo: { kind: 'thread', ref: rootRef },
      },
      { type: 'note', eventId: note, actor: { id: ALICE, via: 'matrix' }, text: 'bump the limit', target: { message: rootRef } },
      {
        type: 'command',
        eventId: last,
        actor: { id: ALICE, via: 'matrix' },
        name: 'help',
        args: '',
        channel: fake.room,
        replyTo: { kind: 'thread', ref: { transport: 'matrix', channel: fake.room, id: last } },
      },
    ]);
  });

  it('ignores rooms that are not configured, and only joins configured rooms on invite', async () => {
    fake = await startMatrixFake({ rooms: [{}, { id: '!other:fake.test' }, { id: '!later:fake.test', join: false }] });
    const { events } = await boot({ rooms: [fake.room, '!later:fake.test'] });
    // The bot is in !other (say, left over from an earlier configuration), but it is not configured.
    const botMsg = fake.inject('!other:fake.test', { sender: fake.botUserId, type: 'm.room.message', content: { msgtype: 'm.notice', body: 'old card' } });
    fake.react('!other:fake.test', ALICE, botMsg, '👎');
    fake.say('!other:fake.test', ALICE, '!reprise status');
    const stranger = fake.createRoom({ id: '!stranger:fake.test' });
    fake.invite(stranger, fake.botUserId);
    fake.invite('!later:fake.test', fake.botUserId);
    await waitFor(() => fake.requests.some((r) => r.method === 'POST' && r.path.includes('later') && r.status === 200), 'the join of !later');
    const last = fake.say('!later:fake.test', ALICE, '!reprise status');
    await waitFor(() => events.find((e) => e.eventId === last), 'the command in !later');
    expect(events.map((e) => e.eventId)).toEqual([last]);
    expect(fake.requests.filter((r) => r.method === 'POST' && r.path.includes('stranger'))).toEqual([]);
  });

  it('refuses to start in an end-to-end encrypted room, saying so', async () => {
    fake = await startMatrixFake({ rooms: [{ encrypted: true }] });
    const err = await startTransport(fake, memoryStore()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/end-to-end encryption.*not support encrypted rooms/);
  });

  it('does not hold up the bot when the homeserver is down at start, and catches up once it is back', async () => {
    fake = await startMatrixFake();
    fake.setBehaviour({ down: true });
    const { transport, events } = await boot();
    await expect(transport.post(dest(fake.room), card(), undefined, key('early'))).rejects.toMatchObject({ retryable: true });
    fake.setBehaviour({ down: false });
    await waitFor(() => fake.syncs() > 0, 'the first sync after recovery');
    const root = await transport.post(dest(fake.room), card(), undefined, key('early'));
    const vote = fake.react(fake.room, ALICE, root.id, '👍');
    await waitFor(() => events.length === 1, 'the vote');
    expect(events[0]?.eventId).toBe(vote);
  });

  it('fails loudly at start on a rejected access token', async () => {
    fake = await startMatrixFake();
    const t = new MatrixTransport({ homeserverUrl: fake.url, accessToken: 'wrong', rooms: [fake.room], store: memoryStore(), logger: silentLogger });
    await expect(t.start(async () => {})).rejects.toThrow(/M_UNKNOWN_TOKEN.*MATRIX_ACCESS_TOKEN/);
    await t.close();
  });

  it('waits what M_LIMIT_EXCEEDED asks (retry_after_ms) at start and on /sync, never retrying sooner', async () => {
    fake = await startMatrixFake();
    const waits: number[] = [];
    const sleep = async (ms: number): Promise<void> => {
      waits.push(ms);
    };
    fake.setBehaviour({ rateLimitEndpoint: { endpoint: /^GET \/account\/whoami/, times: 1, retryAfterMs: 3_000 } });
    const { transport, events } = await boot({ sleep, backoff: { initialMs: 1_000, maxMs: 60_000 } });
    await waitFor(() => fake.syncs() > 0, 'the sync after the rate-limited start');
    expect(waits).toEqual([3_000]);

    waits.length = 0;
    fake.setBehaviour({ rateLimitEndpoint: { endpoint: /^GET \/sync/, times: 1, retryAfterMs: 8_000 } });
    await waitFor(() => waits.length > 0, 'the rate-limited sync');
    const root = await transport.post(dest(fake.room), card(), undefined, key('open'));
    const vote = fake.react(fake.room, ALICE, root.id, '👍');
    await waitFor(() => events.find((e) => e.eventId === vote), 'the vote');
    // Asked 8 s: waited 8 s, not the 1 s of its own backoff (then 2 s, 4 s…).
    expect(waits).toEqual([8_000]);
  });

  it("waits what a rate-limited event lookup of a batch asks, then delivers the batch's events once", async () => {
    fake = await startMatrixFake();
    const store = memoryStore();
    const first = await boot({}, store);
    const root = await first.transport.post(dest(fake.room), card(), undefined, key('open'));
    // Its own card synced and the position stored past it, so the next process never sees it again.
    const after = fake.syncs();
    await waitFor(() => fake.syncs() >= after + 2, 'two syncs past the card');
    await first.transport.close();
    open.splice(0);
    // A fresh process knows nothing of its earlier messages: a reaction on one needs a lookup.
    const waits: number[] = [];
    const { events } = await boot({ sleep: async (ms) => void waits.push(ms), backoff: { initialMs: 1_000, maxMs: 60_000 } }, store);
    fake.setBehaviour({ rateLimitEndpoint: { endpoint: /^GET \/rooms\/[^/]+\/event\//, times: 1, retryAfterMs: 5_000 } });
    const vote = fake.react(fake.room, ALICE, root.id, '👍');
    await waitFor(() => events.find((e) => e.eventId === vote), 'the vote');
    expect(fake.requests.filter((r) => /\/event\//.test(r.path)).map((r) => r.status)).toEqual([429, 200]);
    expect(waits).toEqual([5_000]);
    expect(events.filter((e) => e.eventId === vote)).toHaveLength(1);
  });

  it('retries a batch the sink could not take, and delivers each event once', async () => {
    fake = await startMatrixFake();
    let failures = 1;
    const seen: ChatIntent[] = [];
    const { transport, events } = await boot({
      sink: async (e) => {
        seen.push(e);
        if (failures-- > 0) throw new Error('store briefly unavailable');
      },
    });
    const root = await transport.post(dest(fake.room), card(), undefined, key('open'));
    const a = fake.react(fake.room, ALICE, root.id, '👍');
    const b = fake.react(fake.room, BOB, root.id, '👍');
    await waitFor(() => events.length === 2, 'both reactions');
    expect(events.map((e) => e.eventId)).toEqual([a, b]);
    expect(seen.map((e) => e.eventId)).toEqual([a, a, b]);
  });
});
