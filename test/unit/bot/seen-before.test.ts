/**
 * "Seen before" on every card (issue 31 item 1), through the bot's one entrance: a trigger (or the
 * same alert on a sibling workload or host) that fired before gets its history on the new card at
 * once — when, how long, who acked, what fixed it in the person's words, whether it held — bounded
 * to 3 lines and "N more"; never for an unrelated alert, never changing what the gates decided, and
 * inert on every surface whatever the fix says.
 */
import { describe, expect, it } from 'vitest';
import { incidentIntents } from '../../../src/core/bot/intent.js';
import type { MessageRef } from '../../../src/core/chat/chat-types.js';
import { asRichText, richText, type CardView, type SeenBeforeView } from '../../../src/core/chat/thread-view.js';
import { nameFamily, siblingFamilyKey } from '../../../src/core/chat/seen-before.js';
import type { Incident } from '../../../src/core/types.js';
import { renderCard } from '../../../src/adapters/slack/render-slack-card.js';
import { renderCard as renderCardMatrix } from '../../../src/adapters/matrix/render-matrix.js';
import { renderConsoleCard } from '../../../src/adapters/console/render-console.js';
import { alert, fixedSnapshot, incidentEntry } from '../recall/recall-fixtures.js';
import { botHarness } from './bot-harness.js';

const other = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([other], { [other.id]: 30 });

const pod = (name: string, fp: string, startsAt: string): Incident =>
  alert({ alertname: 'KubePodCrashLooping', fingerprint: fp, labels: { namespace: 'shop', pod: name, severity: 'warning' }, startsAt });
const host = (instance: string, fp: string, startsAt: string, alertname = 'NodeFilesystemSpaceFillingUp'): Incident =>
  alert({ alertname, fingerprint: fp, labels: { instance, job: 'node', severity: 'warning' }, startsAt });

type H = Awaited<ReturnType<typeof botHarness>>;
const cards = (h: H): CardView[] => h.transport.posts.map((p) => p.view as CardView).filter((v) => v.kind === 'card');
const lastCard = (h: H): CardView => cards(h).at(-1)!;

/** One episode: fire, optionally ack and say the fix, resolve `minutes` after it started. */
async function episode(h: H, i: Incident, minutes: number, o: { ack?: string; fix?: string } = {}): Promise<CardView> {
  h.clock.set(new Date(Date.parse(i.startsAt) + 60_000));
  await h.bot.handle(incidentIntents([i]));
  await h.settle();
  const card = lastCard(h);
  const root = h.transport.posts.at(-1)!.ref! as MessageRef;
  if (o.ack)
    await h.bot.handle({
      type: 'ack',
      eventId: `ack-${i.fingerprint}-${i.startsAt}`,
      actor: { id: o.ack, name: o.ack, via: 'rec' },
      target: { message: root },
    });
  const endsAt = new Date(Date.parse(i.startsAt) + minutes * 60_000).toISOString();
  h.clock.set(new Date(endsAt));
  await h.bot.handle(incidentIntents([{ ...i, status: 'resolved', endsAt }]));
  if (o.fix)
    await h.bot.handle({
      type: 'fixed',
      eventId: `fix-${i.fingerprint}-${i.startsAt}`,
      actor: { id: o.ack ?? 'ann', name: o.ack ?? 'ann', via: 'rec' },
      text: o.fix,
      target: { message: root },
    });
  await h.settle();
  return card;
}

/** The lines as text (people by name, else id). */
function lineText(v: SeenBeforeView | undefined): string[] {
  return (v?.lines ?? []).map((l) => richText(asRichText(l)));
}

async function fire(h: H, i: Incident): Promise<CardView> {
  h.clock.set(new Date(Date.parse(i.startsAt) + 60_000));
  await h.bot.handle(incidentIntents([i]));
  await h.settle();
  return lastCard(h);
}

describe('seen before', () => {
  it('the second occurrence (another pod) shows the first one: when, how long, who acked, the fix in their words, that it came back', async () => {
    const h = await botHarness({ snapshot });
    const first = await episode(h, pod('cart-7d9f8c6b5-aaaa1', 'fp-1', '2026-01-01T03:00:00Z'), 21, {
      ack: 'alice',
      fix: 'rolled back cart to v41 (`kubectl rollout undo deploy/cart`)',
    });
    expect(first.seenBefore).toBeUndefined();
    const second = await fire(h, pod('cart-7d9f8c6b5-bbbb2', 'fp-2', '2026-01-01T05:00:00Z'));
    expect(lineText(second.seenBefore)).toEqual([
      '2026-01-01 03:00 UTC · lasted 21 min · acked by alice · fixed by alice: “rolled back cart to v41 (`kubectl rollout undo deploy/cart`)” · came back 1 h 39 min later',
    ]);
    // People are person runs, each surface naming them its way (a Slack mention, a Matrix pill), never a bare id.
    expect(second.seenBefore!.lines[0]).toContainEqual({ person: { via: 'rec', id: 'alice' } });
    expect(second.seenBefore?.more).toBeUndefined();
    // History only: the gates decided exactly what they decide without it.
    expect(second.headline).toEqual(first.headline);
    expect(second.verdict).toBe(first.verdict);
    expect(h.errors).toEqual([]);
  });

  it('a fix that held a day says so; the last 3 episodes only, newest first, and "N more" pointing into /ui', async () => {
    const h = await botHarness({ snapshot });
    const days = ['2026-01-01', '2026-01-03', '2026-01-05', '2026-01-07', '2026-01-09'];
    for (const [n, d] of days.entries()) await episode(h, pod(`cart-7d9f8c6b5-x${n}x${n}x`, `fp-${n}`, `${d}T03:00:00Z`), 10, { fix: `fix number ${n}` });
    const card = await fire(h, pod('cart-7d9f8c6b5-zzzz9', 'fp-9', '2026-01-09T05:00:00Z'));
    const lines = lineText(card.seenBefore);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('2026-01-09 03:00 UTC');
    expect(lines[0]).toContain('“fix number 4”');
    expect(lines[0]).toContain('came back 1 h 50 min later');
    expect(lines[1]).toContain('“fix number 3”');
    expect(lines[1]).toContain('held (no recurrence within a day)');
    expect(card.seenBefore!.more).toEqual({ count: 2, path: `/ui/incidents?trigger=${encodeURIComponent(card.triggerKey)}` });
    expect(renderConsoleCard(card).join('\n')).toContain('2 more in /ui: /ui/incidents?trigger=');
  });

  it('the same alert on a sibling host counts (web-01 → web-02), an unrelated alert or workload never does', async () => {
    const h = await botHarness({ snapshot });
    await episode(h, host('web-01.prod.example.com:9100', 'fp-h1', '2026-01-01T03:00:00Z'), 30, { ack: 'bob', fix: 'rotated /var/log/app' });
    const sibling = await fire(h, host('web-02.prod.example.com:9100', 'fp-h2', '2026-01-02T09:00:00Z'));
    expect(lineText(sibling.seenBefore)).toEqual([
      '2026-01-01 03:00 UTC · on web-01.prod.example.com · lasted 30 min · acked by bob · fixed by bob: “rotated /var/log/app” · held (no recurrence within a day)',
    ]);
    // Another alert on the same host, the same alert on a host of another family or another domain: nothing.
    expect((await fire(h, host('web-01.prod.example.com:9100', 'fp-h3', '2026-01-03T09:00:00Z', 'NodeClockSkewDetected'))).seenBefore).toBeUndefined();
    expect((await fire(h, host('db-01.prod.example.com:9100', 'fp-h4', '2026-01-03T10:00:00Z'))).seenBefore).toBeUndefined();
    expect((await fire(h, host('web-03.staging.example.com:9100', 'fp-h5', '2026-01-03T11:00:00Z'))).seenBefore).toBeUndefined();
    expect((await fire(h, pod('checkout-7d9f8c6b5-aaaa1', 'fp-p1', '2026-01-03T12:00:00Z'))).seenBefore).toBeUndefined();
    expect((await fire(h, host('10.0.0.7:9100', 'fp-ip1', '2026-01-03T13:00:00Z'))).seenBefore).toBeUndefined();
    expect((await fire(h, host('10.0.0.8:9100', 'fp-ip2', '2026-01-03T14:00:00Z'))).seenBefore).toBeUndefined();
  });

  it('an occurrence still firing is history too, and a fix said before any merge is shown as said', async () => {
    const h = await botHarness({ snapshot });
    await fire(h, host('worker-1', 'fp-w1', '2026-01-01T03:00:00Z'));
    const card = await fire(h, host('worker-2', 'fp-w2', '2026-01-01T03:10:00Z'));
    expect(lineText(card.seenBefore)).toEqual(['2026-01-01 03:00 UTC · on worker-1 · still firing']);
  });

  it('hostile fix text stays inert on Slack, Matrix and the console: no mention, no link, no markup', async () => {
    const h = await botHarness({ snapshot });
    const evil = '<!channel> @room <@U0BOSS> <https://evil.example|click> <script>alert(1)</script> *bold* [x](https://evil.example)';
    await episode(h, pod('cart-7d9f8c6b5-aaaa1', 'fp-1', '2026-01-01T03:00:00Z'), 5, { fix: evil });
    const card = await fire(h, pod('cart-7d9f8c6b5-bbbb2', 'fp-2', '2026-01-01T05:00:00Z'));
    expect(lineText(card.seenBefore)[0]).toContain('<!channel>');
    const slack = renderCard(card);
    const elements = JSON.stringify(slack.blocks);
    expect(elements).not.toMatch(/"type":"(broadcast|user|link)"[^}]*evil|"type":"broadcast"|"type":"user"/);
    expect(elements).not.toContain('"url":"https://evil.example"');
    expect(slack.text).not.toContain('<!channel>');
    const m = renderCardMatrix(card);
    const html = m.formatted_body ?? '';
    expect(m.body).not.toContain('@room'); // the body (plain text) shows it, and never as a room ping
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('href="https://evil.example');
    expect(html).toContain('&lt;script&gt;');
    const consoleText = renderConsoleCard(card).join('\n');
    expect(consoleText).toContain('🕘 Seen before (history, not a diagnosis):');
    expect(consoleText.split('\n').filter((l) => l.includes('<!channel>'))).toHaveLength(1);
  });
});

describe('sibling families', () => {
  it('a name with an instance number has a family; an IP, a bare word or a bare number has none', () => {
    expect(nameFamily('web-01')).toBe('web#');
    expect(nameFamily('web02')).toBe('web#');
    expect(nameFamily('web-01.prod.example.com')).toBe('web#.prod.example.com');
    expect(nameFamily('worker_7')).toBe('worker#');
    expect(nameFamily('ip-10-0-1-23.ec2.internal')).toBe('ip-10-0-1#.ec2.internal');
    expect(nameFamily('10.0.0.7')).toBeUndefined();
    expect(nameFamily('web')).toBeUndefined();
    expect(nameFamily('01')).toBeUndefined();
    expect(nameFamily('a1')).toBeUndefined();
    expect(siblingFamilyKey('nodefilesystemspacefillingup||host|web-01|')).toBe('nodefilesystemspacefillingup||host|web#|');
    expect(siblingFamilyKey('a|b')).toBeUndefined();
  });
});

describe('sibling lookup is cheap', () => {
  it('one prefix-checked pass over 50,000 trigger keys finds the siblings and nothing else', async () => {
    const { createLedgerState } = await import('../../../src/core/ledger/ledger-state.js');
    const { LedgerReader } = await import('../../../src/core/ledger/ledger-reader.js');
    const state = createLedgerState();
    const t = () => ({ count: 1, resolved: 1, votes: {}, up: 0, down: 0, episodes: [] });
    for (let i = 0; i < 50_000; i++) state.triggers[`kubepodcrashlooping|ns${i % 500}|deployment|svc${i.toString(36)}x|prod`] = t();
    state.triggers['nodefilesystemspacefillingup||host|web-01|'] = t();
    state.triggers['nodefilesystemspacefillingup||host|web-02|'] = t();
    state.triggers['nodefilesystemspacefillingup||host|db-01|'] = t();
    const read = new LedgerReader(() => state, { resolveWindowMs: Number.POSITIVE_INFINITY });
    const found = read.siblingTriggers('nodefilesystemspacefillingup||host|web-03|');
    expect(found.sort()).toEqual(['nodefilesystemspacefillingup||host|web-01|', 'nodefilesystemspacefillingup||host|web-02|']);
    expect(read.siblingTriggers('kubepodcrashlooping|ns7|deployment|svc7x|prod')).toEqual([]);
  });
});
