/**
 * A restart neither replays nor misses: the sync position lives in the bot's store and moves
 * only after the sink took a batch. Real matrix-bot-sdk client, fake homeserver, one store kept
 * across two transports as across two processes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatIntent } from '../../src/core/chat/chat-types.js';
import type { KeyValueStore } from '../../src/ports/store.js';
import { startMatrixFake, type MatrixFake } from '../fakes/matrix-homeserver.js';
import { card } from '../unit/adapters/matrix/views.js';
import { ALICE, BOB, memoryStore, startTransport, type Harness } from './matrix-helpers.js';
import { waitFor } from '../helpers/wait-for.js';

let fake: MatrixFake;
const open: Harness[] = [];

afterEach(async () => {
  for (const h of open.splice(0)) await h.transport.close();
  await fake?.close();
});

async function boot(store: KeyValueStore, over: Parameters<typeof startTransport>[2] = {}): Promise<Harness> {
  const h = await startTransport(fake, store, over);
  open.push(h);
  return h;
}

async function stop(h: Harness): Promise<void> {
  open.splice(open.indexOf(h), 1);
  await h.transport.close();
}

const ids = (events: ChatIntent[]) => events.map((e) => e.eventId);

describe('Matrix transport across restarts', () => {
  it('delivers a reaction made while stopped once after restart, and not one already delivered', async () => {
    fake = await startMatrixFake();
    const store = memoryStore();
    const first = await boot(store);
    const root = await first.transport.post({ transport: 'matrix', channel: fake.room }, card(), undefined, { idempotencyKey: 'open' });
    const before = fake.react(fake.room, ALICE, root.id, '👍');
    await waitFor(() => first.events.length === 1, 'the first reaction');
    await stop(first);

    const whileDown = fake.react(fake.room, BOB, root.id, '👎');
    const second = await boot(store);
    await waitFor(() => second.events.length >= 1, 'the reaction made while stopped');
    // A later event proves the batch after restart was fully read: nothing else came before it.
    const after = fake.react(fake.room, BOB, root.id, '🔕');
    await waitFor(() => second.events.find((e) => e.eventId === after), 'a later reaction');

    expect(ids(first.events)).toEqual([before]);
    expect(ids(second.events)).toEqual([whileDown, after]);
    expect(second.events[0]).toMatchObject({ type: 'vote', vote: 'down', actor: { id: BOB }, target: { message: { id: root.id } } });
  });

  it('starts at once after a restart in a quiet room: the catch-up sync does not long-poll', async () => {
    fake = await startMatrixFake();
    const store = memoryStore();
    await stop(await boot(store));
    // The stopped client's last long-poll (200 ms here) ends on its own: wait until the homeserver
    // has answered it, so what follows is the new client's.
    await waitFor(
      () => fake.requests.some((r) => r.path.endsWith('/sync') && r.query['timeout'] === '200') && fake.requests.every((r) => r.status !== 0),
      "the stopped client's last long-poll answered",
    );
    const from = fake.requests.length;
    const second = await boot(store);
    const syncs = fake.requests.slice(from).filter((r) => r.path.endsWith('/sync'));
    expect(syncs[0]?.query['since']).toBeDefined();
    expect(syncs[0]?.query['timeout']).toBe('0');
    // After the catch-up the client long-polls as usual.
    await waitFor(() => fake.requests.slice(from).filter((r) => r.path.endsWith('/sync')).length >= 2, 'the next sync');
    expect(fake.requests.slice(from).filter((r) => r.path.endsWith('/sync'))[1]?.query['timeout']).toBe('200');
    expect(second.events).toEqual([]);
  });

  it('replays a batch the sink never accepted (the position was not persisted)', async () => {
    fake = await startMatrixFake();
    const store = memoryStore();
    const attempts: string[] = [];
    const first = await boot(store, {
      sink: async (e) => {
        attempts.push(e.eventId);
        throw new Error('ledger unavailable');
      },
    });
    const root = await first.transport.post({ transport: 'matrix', channel: fake.room }, card(), undefined, { idempotencyKey: 'open' });
    const vote = fake.react(fake.room, ALICE, root.id, '👎');
    // Offered again and again (the batch is re-read), never accepted.
    await waitFor(() => attempts.length >= 2, 'two attempts');
    await stop(first);
    expect(first.events).toEqual([]);
    expect(new Set(attempts)).toEqual(new Set([vote]));

    const second = await boot(store);
    await waitFor(() => second.events.length === 1, 'the vote after restart');
    expect(ids(second.events)).toEqual([vote]);
  });

  it('fills a gap longer than one sync from /messages after downtime, in order', async () => {
    fake = await startMatrixFake();
    const store = memoryStore();
    const first = await boot(store, { timelineLimit: 3 });
    const root = await first.transport.post({ transport: 'matrix', channel: fake.room }, card(), undefined, { idempotencyKey: 'open' });
    await stop(first);

    const voters = Array.from({ length: 12 }, (_, i) => `@voter${i}:fake.test`);
    const made = voters.map((v) => fake.react(fake.room, v, root.id, '👍'));
    const second = await boot(store, { timelineLimit: 3 });
    await waitFor(() => second.events.length === made.length, 'every reaction of the gap');
    expect(ids(second.events)).toEqual(made);
    expect(fake.requests.some((r) => r.path.endsWith('/messages'))).toBe(true);
  });

  it('delivers the removal of a reaction counted before the restart', async () => {
    fake = await startMatrixFake();
    const store = memoryStore();
    const first = await boot(store);
    const root = await first.transport.post({ transport: 'matrix', channel: fake.room }, card(), undefined, { idempotencyKey: 'open' });
    const up = fake.react(fake.room, ALICE, root.id, '👍');
    await waitFor(() => first.events.length === 1, 'the reaction');
    await stop(first);

    const second = await boot(store);
    const undo = fake.redact(fake.room, ALICE, up);
    await waitFor(() => second.events.length === 1, 'the removal');
    expect(second.events[0]).toEqual({
      type: 'vote',
      eventId: undo,
      actor: { id: ALICE, via: 'matrix' },
      vote: 'clear',
      target: { message: { transport: 'matrix', channel: fake.room, id: root.id } },
    });
  });

  it('keeps syncing after the homeserver was down, from where it was', async () => {
    fake = await startMatrixFake();
    const { transport, events } = await boot(memoryStore());
    const root = await transport.post({ transport: 'matrix', channel: fake.room }, card(), undefined, { idempotencyKey: 'open' });
    fake.setBehaviour({ down: true });
    const syncsBefore = fake.requests.filter((r) => r.path.endsWith('/sync')).length;
    await waitFor(() => fake.requests.filter((r) => r.path.endsWith('/sync')).length > syncsBefore + 1, 'sync retries while down');
    const meanwhile = fake.react(fake.room, ALICE, root.id, '👎');
    fake.setBehaviour({ down: false });
    await waitFor(() => events.length === 1, 'the reaction after recovery');
    expect(ids(events)).toEqual([meanwhile]);
  });
});
