/**
 * The fake homeserver keeps the client-server API's promises (tests elsewhere rely on them):
 * idempotent sends, rate limiting, relations checked, limited syncs that /messages can fill.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startMatrixFake, type MatrixFake } from '../fakes/matrix-homeserver.js';

let fake: MatrixFake;

interface SyncRooms {
  join: Record<string, { timeline: { events: Array<{ event_id: string }>; limited: boolean; prev_batch: string } }>;
}
afterEach(async () => fake?.close());

async function call(
  method: string,
  path: string,
  body?: unknown,
  token = fake.botToken,
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const res = await fetch(`${fake.url}/_matrix/client/v3${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

const send = (txn: string, content: Record<string, unknown>) => call('PUT', `/rooms/${encodeURIComponent(fake.room)}/send/m.room.message/${txn}`, content);

describe('Matrix homeserver fake', () => {
  it('answers a repeated transaction id with the same event, and records both', async () => {
    fake = await startMatrixFake();
    const a = await send('t1', { msgtype: 'm.notice', body: 'x' });
    const b = await send('t1', { msgtype: 'm.notice', body: 'x' });
    expect(a.status).toBe(200);
    expect(b.json['event_id']).toBe(a.json['event_id']);
    expect(fake.sent.map((s) => s.replay)).toEqual([false, true]);
  });

  it('rate-limits with M_LIMIT_EXCEEDED, retry_after_ms and Retry-After', async () => {
    fake = await startMatrixFake();
    fake.setBehaviour({ rateLimit: { sends: 1, retryAfterMs: 1_200 } });
    const r = await send('t', { msgtype: 'm.notice', body: 'x' });
    expect(r).toMatchObject({ status: 429, json: { errcode: 'M_LIMIT_EXCEEDED', retry_after_ms: 1_200 } });
    expect(r.headers.get('retry-after')).toBe('2');
    expect((await send('t', { msgtype: 'm.notice', body: 'x' })).status).toBe(200);
  });

  it('refuses what a homeserver refuses: bad tokens, other rooms, others’ edits, oversized events', async () => {
    fake = await startMatrixFake();
    expect((await call('GET', '/account/whoami', undefined, 'nope')).json['errcode']).toBe('M_UNKNOWN_TOKEN');
    expect((await call('PUT', `/rooms/${encodeURIComponent('!nowhere:fake.test')}/send/m.room.message/t`, { body: 'x' })).json['errcode']).toBe('M_FORBIDDEN');
    const theirs = fake.say(fake.room, '@ann:fake.test', 'hi');
    const edit = await send('e', {
      msgtype: 'm.text',
      body: '* x',
      'm.new_content': { body: 'x' },
      'm.relates_to': { rel_type: 'm.replace', event_id: theirs },
    });
    expect(edit.status).toBe(400);
    expect((await send('big', { msgtype: 'm.notice', body: 'x'.repeat(70_000) })).json['errcode']).toBe('M_TOO_LARGE');
    const threaded = fake.replyInThread(fake.room, '@ann:fake.test', theirs, 'in thread');
    expect((await send('t2', { body: 'x', 'm.relates_to': { rel_type: 'm.thread', event_id: threaded } })).status).toBe(400);
  });

  it('serves a limited sync whose gap /messages fills back to the previous position', async () => {
    fake = await startMatrixFake();
    fake.join(fake.room, '@ann:fake.test');
    const filter = await call('POST', `/user/${encodeURIComponent(fake.botUserId)}/filter`, { room: { timeline: { limit: 2 } } });
    const first = await call('GET', `/sync?filter=${String(filter.json['filter_id'])}`);
    const since = String(first.json['next_batch']);
    const made = Array.from({ length: 5 }, (_, i) => fake.say(fake.room, '@ann:fake.test', `m${i}`));
    const next = await call('GET', `/sync?filter=${String(filter.json['filter_id'])}&since=${since}&timeout=0`);
    const tl = (next.json['rooms'] as SyncRooms).join[fake.room]!.timeline;
    expect(tl.limited).toBe(true);
    expect(tl.events.map((e) => e.event_id)).toEqual(made.slice(3));
    const older = await call('GET', `/rooms/${encodeURIComponent(fake.room)}/messages?dir=b&from=${tl.prev_batch}&to=${since}&limit=10`);
    expect((older.json['chunk'] as Array<{ event_id: string }>).map((e) => e.event_id)).toEqual(made.slice(0, 3).reverse());
    expect(older.json['end']).toBeUndefined();
  });

  it('holds a sync open until something happens', async () => {
    fake = await startMatrixFake();
    fake.join(fake.room, '@ann:fake.test');
    const first = await call('GET', '/sync');
    // Held far past the test's timeout: only the new event can end it in time (no clock read).
    const pending = call('GET', `/sync?since=${String(first.json['next_batch'])}&timeout=600000`);
    const f = fake;
    await vi.waitFor(() => expect(f.requests.filter((r) => r.path.endsWith('/sync'))).toHaveLength(2)); // the held sync reached the fake
    const id = fake.say(fake.room, '@ann:fake.test', 'wake up');
    const res = await pending;
    const events = (res.json['rooms'] as SyncRooms).join[fake.room]!.timeline.events;
    expect(events.map((e) => e.event_id)).toEqual([id]);
  });

  it('says when the client is caught up: long-polling with nothing newer, not while an event waits for it', async () => {
    fake = await startMatrixFake();
    fake.join(fake.room, '@ann:fake.test');
    expect(fake.caughtUp(), 'no sync yet').toBe(false);
    const first = await call('GET', '/sync');
    expect(fake.caughtUp(), 'answered, not polling again').toBe(false);
    const pending = call('GET', `/sync?since=${String(first.json['next_batch'])}&timeout=600000`);
    const f = fake;
    await vi.waitFor(() => expect(f.caughtUp()).toBe(true));
    fake.say(fake.room, '@ann:fake.test', 'news');
    expect(fake.caughtUp(), 'an event the poll has not handed over').toBe(false);
    const res = await pending;
    expect(fake.caughtUp()).toBe(false);
    const again = call('GET', `/sync?since=${String(res.json['next_batch'])}&timeout=600000`);
    await vi.waitFor(() => expect(f.caughtUp()).toBe(true));
    fake.say(fake.room, '@ann:fake.test', 'more');
    await again;
  });
});
