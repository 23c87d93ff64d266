/**
 * Forge failures lose nothing (issue 6): a 500 is retried with backoff inside the adapter; a
 * rate limit whose reset is far off keeps the work until then (the note's author is told it
 * was kept); a forge down across a restart files it at the next start; a refusal for good is
 * skipped for that item with a log line and the run goes on.
 */
import type { TestChatEvent } from '../unit/bot/recording-transport.js';
import { incidentIntents } from '../../src/core/bot/intent.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import type { MessageRef } from '../../src/core/chat/chat-types.js';
import { richText, type NoticeView } from '../../src/core/chat/thread-view.js';
import type { CuratedEvent } from '../../src/core/ledger-events.js';
import type { Incident } from '../../src/core/types.js';
import { createBareCatalogRepo, type BareCatalogRepo } from '../fakes/bare-catalog-repo.js';
import { alert } from '../unit/recall/recall-fixtures.js';
import { curationHarness, goodFinding, type CurationHarness } from './helpers/curation-harness.js';

const open: CurationHarness[] = [];
let remote: BareCatalogRepo | undefined;
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
  await remote?.cleanup();
  remote = undefined;
});

async function harness(o: Parameters<typeof curationHarness>[0] = {}): Promise<CurationHarness> {
  const x = await curationHarness(o);
  open.push(x);
  return x;
}

function firing(fingerprint: string, pod = 'checkout-api-7d9f8c6b5-x2k4q'): Incident {
  return alert({
    alertname: 'KubePodOOMKilled',
    fingerprint,
    labels: { namespace: 'payments', pod, severity: 'warning' },
    annotations: { summary: 'Container was OOMKilled.' },
  });
}

const notices = (x: CurationHarness): string[] =>
  x.transport.replies
    .filter((r) => (r.view as NoticeView).kind === 'notice')
    .map((r) => `${(r.view as NoticeView).icon} ${richText((r.view as NoticeView).text)}`);
const decisions = async (x: CurationHarness): Promise<string[]> =>
  (await x.events()).filter((e): e is CuratedEvent => e.type === 'curated').map((e) => `${e.subject}:${e.decision}`);
const say = (x: CurationHarness, root: MessageRef, id: string, text: string) =>
  x.transport.inject({
    type: 'message',
    eventId: id,
    transport: 'rec',
    user: { id: 'U3', name: 'bob' },
    thread: root,
    channel: '#rec',
    text,
    addressed: true,
  } as TestChatEvent);

describe('forge errors', () => {
  it('a 500 on opening the PR is retried with backoff and the PR is opened once', async () => {
    const h = await harness();
    h.fake.fail({ status: 500, method: 'POST', path: '/repos/acme/kb/pulls' });
    h.findings.push(goodFinding());
    await h.bot.handle(incidentIntents([firing('fp-1')]));
    await h.settle();
    expect(h.fake.requests.filter((r) => r.method === 'POST' && r.path === '/repos/acme/kb/pulls').map((r) => r.status)).toEqual([500, 201]);
    expect(h.fake.pulls()).toHaveLength(1);
    expect(await decisions(h)).toEqual(['finding:novel']);
    expect(h.logs.some((l) => l.level === 'warn' && l.msg === 'GitHub request failed; retrying')).toBe(true);
  });

  it('a rate limit with a far reset keeps the note, tells its author, and files it after the reset', async () => {
    const h = await harness();
    h.findings.push(goodFinding({ verified: false }));
    await h.bot.handle(incidentIntents([firing('fp-1')]));
    await h.settle();
    const root = h.transport.posts[0]!.ref!;
    const reset = Math.floor(h.clock.now().getTime() / 1000) + 1800;
    h.fake.fail({ status: 403, times: 1, message: 'API rate limit exceeded', headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } });
    await say(h, root, 'n-1', 'note: the heap flag is set in the base image');
    await h.settle();
    expect(h.fake.pulls()).toEqual([]);
    expect(h.pending()).toBe(1);
    expect(notices(h).at(-1)).toMatch(
      /^⏳ note from bob kept: the knowledge base forge is not reachable right now \(GitHub rate limit .* resets at 2026-01-01T00:30:00.000Z/,
    );
    expect(h.logs.filter((l) => l.level === 'warn' && l.msg === 'curation item failed; kept and will retry')).toHaveLength(1);
    // Before the reset nothing is tried again.
    const calls = h.fake.requests.length;
    h.clock.advance(10 * 60_000);
    h.worker.kick();
    await h.settle();
    expect(h.fake.requests.length).toBe(calls);
    // After it, the note is filed; the author was told once, then where it went.
    h.clock.advance(25 * 60_000);
    h.worker.kick();
    await h.settle();
    expect(h.fake.pulls()).toHaveLength(1);
    expect(h.pending()).toBe(0);
    expect(notices(h).filter((n) => n.startsWith('⏳'))).toHaveLength(1);
    expect(notices(h).at(-1)).toMatch(/^📝 note from bob filed as a new Concept entry for review: PR #1$/);
  });

  it('a forge down across a restart: the note is kept in the ledger and filed by the next start', async () => {
    remote = await createBareCatalogRepo();
    const store = createStore('memory://', '');
    const first = await harness({ store, remote });
    first.findings.push(goodFinding({ confidence: 0.3 }));
    await first.bot.handle(incidentIntents([firing('fp-1')]));
    await first.settle();
    first.fake.fail({ status: 502, times: 1000 });
    await say(first, first.transport.posts[0]!.ref!, 'n-1', 'note: failover to the standby DB fixed it');
    await first.settle();
    expect(first.pending()).toBe(1);
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = await harness({ store, remote });
    await second.settle();
    expect(second.pending()).toBe(0);
    const [pr] = second.fake.pulls();
    expect(pr?.body).toContain('> failover to the standby DB fixed it');
    expect(await remote.branches()).toContain(pr!.head);
    expect(await decisions(second)).toEqual(['finding:below_bar', 'note:concept_pr']);
  });

  it('a refusal for good is recorded for that item with a log line, and the next item goes on', async () => {
    const h = await harness();
    h.fake.fail({ status: 422, method: 'POST', path: '/repos/acme/kb/pulls', message: 'Validation Failed' });
    h.findings.push(
      goodFinding(),
      goodFinding({
        summary: 'other workload',
        rootCauses: [{ cause: 'cart-api leaks connections', confidence: 0.9, evidence: ['pool exhausted'], entities: [] }],
      }),
    );
    await h.bot.handle(incidentIntents([firing('fp-1'), firing('fp-2', 'cart-api-5c8d7-abcde')]));
    await h.settle();
    expect(await decisions(h)).toEqual(['finding:failed', 'finding:novel']);
    const failed = (await h.events()).find((e): e is CuratedEvent => e.type === 'curated' && e.decision === 'failed')!;
    expect(failed.detail).toMatch(/GitHub refused to open a pull request .*422/);
    expect(h.logs.filter((l) => l.level === 'error' && l.msg === 'forge refused a curation item for good; skipped')).toHaveLength(1);
    expect(h.fake.pulls().map((p) => p.title)).toEqual([expect.stringContaining('cart-api')]);
    expect(h.pending()).toBe(0);
  });

  it('the writes-per-hour budget holds work back, never drops it', async () => {
    const h = await harness({ worker: { writesPerHour: 3 } });
    h.findings.push(goodFinding({ confidence: 0.3 }));
    await h.bot.handle(incidentIntents([firing('fp-1')]));
    await h.settle();
    const root = h.transport.posts[0]!.ref!;
    for (const i of [1, 2, 3]) await say(h, root, `n-${i}`, `note: fact ${i}`);
    await h.settle();
    // Note 1 opens a Concept PR with labels (2 writes); one write left is not enough for another item.
    expect(h.fake.writes().filter((w) => w.method === 'POST')).toHaveLength(2);
    expect(h.pending()).toBe(2);
    expect(h.logs.filter((l) => l.msg === 'forge write budget spent for this hour; curation waits')).toHaveLength(1);
    h.clock.advance(3_600_001);
    h.worker.kick();
    await h.settle();
    expect(h.pending()).toBe(0);
    expect(h.fake.commentsOn(h.fake.pulls()[0]!.number).map((c) => c.body)).toEqual([expect.stringContaining('> fact 2'), expect.stringContaining('> fact 3')]);
  });
});
