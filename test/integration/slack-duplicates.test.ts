/**
 * The window no check before a send can close (issue 20, the residual SIGSTOP case): a leader
 * paused with a post still inside its HTTP client sends it when it wakes, after the next leader
 * looked the item up (not found) and posted it. Slack has no conditional post, so the duplicate
 * is taken back — never the card the ledger records:
 * - the old process does not record a send answered after it lost the lead, watches the shared
 *   ledger, and deletes its own message once the ledger records another (keeps it when the
 *   leader adopted it);
 * - a lookup that finds an item twice adopts the oldest and deletes the other;
 * - the new leader reads the place again later (the late duplicate sweep) and deletes what the
 *   old process could not (it died).
 * Two harnesses share one store (the old and the new leader); real SlackTransport and outbox,
 * the Slack stand-in on 127.0.0.1, outbox timers on ManualClocks.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import { createSlackTransport, type SlackTransport } from '../../src/adapters/slack/slack-transport.js';
import { incidentIntents } from '../../src/core/bot/intent.js';
import type { LedgerEvent } from '../../src/core/ledger-events.js';
import { ManualClock } from '../../src/ports/clock.js';
import { silentLogger } from '../../src/ports/logger.js';
import type { KeyValueStore } from '../../src/ports/store.js';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { botHarness } from '../unit/bot/bot-harness.js';
import { alert, fixedSnapshot, incidentEntry } from '../unit/recall/recall-fixtures.js';
import { until } from './helpers/chat-e2e.js';

const CHANNEL = 'C0INCIDENTS';
const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });
const firing = (n: number) =>
  alert({
    alertname: 'KubePodCrashLooping',
    fingerprint: `fp-${n}`,
    labels: { namespace: `team-${n}`, pod: `api-7d9f8c6b5-x2k4${'bcdfghjk'[n % 8]}` },
    annotations: { summary: 'crash looping' },
  });

let fake: SlackFake;
let slack: SlackTransport[];
let store: KeyValueStore;

async function harness(o: { mayDeliver?: () => boolean; clock?: ManualClock; requestTimeoutMs?: number } = {}) {
  const t = createSlackTransport({
    botToken: fake.botToken,
    signingSecret: fake.signingSecret,
    apiUrl: fake.apiUrl,
    defaultChannel: CHANNEL,
    logger: silentLogger,
    requestTimeoutMs: o.requestTimeoutMs ?? 10_000,
  }).transport;
  slack.push(t);
  await t.start(async () => undefined);
  const h = await botHarness({
    snapshot,
    store,
    chat: [{ transport: t, defaultChannel: CHANNEL }],
    ...(o.mayDeliver ? { mayDeliver: o.mayDeliver } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const deliver = async (): Promise<void> => {
    for (let i = 0; i < 30; i++) {
      await h.settle();
      if (h.outbox.status().pending === 0) return;
      h.clock.advance(65_000);
    }
    throw new Error(`still pending: ${JSON.stringify(h.outbox.status())}`);
  };
  /** Steps the clock a second at a time (the watch reads the ledger every second) until `done`. */
  const stepUntil = async (what: string, done: () => boolean): Promise<void> => {
    for (let i = 0; i < 200 && !done(); i++) {
      await h.clock.advanceAsync(1000);
      await h.outbox.settled();
      await new Promise((r) => setTimeout(r, 5));
    }
    if (!done()) throw new Error(`never: ${what}`);
  };
  return { ...h, transport: t, deliver, stepUntil };
}

const outboxIdOf = (m: PostedMessage): string | undefined => (m.metadata as { event_payload?: { outbox_id?: string } } | undefined)?.event_payload?.outbox_id;
const roots = (): PostedMessage[] => fake.messages.filter((m) => m.thread_ts === undefined);
const delivered = (events: LedgerEvent[]) => events.filter((e): e is Extract<LedgerEvent, { type: 'delivered' }> => e.type === 'delivered');
/** The warnings logged with `key` (the recording logger keeps the fields, not the message). */
const warned = (warnings: unknown[], key: 'why' | 'watchMs'): unknown[] => warnings.filter((w) => typeof w === 'object' && w !== null && key in w);

/** A gate a held request waits on. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

beforeEach(async () => {
  fake = await startSlackFake();
  slack = [];
  store = createStore('memory://', '');
});
afterEach(async () => {
  for (const t of slack) await t.close().catch(() => undefined);
  await fake.close();
});

describe('duplicates taken back (Slack has no conditional post)', () => {
  it('a post that left after the new leader posted: the old process deletes its own once the ledger records the other', { timeout: 60_000 }, async () => {
    let mayA = true;
    const a = await harness({ mayDeliver: () => mayA });
    const held = gate();
    fake.failNext({ method: 'chat.postMessage', hold: held.promise });
    await a.bot.handle(incidentIntents([firing(1)]));
    a.outbox.kick();
    await until('the old leader’s post is in flight', () => (fake.calls('chat.postMessage').length === 1 ? true : undefined), 10_000);
    mayA = false; // paused past its lease: another replica takes the lead

    const b = await harness({ clock: new ManualClock(a.clock.now().toISOString()) });
    await b.deliver();
    expect(roots()).toHaveLength(1); // the new leader looked up (nothing there yet) and posted
    const [recorded] = delivered(await b.events()).filter((d) => d.root);
    expect(recorded?.messageRef).toBe(roots()[0]!.ts);

    held.open(); // the old leader wakes: its post leaves the client and reaches Slack
    await until('the late post reached Slack', () => (roots().length === 2 ? true : undefined), 10_000);
    const late = roots().find((m) => m.ts !== recorded!.messageRef)!;
    expect(outboxIdOf(late)).toBe(recorded!.outboxId);
    await a.stepUntil('the old process deleted its duplicate', () => fake.deleted.length === 1);

    expect(fake.deleted.map((m) => m.ts)).toEqual([late.ts]);
    expect(roots().map((m) => m.ts)).toEqual([recorded!.messageRef]);
    expect(warned(a.warnings, 'why')).toEqual([expect.objectContaining({ outboxId: recorded!.outboxId, messageRef: late.ts })]);
    // Its send was never recorded by the old process: the ledger holds one delivery of the card.
    expect(delivered(await b.events()).filter((d) => d.outboxId === recorded!.outboxId)).toHaveLength(1);
  });

  it('a late post the new leader adopted stays: recorded as that very message, nothing is deleted', { timeout: 60_000 }, async () => {
    let mayA = true;
    const a = await harness({ mayDeliver: () => mayA });
    const held = gate();
    fake.failNext({ method: 'chat.postMessage', hold: held.promise });
    await a.bot.handle(incidentIntents([firing(1)]));
    a.outbox.kick();
    await until('the old leader’s post is in flight', () => (fake.calls('chat.postMessage').length === 1 ? true : undefined), 10_000);
    mayA = false;
    held.open();
    await until('the late post reached Slack', () => (roots().length === 1 ? true : undefined), 10_000);
    await until('the old process watches it', () => (warned(a.warnings, 'watchMs').length === 1 ? true : undefined), 10_000);

    const b = await harness({ clock: new ManualClock(a.clock.now().toISOString()) });
    await b.deliver();
    const [recorded] = delivered(await b.events()).filter((d) => d.root);
    expect(recorded?.messageRef).toBe(roots()[0]!.ts); // adopted, not posted again
    // Through the whole watch (outbox.duplicate_watch, 30 s), a second at a time.
    for (let i = 0; i < 35; i++) {
      await a.clock.advanceAsync(1000);
      await a.outbox.settled();
    }
    expect(fake.deleted).toEqual([]);
    expect(roots()).toHaveLength(1);
    expect(fake.calls('chat.postMessage').filter((c) => c.body['thread_ts'] === undefined)).toHaveLength(1);
  });

  it('a send whose answer never came after the lead was lost: found by its id once the leader records another, and deleted', { timeout: 60_000 }, async () => {
    let mayA = true;
    const a = await harness({ mayDeliver: () => mayA, requestTimeoutMs: 300 });
    const held = gate();
    fake.failNext({ method: 'chat.postMessage', hold: held.promise });
    await a.bot.handle(incidentIntents([firing(1)]));
    a.outbox.kick();
    await until('the old leader’s post is in flight', () => (fake.calls('chat.postMessage').length === 1 ? true : undefined), 10_000);
    mayA = false;
    await until('the old process watches its unanswered send', () => (warned(a.warnings, 'watchMs').length === 1 ? true : undefined), 10_000);

    const b = await harness({ clock: new ManualClock(a.clock.now().toISOString()) });
    await b.deliver();
    const [recorded] = delivered(await b.events()).filter((d) => d.root);
    held.open(); // Slack acts on the old request after all (its answer is lost)
    await until('the late post reached Slack', () => (roots().length === 2 ? true : undefined), 10_000);
    await a.stepUntil('the old process deleted its duplicate', () => fake.deleted.length === 1);
    expect(roots().map((m) => m.ts)).toEqual([recorded!.messageRef]);
    expect(fake.calls('conversations.history').length).toBeGreaterThanOrEqual(2); // the leader's lookup, and the old process's
  });

  it('a lookup that finds an item twice adopts the oldest and deletes the other', { timeout: 60_000 }, async () => {
    const first = await harness({ mayDeliver: () => false });
    await first.bot.handle(incidentIntents([firing(1)]));
    await first.settle();
    const [pending] = [...first.ledger.read.pendingOutbox()].filter((i) => i.op === 'post');
    const ev = await first.ledger.eventAt(pending!.seq!);
    if (ev?.type !== 'outbox' || ev.view.kind !== 'card') throw new Error('no card recorded');
    // Two processes sent it, neither recorded it.
    const older = await first.transport.post({ transport: 'slack', channel: CHANNEL }, ev.view, undefined, { idempotencyKey: pending!.id });
    const newer = await first.transport.post({ transport: 'slack', channel: CHANNEL }, ev.view, undefined, { idempotencyKey: pending!.id });

    const b = await harness({ clock: new ManualClock(first.clock.now().toISOString()) });
    await b.deliver();
    await until('the other one is deleted', () => (fake.deleted.length === 1 ? true : undefined), 10_000);
    expect(fake.deleted.map((m) => m.ts)).toEqual([newer.id]);
    expect(roots().map((m) => m.ts)).toEqual([older.id]);
    expect(delivered(await b.events()).find((d) => d.outboxId === pending!.id)?.messageRef).toBe(older.id);
    expect(fake.messages.filter((m) => m.thread_ts === older.id)).toHaveLength(1); // its analysis, in the kept thread
  });

  it(
    'the new leader sweeps later: a late card and a late reply from a process that died are deleted, the recorded ones kept',
    { timeout: 60_000 },
    async () => {
      const first = await harness({ mayDeliver: () => false });
      await first.bot.handle(incidentIntents([firing(1)]));
      await first.settle();
      const pendingItems = [...first.ledger.read.pendingOutbox()];
      const post = pendingItems.find((i) => i.op === 'post')!;
      const reply = pendingItems.find((i) => i.op === 'reply')!;
      await first.outbox.dispose(); // it died: no watch of its own

      const b = await harness({ clock: new ManualClock(first.clock.now().toISOString()) });
      await b.deliver();
      const recordedRoot = delivered(await b.events()).find((d) => d.outboxId === post.id)!;
      const recordedReply = delivered(await b.events()).find((d) => d.outboxId === reply.id)!;
      // The dead process's requests reach Slack now, after the new leader's lookups and posts.
      const postEv = await b.ledger.eventAt(post.seq!);
      const replyEv = await b.ledger.eventAt(reply.seq!);
      if (postEv?.type !== 'outbox' || postEv.view.kind !== 'card' || replyEv?.type !== 'outbox' || replyEv.view.kind !== 'detail') throw new Error('views');
      const lateCard = await first.transport.post({ transport: 'slack', channel: CHANNEL }, postEv.view, undefined, { idempotencyKey: post.id });
      const lateReply = await first.transport.reply({ transport: 'slack', channel: CHANNEL, id: recordedRoot.messageRef }, replyEv.view, {
        idempotencyKey: reply.id,
      });
      expect(fake.messages).toHaveLength(4);

      await b.clock.advanceAsync(20_000); // outbox.duplicate_sweep
      await until('both duplicates deleted', () => (fake.deleted.length === 2 ? true : undefined), 10_000);
      expect(fake.deleted.map((m) => m.ts).sort()).toEqual([lateCard.id, lateReply.id].sort());
      expect(fake.messages.map((m) => m.ts).sort()).toEqual([recordedRoot.messageRef, recordedReply.messageRef].sort());
      expect(fake.calls('conversations.replies').length).toBeGreaterThanOrEqual(1);
      // The second sweep reads again and finds nothing more to delete.
      const reads = fake.calls('conversations.history').length;
      await b.clock.advanceAsync(120_000);
      await until('the second sweep read the channel', () => (fake.calls('conversations.history').length > reads ? true : undefined), 10_000);
      await b.outbox.settled();
      expect(fake.deleted).toHaveLength(2);
    },
  );

  it('the stand-in deletes only the bot’s own messages, answers message_not_found for one already gone, and drops it from history', async () => {
    const t = createSlackTransport({
      botToken: fake.botToken,
      signingSecret: fake.signingSecret,
      apiUrl: fake.apiUrl,
      defaultChannel: CHANNEL,
      logger: silentLogger,
    }).transport;
    slack.push(t);
    await t.start(async () => undefined);
    const ts = (
      await raw('chat.postMessage', { channel: CHANNEL, text: 'hi', metadata: { event_type: 'reprise_delivery', event_payload: { outbox_id: 'ob-1' } } })
    )['ts'];
    expect((await t.find({ channel: CHANNEL }, new Date(0))).get('ob-1')).toHaveLength(1);
    await t.remove({ transport: 'slack', channel: CHANNEL, id: String(ts) });
    expect((await t.find({ channel: CHANNEL }, new Date(0))).get('ob-1')).toBeUndefined();
    await expect(t.remove({ transport: 'slack', channel: CHANNEL, id: String(ts) })).resolves.toBeUndefined(); // already gone
    expect(await raw('chat.delete', { channel: CHANNEL, ts: String(ts) })).toEqual({ ok: false, error: 'message_not_found' });
    fake.messages.push({ channel: CHANNEL, ts: '1700000000.000001', text: 'a person', blocks: undefined, updates: [], foreign: true });
    expect(await raw('chat.delete', { channel: CHANNEL, ts: '1700000000.000001' })).toEqual({ ok: false, error: 'cant_delete_message' });
    await expect(t.remove({ transport: 'slack', channel: CHANNEL, id: '1700000000.000001' })).rejects.toThrow('cant_delete_message');
  });
});

async function raw(method: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(`${fake.apiUrl}${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fake.botToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Record<string, unknown>;
}
