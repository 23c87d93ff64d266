/**
 * The durable outbox: what was recorded is delivered, retried with backoff (a surface's own
 * Retry-After wins), given up only for a permanent refusal or old age (and that is recorded),
 * and redelivered by the next process after a crash or a chat outage.
 */
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import type { CardView } from '../../../src/core/chat/thread-view.js';
import type { Incident } from '../../../src/core/types.js';
import { alert, fixedSnapshot, incidentEntry } from '../recall/recall-fixtures.js';
import { botHarness } from '../bot/bot-harness.js';

const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });
const firing = (fingerprint = 'fp-1', pod = 'checkout-api-7d9f8c6b5-x2k4q'): Incident =>
  alert({ alertname: 'KubePodCrashLooping', fingerprint, labels: { namespace: 'payments', pod }, annotations: { summary: 'crash looping' } });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-outbox-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('outbox worker', () => {
  it('retries a surface that is down with backoff, with the same idempotency key, until it is back', async () => {
    const h = await botHarness({ snapshot, transports: [{ failPost: true }] });
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    expect(h.transport.calls).toHaveLength(1);
    expect(h.outbox.status()).toMatchObject({ pending: 2, retrying: 1 });
    // Not due yet: nothing happens before the backoff has passed.
    h.clock.advance(500);
    await h.settle();
    expect(h.transport.calls).toHaveLength(1);
    h.clock.advance(2000);
    await h.settle();
    expect(h.transport.calls).toHaveLength(2);
    // The surface is back.
    h.transport.opts.failPost = false;
    h.clock.advance(10_000);
    await h.settle();
    expect(h.transport.posts).toHaveLength(1);
    expect(h.transport.replies).toHaveLength(1);
    const keys = h.transport.calls.filter((c) => c.op === 'post').map((c) => c.key);
    expect(new Set(keys).size).toBe(1); // every attempt of the post carried the same key
    expect(h.outbox.status()).toEqual({ pending: 0, retrying: 0 });
    expect(h.warnings.length).toBeGreaterThanOrEqual(2);
  });

  it('waits exactly as long as a rate-limited surface asks (Retry-After), not its own backoff', async () => {
    const h = await botHarness({ snapshot, transports: [{ failPost: { retryable: true, retryAfterMs: 30_000 } }] });
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    h.transport.opts.failPost = false;
    h.clock.advance(29_000);
    await h.settle();
    expect(h.transport.posts).toHaveLength(0);
    h.clock.advance(1_000);
    await h.settle();
    expect(h.transport.posts).toHaveLength(1);
  });

  it("gives up on a permanent refusal at once, records why, and drops the thread's later messages too", async () => {
    const h = await botHarness({ snapshot, transports: [{ failPost: { retryable: false } }] });
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    const failed = (await h.events()).filter((e) => e.type === 'outbox_failed');
    expect(failed).toEqual([
      expect.objectContaining({ reason: 'chat API unavailable (post)' }),
      expect.objectContaining({ reason: 'its thread was never delivered on rec' }),
    ]);
    expect(h.outbox.status().pending).toBe(0);
    expect(h.transport.calls).toHaveLength(1);
  });

  it('gives up, and records it, on a message still undelivered after outbox.max_age', async () => {
    const h = await botHarness({ snapshot, transports: [{ failPost: true }] });
    await h.bot.handle(incidentIntents([firing()]));
    await h.settle();
    h.clock.advance(25 * 3_600_000);
    await h.settle();
    const failed = (await h.events()).filter((e) => e.type === 'outbox_failed');
    expect(failed[0]).toMatchObject({ reason: expect.stringMatching(/^undelivered after 1500 min: chat API unavailable/) });
    expect(h.outbox.status().pending).toBe(0);
  });

  it('keeps a slow thread from holding up another one', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const h = await botHarness({ snapshot, transports: [{ slowPost: { nth: 1, gate } }] });
    await h.bot.handle(incidentIntents([firing('fp-a'), firing('fp-b', 'checkout-api-7d9f8c6b5-p4q7z')]));
    // The second thread is delivered (post and analysis) while the first post still hangs.
    await vi.waitFor(() => expect(h.transport.sent.map((s) => `${s.op} ${s.ref?.id}`)).toEqual(['post t-2', 'reply t-2']), { timeout: 10_000 });
    expect(h.transport.posts.map((p) => p.ref?.id)).toEqual(['t-2']);
    release();
    await h.settle();
    expect(h.transport.posts).toHaveLength(2);
  });

  it('posts every new thread before the analyses of earlier ones when delivery is the bottleneck', async () => {
    const h = await botHarness({ snapshot, concurrency: 1 });
    await h.bot.handle(incidentIntents([firing('fp-a'), firing('fp-b', 'checkout-api-7d9f8c6b5-p4q7z'), firing('fp-c', 'checkout-api-7d9f8c6b5-k2m9n')]));
    await h.settle();
    expect(h.transport.sent.map((s) => `${s.op} ${s.ref?.id}`)).toEqual(['post t-1', 'post t-2', 'post t-3', 'reply t-1', 'reply t-2', 'reply t-3']);
  });

  it('delivers after a restart what the previous process recorded but never delivered, exactly once', async () => {
    const file = `sqlite://${join(dir, 'reprise.sqlite')}`;
    const first = await botHarness({ snapshot, transports: [{ failPost: true }], store: createStore(file, dir) });
    await first.bot.handle(incidentIntents([firing()]));
    await first.settle();
    expect(first.transport.posts).toHaveLength(0);
    await first.outbox.stop();
    await first.ledger.close();
    await first.store.close();

    // The next process (the chat service is back) finds the items in the replayed ledger.
    const second = await botHarness({ snapshot, store: createStore(file, dir) });
    await second.settle();
    expect(second.transport.posts).toHaveLength(1);
    expect((second.transport.posts[0]!.view as CardView).triggerKey).toBe(firing().triggerKey);
    expect(second.transport.replies).toHaveLength(1);
    await second.outbox.stop();
    await second.ledger.close();
    await second.store.close();

    const third = await botHarness({ snapshot, store: createStore(file, dir) });
    await third.settle();
    expect(third.transport.calls).toEqual([]);
    await third.ledger.close();
    await third.store.close();
  });
});
