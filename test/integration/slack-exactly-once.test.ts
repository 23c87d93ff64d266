/**
 * Exactly once on Slack (issue 20 items 1–2): a post is not idempotent, so every send carries
 * its outbox id in the message metadata, and a send whose outcome is unknown — Slack answering
 * after the client gave up, a connection reset after Slack acted, a process that died between the
 * send and its record — is looked up (conversations.history / replies) before it is sent again,
 * and the message found is adopted. Sends go only while the guard (a replica's lease) allows.
 * Real SlackTransport, real outbox, the Slack stand-in speaking the Web API on 127.0.0.1.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import { createSlackTransport, type SlackTransport } from '../../src/adapters/slack/slack-transport.js';
import { incidentIntents } from '../../src/core/bot/intent.js';
import type { LedgerEvent } from '../../src/core/ledger-events.js';
import type { KeyValueStore } from '../../src/ports/store.js';
import { ManualClock } from '../../src/ports/clock.js';
import { silentLogger } from '../../src/ports/logger.js';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { botHarness } from '../unit/bot/bot-harness.js';
import { alert, fixedSnapshot, incidentEntry } from '../unit/recall/recall-fixtures.js';

const CHANNEL = 'C0INCIDENTS';
const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });
const firing = (n: number, status: 'firing' | 'resolved' = 'firing') =>
  alert({
    alertname: 'KubePodCrashLooping',
    fingerprint: `fp-${n}`,
    status,
    labels: { namespace: `team-${n}`, pod: `api-7d9f8c6b5-x2k4${'bcdfghjk'[n % 8]}` },
    annotations: { summary: 'crash looping' },
  });

let fake: SlackFake;
let slack: SlackTransport[];
let store: KeyValueStore;

function transport(over: { requestTimeoutMs?: number; defaultChannel?: string } = {}): SlackTransport {
  const t = createSlackTransport({
    botToken: fake.botToken,
    signingSecret: fake.signingSecret,
    apiUrl: fake.apiUrl,
    defaultChannel: over.defaultChannel ?? CHANNEL,
    logger: silentLogger,
    requestTimeoutMs: over.requestTimeoutMs ?? 300,
  }).transport;
  slack.push(t);
  return t;
}

async function harness(o: { t?: SlackTransport; mayDeliver?: () => boolean; clock?: ManualClock; defaultChannel?: string } = {}) {
  const t = o.t ?? transport(o.defaultChannel ? { defaultChannel: o.defaultChannel } : {});
  await t.start(async () => undefined);
  const h = await botHarness({
    snapshot,
    store,
    chat: [{ transport: t, defaultChannel: o.defaultChannel ?? CHANNEL }],
    ...(o.mayDeliver ? { mayDeliver: o.mayDeliver } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  /** Delivers until nothing is pending, stepping the clock past each retry's backoff. */
  const deliver = async (): Promise<void> => {
    for (let i = 0; i < 30; i++) {
      await h.settle();
      if (h.outbox.status().pending === 0) return;
      h.clock.advance(65_000);
    }
    throw new Error(`still pending: ${JSON.stringify(h.outbox.status())}`);
  };
  return { ...h, deliver };
}

const roots = (): PostedMessage[] => fake.messages.filter((m) => m.thread_ts === undefined);
const repliesTo = (ts: string): PostedMessage[] => fake.messages.filter((m) => m.thread_ts === ts);
const delivered = (events: LedgerEvent[]) => events.filter((e): e is Extract<LedgerEvent, { type: 'delivered' }> => e.type === 'delivered');

beforeEach(async () => {
  fake = await startSlackFake();
  slack = [];
  store = createStore('memory://', '');
});
afterEach(async () => {
  for (const t of slack) await t.close().catch(() => undefined);
  await fake.close();
});

describe('exactly once on Slack', () => {
  it(
    'Slack posts but answers after the client gave up: the retry finds each card and adopts it — three alerts, three threads',
    { timeout: 60_000 },
    async () => {
      const h = await harness();
      fake.failNext({ method: 'chat.postMessage', lateMs: 1500, times: 3 });
      await h.bot.handle(incidentIntents([firing(1), firing(2), firing(3)]));
      await h.deliver();
      expect(roots()).toHaveLength(3);
      // Each card once, each carrying its own outbox id; the ledger points at the very messages.
      const ids = roots().map((m) => (m.metadata as { event_payload: { outbox_id: string } }).event_payload.outbox_id);
      expect(new Set(ids).size).toBe(3);
      const rootsDelivered = delivered(await h.events()).filter((d) => d.root);
      expect(rootsDelivered.map((d) => d.messageRef).sort()).toEqual(
        roots()
          .map((m) => m.ts)
          .sort(),
      );
      expect(fake.calls('conversations.history').length).toBeGreaterThanOrEqual(1);
      // Each thread's analysis is in its own thread, once.
      for (const r of roots()) expect(repliesTo(r.ts)).toHaveLength(1);
    },
  );

  it('a reply whose connection is cut after Slack posted it is found in the thread, not posted again', { timeout: 60_000 }, async () => {
    const h = await harness();
    await h.bot.handle(incidentIntents([firing(1)]));
    await h.deliver();
    const [root] = roots();
    expect(repliesTo(root!.ts)).toHaveLength(1);
    fake.failNext({ method: 'chat.postMessage', resetAfter: true });
    await h.bot.handle(incidentIntents([firing(1, 'resolved')]));
    await h.deliver();
    // Every reply the thread got once: as many as were delivered, no outbox item shown twice.
    const replies = repliesTo(root!.ts);
    const ids = replies.map((m) => (m.metadata as { event_payload: { outbox_id: string } }).event_payload.outbox_id);
    expect(new Set(ids).size).toBe(ids.length);
    const recorded = new Set(delivered(await h.events()).map((d) => d.messageRef));
    for (const r of replies) expect(recorded.has(r.ts), `reply ${r.ts} is the one the ledger recorded`).toBe(true);
    expect(replies.length).toBeGreaterThanOrEqual(2); // the analysis and the resolve notice at least
    expect(fake.calls('conversations.replies').length).toBeGreaterThanOrEqual(1);
    expect(roots()).toHaveLength(1);
  });

  it('a new process adopts what the dead one posted but never recorded, and sends what it never sent', { timeout: 60_000 }, async () => {
    // The first process records two threads, posts one card (as a crash right after the send would leave it) and dies.
    const first = await harness({ mayDeliver: () => false });
    await first.bot.handle(incidentIntents([firing(1), firing(2)]));
    await first.settle();
    expect(fake.calls('chat.postMessage')).toHaveLength(0);
    const [pending] = [...first.ledger.read.pendingOutbox()].filter((i) => i.op === 'post');
    const ev = await first.ledger.eventAt(pending!.seq!);
    if (ev?.type !== 'outbox' || ev.view.kind !== 'card') throw new Error('no card recorded');
    const sent = await slack[0]!.post({ transport: 'slack', channel: CHANNEL }, ev.view, undefined, { idempotencyKey: pending!.id });
    await first.outbox.stop();

    const second = await harness({ clock: new ManualClock(first.clock.now().toISOString()) });
    await second.deliver();
    expect(roots()).toHaveLength(2);
    const adopted = delivered(await second.events()).find((d) => d.outboxId === pending!.id);
    expect(adopted?.messageRef).toBe(sent.id);
    // The adopted card's thread got its analysis, in that thread.
    expect(repliesTo(sent.id)).toHaveLength(1);
  });

  it('sends nothing while the guard says no (a lease late or lost), and everything once it says yes', { timeout: 60_000 }, async () => {
    let may = false;
    const h = await harness({ mayDeliver: () => may });
    await h.bot.handle(incidentIntents([firing(1)]));
    await h.settle();
    h.clock.advance(10_000);
    await h.settle();
    expect(fake.calls('chat.postMessage')).toHaveLength(0);
    expect(h.outbox.status().pending).toBe(2);
    may = true;
    await h.deliver();
    expect(roots()).toHaveLength(1);
    expect(fake.calls('chat.postMessage')).toHaveLength(2);
  });

  it('when the lookup itself is refused (a channel named, not by id), it sends again and says so — never gives the card up', { timeout: 60_000 }, async () => {
    const h = await harness({ defaultChannel: '#incidents' });
    fake.failNext({ method: 'chat.postMessage', status: 503 });
    await h.bot.handle(incidentIntents([firing(1)]));
    await h.deliver();
    expect(roots()).toHaveLength(1);
    expect(fake.calls('conversations.history').length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(h.warnings)).toContain('conversations.history: channel_not_found');
    expect((await h.events()).filter((e) => e.type === 'outbox_failed')).toEqual([]);
  });
});
