/**
 * PagerDuty both ways (issue 21 item 2), against the PagerDuty REST stand-in on loopback: a chat
 * ack of a PagerDuty incident is one acknowledge call, made after the ack is durable, each
 * attempt recorded, retried with backoff when it can help, given up (and said) when it cannot;
 * PagerDuty's webhooks are an ack, a note, a reopen, and a resolve that pairs by incident id.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { pagerDutyRest } from '../../../src/adapters/pagerduty/pagerduty-rest.js';
import { ackIntent, incidentIntents } from '../../../src/core/bot/intent.js';
import type { CardView, NoticeView } from '../../../src/core/chat/thread-view.js';
import { asRichText, richText } from '../../../src/core/chat/thread-view.js';
import { parsePagerDutyPayload } from '../../../src/core/pagerduty.js';
import type { Incident } from '../../../src/core/types.js';
import { pagerDutyIntent } from '../../../src/http/webhooks/pagerduty-webhook.js';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { startPagerDutyFake, type PagerDutyFake } from '../../fakes/pagerduty-fake.js';
import { fixedSnapshot } from '../recall/recall-fixtures.js';
import { botHarness } from './bot-harness.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { stateDigest } from '../../../src/core/ledger/ledger-export-format.js';
import type { RepriseBotDeps } from '../../../src/core/bot/bot-context.js';

const fixture = (name: string): { event: Record<string, unknown> & { data: Record<string, unknown> } } =>
  JSON.parse(readFileSync(new URL(`../../fixtures/sources/${name}`, import.meta.url), 'utf8'));
const snapshot = fixedSnapshot([], {});
const TOKEN = 'pd-token-123';

function pdIncident(status: 'triggered' | 'resolved' | 'reopened' = 'triggered', title?: string, at?: string): Incident {
  const body = fixture(status === 'resolved' ? 'pagerduty-incident-resolved.json' : 'pagerduty-incident-triggered.json');
  if (status === 'reopened') body.event['event_type'] = 'incident.reopened';
  if (title) body.event.data['title'] = title;
  if (at) body.event['occurred_at'] = at;
  const p = parsePagerDutyPayload(body);
  if (p.kind !== 'incident') throw new Error('fixture is not an incident');
  return p.incident;
}
const webhook = (name: string, eventId: string, edit?: (b: ReturnType<typeof fixture>) => void) => {
  const body = fixture(name);
  body.event['id'] = eventId;
  edit?.(body);
  const p = parsePagerDutyPayload(body);
  if (p.kind !== 'ack' && p.kind !== 'note') throw new Error(`not an ack or a note: ${p.kind}`);
  return pagerDutyIntent(p, eventId);
};

let fake: PagerDutyFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function withPdThread(opts: { maxAttempts?: number; store?: ReturnType<typeof createStore>; port?: 'rest' | 'none' | 'hang' } = {}) {
  fake = await startPagerDutyFake({ token: TOKEN });
  const waits: number[] = [];
  const port =
    opts.port === 'none'
      ? undefined
      : opts.port === 'hang'
        ? { acknowledge: () => new Promise<void>(() => undefined) }
        : pagerDutyRest({ apiUrl: fake.apiUrl, token: TOKEN, from: 'bot@example.com', timeoutMs: 5000 });
  const pagerDuty: RepriseBotDeps['pagerDuty'] = {
    ...(port ? { port } : {}),
    maxAttempts: opts.maxAttempts ?? 4,
    backoff: { baseMs: 1000, maxMs: 60_000 },
    sleep: async (ms) => void waits.push(ms),
  };
  const h = await botHarness({ snapshot, pagerDuty, ...(opts.store ? { store: opts.store } : {}) });
  await h.bot.handle(incidentIntents([pdIncident()]));
  await h.settle();
  const root = h.transport.posts[0]!.ref!;
  return { ...h, root, fake, waits, tk: pdIncident().triggerKey };
}
const notices = (h: { transport: { replies: Array<{ view: unknown }> } }) =>
  h.transport.replies
    .map((r) => r.view as NoticeView)
    .filter((v) => v.kind === 'notice')
    .map((n) => `${n.icon} ${richText(n.text)}`);
const chatAck = (root: { transport: string; channel: string; id: string }, eventId: string) => ({
  type: 'ack' as const,
  eventId,
  actor: { id: 'U1', name: 'alice', via: 'rec' },
  target: { message: root },
});

describe('a chat ack acknowledges the PagerDuty incident', () => {
  it('one PUT /incidents/{id} with the token, From and v2 Accept; the outcome is recorded and said in the thread', async () => {
    const h = await withPdThread();
    await h.bot.handle(chatAck(h.root, 'ev-1'));
    await h.bot.idle();
    await h.settle();
    expect(h.fake.acknowledged).toEqual(['PGR0VU2']);
    const req = h.fake.requests[0]!;
    expect(req).toMatchObject({ method: 'PUT', path: '/incidents/PGR0VU2', status: 200 });
    expect(req.headers['from']).toBe('bot@example.com');
    expect(req.headers['authorization']).toBe(`Token token=${TOKEN}`);
    expect(req.body).toEqual({ incident: { type: 'incident_reference', status: 'acknowledged' } });
    const calls = (await h.events()).filter((e) => e.type === 'pagerduty_call');
    expect(calls).toMatchObject([{ outcome: 'done', attempt: 1, incidentId: 'PGR0VU2' }]);
    expect(h.ledger.read.pendingPagerDutyCalls()).toEqual([]);
    expect(notices(h)).toEqual(['👀 alice is on it', '👀 also acknowledged in PagerDuty']);
    // A second person in chat does not ask PagerDuty again.
    await h.bot.handle({ ...chatAck(h.root, 'ev-2'), actor: { id: 'U2', name: 'bob', via: 'rec' } });
    await h.bot.idle();
    expect(h.fake.requests).toHaveLength(1);
  });

  it('never blocks chat: the ack and the card are recorded while PagerDuty has not answered', async () => {
    const h = await withPdThread({ port: 'hang' });
    const [o] = await h.bot.handle(chatAck(h.root, 'ev-1'));
    expect(o).toMatchObject({ status: 'recorded', kind: 'ack' });
    await h.settle();
    expect(richText(asRichText((h.transport.updates.at(-1)!.view as CardView).ack))).toMatch(/^👀 alice is on it/);
    expect(h.ledger.read.pendingPagerDutyCalls()).toHaveLength(1);
  });

  it('a 5xx is retried with backoff, a 429 waits what Retry-After says; every attempt is recorded', async () => {
    const h = await withPdThread();
    h.fake.script((n) => (n === 0 ? { status: 503 } : n === 1 ? { status: 429, retryAfter: '7' } : undefined));
    await h.bot.handle(chatAck(h.root, 'ev-1'));
    await h.bot.idle();
    expect(h.fake.requests.map((r) => r.status)).toEqual([503, 429, 200]);
    expect(h.waits).toEqual([1000, 7000]);
    const calls = (await h.events()).filter((e) => e.type === 'pagerduty_call');
    expect(calls.map((c) => (c as { outcome: string }).outcome)).toEqual(['retry', 'retry', 'done']);
    expect(h.fake.acknowledged).toEqual(['PGR0VU2']);
  });

  it('a refused call (401) is not retried; it is recorded and said in the thread', async () => {
    const h = await withPdThread();
    h.fake.script(() => ({ status: 401, message: 'Unauthorized' }));
    await h.bot.handle(chatAck(h.root, 'ev-1'));
    await h.bot.idle();
    await h.settle();
    expect(h.fake.requests).toHaveLength(1);
    expect((await h.events()).filter((e) => e.type === 'pagerduty_call')).toMatchObject([{ outcome: 'failed', attempt: 1 }]);
    expect(notices(h).at(-1)).toBe('⚠️ not acknowledged in PagerDuty: PagerDuty answered 401 (Unauthorized)');
    expect(h.ledger.read.pendingPagerDutyCalls()).toEqual([]);
  });

  it('gives up after max_attempts, and says so', async () => {
    const h = await withPdThread({ maxAttempts: 3 });
    h.fake.script(() => ({ status: 500 }));
    await h.bot.handle(chatAck(h.root, 'ev-1'));
    await h.bot.idle();
    await h.settle();
    expect(h.fake.requests).toHaveLength(3);
    expect(notices(h).at(-1)).toMatch(/^⚠️ not acknowledged in PagerDuty: PagerDuty answered 500 .*\(gave up after 3 attempts\)$/);
  });

  it('an ack recorded with no PagerDuty client (the offline CLI) is made by the serving bot when it resumes', async () => {
    const store = createStore('memory://', '');
    const offline = await withPdThread({ port: 'none', store });
    await offline.bot.handle(ackIntent({ triggerKey: offline.tk, user: 'carol' }));
    await offline.bot.idle();
    expect(offline.fake.requests).toHaveLength(0);
    expect(offline.ledger.read.pendingPagerDutyCalls()).toHaveLength(1);
    await offline.fake.close();
    fake = await startPagerDutyFake({ token: TOKEN });
    const { botHarness: again } = await import('./bot-harness.js');
    const served = await again({
      snapshot,
      store,
      pagerDuty: {
        port: pagerDutyRest({ apiUrl: fake.apiUrl, token: TOKEN, from: 'bot@example.com', timeoutMs: 5000 }),
        maxAttempts: 3,
        backoff: { baseMs: 1, maxMs: 1 },
      },
    });
    await served.bot.handle({ type: 'resume' });
    await served.bot.idle();
    expect(fake.acknowledged).toEqual(['PGR0VU2']);
    expect(served.ledger.read.pendingPagerDutyCalls()).toEqual([]);
  });
});

describe("PagerDuty's webhooks", () => {
  it('incident.acknowledged: the card names the PagerDuty user; a re-delivery counts once; PagerDuty is not called back', async () => {
    const h = await withPdThread();
    h.clock.advance(3 * 60_000);
    const intent = webhook('pagerduty-incident-acknowledged.json', '01AAAAAAAAAAAAAAAAAAAAAAAA');
    expect((await h.bot.handle(intent))[0]).toMatchObject({ status: 'recorded', kind: 'ack' });
    expect((await h.bot.handle(intent))[0]).toMatchObject({ status: 'duplicate' });
    await h.bot.idle();
    await h.settle();
    expect(richText(asRichText((h.transport.updates.at(-1)!.view as CardView).ack))).toMatch(/^👀 Tenex Engineer is on it · \d+ min after it fired$/);
    expect(h.fake.requests).toHaveLength(0);
  });

  it("incident.acknowledged after a chat ack is PagerDuty's echo, not a second person", async () => {
    const h = await withPdThread();
    await h.bot.handle(chatAck(h.root, 'ev-1'));
    await h.bot.idle();
    const [o] = await h.bot.handle(webhook('pagerduty-incident-acknowledged.json', '01BBBBBBBBBBBBBBBBBBBBBBBB'));
    expect(o).toMatchObject({ status: 'ignored', reason: expect.stringMatching(/echo/) });
    expect(h.ledger.read.newestThread(h.tk)?.acks?.map((a) => a.name)).toEqual(['alice']);
  });

  it('incident.annotated: an operator note on the thread, its text kept as text', async () => {
    const h = await withPdThread();
    const intent = webhook('pagerduty-incident-annotated.json', '01CCCCCCCCCCCCCCCCCCCCCCCC', (b) => {
      b.event.data['content'] = 'rolled back <!channel> @room <b>x</b>';
    });
    expect((await h.bot.handle(intent))[0]).toMatchObject({ status: 'recorded', kind: 'note' });
    const note = (await h.events()).find((e) => e.type === 'note');
    expect(note).toMatchObject({ text: 'rolled back <!channel> @room <b>x</b>', via: 'pagerduty', user: 'pagerduty:PTUXL6G' });
    // An annotation on an incident the bot never posted is nothing.
    const other = webhook('pagerduty-incident-annotated.json', '01DDDDDDDDDDDDDDDDDDDDDDDD', (b) => {
      (b.event.data['incident'] as Record<string, unknown>)['id'] = 'PNOTOURS';
    });
    expect((await h.bot.handle(other))[0]).toMatchObject({ status: 'ignored' });
  });

  it('a resolve pairs by incident id even when the title changed', async () => {
    const h = await withPdThread();
    const [resolved] = await h.bot.handle(incidentIntents([pdIncident('resolved', 'checkout-api renamed while it burned')]));
    expect(resolved).toMatchObject({ status: 'resolved', paired: true, triggerKey: h.tk });
    expect(h.ledger.read.newestThread(h.tk)?.state).toBe('resolved');
  });
});

describe('incident.reopened reopens the thread (a new episode of the same trigger in it)', () => {
  const REOPENED_AT = '2026-11-30T20:05:00.000Z';
  /** Fired, acked in chat (one PagerDuty call), resolved in PagerDuty: the thread the reopen finds. */
  async function resolvedPdThread() {
    const h = await withPdThread();
    await h.bot.handle(chatAck(h.root, 'ev-1'));
    await h.bot.idle();
    await h.bot.handle(incidentIntents([pdIncident('resolved')]));
    await h.settle();
    return h;
  }

  it('edits the card back to firing with a reply, posts no new card; acks are the new episode’s; its resolve resolves the thread', async () => {
    const h = await resolvedPdThread();
    const thread = h.ledger.read.newestThread(h.tk)!;
    const updatesBefore = h.transport.updates.length;
    const repliesBefore = h.transport.replies.length;
    // Reopened under another title: still the thread's trigger.
    const [o] = await h.bot.handle(incidentIntents([pdIncident('reopened', 'checkout-api is back', REOPENED_AT)]));
    expect(o).toMatchObject({ status: 'reopened', triggerKey: h.tk, threadOf: thread.openId });
    await h.settle();
    expect(h.transport.posts).toHaveLength(1);
    const edits = h.transport.updates.slice(updatesBefore);
    expect(edits).toHaveLength(1);
    const card = edits[0]!.view as CardView;
    expect(edits[0]!.ref?.id).toBe(h.root.id);
    expect(card.state).toBe('firing');
    expect(card.stateNote).toMatch(/^🔁 reopened in PagerDuty · 2026-11-30 20:05 UTC$/);
    expect(card.ack).toBeUndefined();
    const said = h.transport.replies.slice(repliesBefore).map((r) => r.view as NoticeView);
    expect(said.map((n) => `${n.icon} ${richText(n.text)}`)).toEqual([
      '🔁 reopened in PagerDuty · 2026-11-30 20:05 UTC — a new episode of this incident; what is said here from now on is its own',
    ]);
    expect(said[0]!.kind).toBe('notice');
    // One thread, a second episode of the same trigger, firing again.
    const now = h.ledger.read.newestThread(h.tk)!;
    expect(now.openId).toBe(thread.openId);
    expect(now.state).toBe('firing');
    expect(now.acks ?? []).toEqual([]);
    expect(h.ledger.read.occurrences(h.tk).count).toBe(2);
    const opens = (await h.events()).filter((e) => e.type === 'open');
    expect(opens).toHaveLength(2);
    expect(opens[1]).toMatchObject({ triggerKey: h.tk, reopens: thread.openId, startsAt: REOPENED_AT, fingerprint: 'pagerduty:PGR0VU2' });
    // PagerDuty's ack webhook and a chat ack find the thread; a chat ack asks PagerDuty again (the new episode is not acknowledged there).
    expect(h.ledger.read.threadOfFingerprint('pagerduty:PGR0VU2')?.openId).toBe(thread.openId);
    await h.bot.handle({ ...chatAck(h.root, 'ev-2'), actor: { id: 'U2', name: 'bob', via: 'rec' } });
    await h.bot.idle();
    await h.settle();
    expect(h.fake.acknowledged).toEqual(['PGR0VU2', 'PGR0VU2']);
    expect(h.ledger.read.newestThread(h.tk)?.acks?.map((a) => a.name)).toEqual(['bob']);
    expect(richText(asRichText((h.transport.updates.at(-1)!.view as CardView).ack))).toMatch(/^👀 bob is on it/);
    // Its resolve (paired by the incident id) resolves the same thread again.
    const repliesBeforeResolve = h.transport.replies.length;
    const [r] = await h.bot.handle(incidentIntents([pdIncident('resolved')]));
    expect(r).toMatchObject({ status: 'resolved', paired: true, triggerKey: h.tk });
    await h.settle();
    expect(h.transport.posts).toHaveLength(1);
    expect(h.ledger.read.newestThread(h.tk)?.state).toBe('resolved');
    expect((h.transport.updates.at(-1)!.view as CardView).state).toBe('resolved');
    expect(h.transport.replies.slice(repliesBeforeResolve).some((x) => x.view.kind === 'notice' && (x.view as NoticeView).topic === 'resolved')).toBe(true);
    expect(h.ledger.read.openEpisodes('pagerduty:PGR0VU2')).toEqual([]);
    const episodes = h.ledger.read.recentEpisodes(h.tk);
    expect(episodes.map((e) => e.openId)).toEqual([opens[1]!['id'], thread.openId]);
    // The timeline is the whole story, its durations the newest episode's.
    const kinds = (h.ledger.read.newestThread(h.tk)?.timeline ?? []).map((i) => i.kind);
    expect(kinds.filter((k) => k === 'reopened' || k === 'resolved' || k === 'ack')).toEqual(['ack', 'resolved', 'reopened', 'ack', 'resolved']);
  });

  it('a replayed reopen does nothing: once applied (by its moment), and while the thread fires again', async () => {
    const h = await resolvedPdThread();
    await h.bot.handle(incidentIntents([pdIncident('reopened', undefined, REOPENED_AT)]));
    await h.settle();
    const sent = h.transport.sent.length;
    const [again] = await h.bot.handle(incidentIntents([pdIncident('reopened', undefined, REOPENED_AT)]));
    expect(again).toMatchObject({ status: 'dropped', reason: expect.stringMatching(/still fires/) });
    await h.bot.handle(incidentIntents([pdIncident('resolved')]));
    await h.settle();
    const afterResolve = h.transport.sent.length;
    expect(afterResolve).toBeGreaterThan(sent);
    // The same reopen replayed after the episode it opened resolved (past the edge's memory).
    const [late] = await h.bot.handle(incidentIntents([pdIncident('reopened', undefined, REOPENED_AT)]));
    expect(late).toMatchObject({ status: 'dropped', reason: expect.stringMatching(/already applied/) });
    await h.settle();
    expect(h.transport.sent.length).toBe(afterResolve);
    expect(h.ledger.read.newestThread(h.tk)?.state).toBe('resolved');
    expect(h.ledger.read.occurrences(h.tk).count).toBe(2);
    // A genuine second reopen (a later moment) is a third episode in the same thread.
    const [third] = await h.bot.handle(incidentIntents([pdIncident('reopened', undefined, '2026-11-30T21:00:00.000Z')]));
    expect(third).toMatchObject({ status: 'reopened' });
    await h.settle();
    expect(h.transport.posts).toHaveLength(1);
  });

  it('replays to the same read model, and a reopen of an incident the bot never posted is an ordinary firing', async () => {
    const h = await resolvedPdThread();
    await h.bot.handle(incidentIntents([pdIncident('reopened', undefined, REOPENED_AT)]));
    await h.bot.handle(incidentIntents([pdIncident('resolved')]));
    await h.settle();
    expect(stateDigest(await Ledger.replayAll(h.store))).toBe(h.ledger.read.digest());
    const fresh = await botHarness({ snapshot });
    const [o] = await fresh.bot.handle(incidentIntents([pdIncident('reopened', undefined, REOPENED_AT)]));
    expect(o).toMatchObject({ status: 'posted' });
    await fresh.settle();
    expect(fresh.transport.posts).toHaveLength(1);
  });
});
