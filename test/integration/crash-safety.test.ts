/**
 * Crash safety (issue 2 "Done when"): every event is on disk before the webhook is
 * acknowledged. The server is SIGKILLed right after a 2xx; the ledger then holds every
 * acknowledged event, its incremental aggregates equal a full replay, and a restarted server
 * carries on where the dead one stopped.
 */
import { stateDigest } from '../../src/core/ledger/ledger-export-format.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import type { LedgerEvent } from '../../src/core/ledger-events.js';
import { eventKey, Ledger, SNAPSHOT_KEY } from '../../src/core/ledger/ledger.js';
import { CHECKOUT_ENTRY, crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli, spawnBot } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

afterEach(cleanup);

const EVENTS = 20;
/** Pod suffixes from Kubernetes' generated-name alphabet, so each reduces to the Deployment. */
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';
const pod = (i: number): string => `checkout-api-7d9f8c6b5-${SAFE[i % SAFE.length]}k9z${SAFE[Math.floor(i / SAFE.length)]}`;

describe('crash safety', () => {
  it('keeps every acknowledged event through SIGKILL; aggregates equal a full replay; a restart carries on', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    // A small snapshot interval, so reopening goes through snapshot + tail, not only a replay.
    const config = join(dir, 'reprise.yaml');
    writeFileSync(config, `catalog:\n  dir: ${JSON.stringify(join(REPO_ROOT, 'catalog'))}\nstore:\n  snapshot_every: 7\n`);
    const bot = await spawnBot({ dataDir: dir, args: ['--config', config], process: true }); // killed below

    // Firings on new pods; every third request resolves the previous firing.
    const acked: Array<{ type: 'open' | 'resolve'; fingerprint: string }> = [];
    for (let i = 1; i <= EVENTS; i++) {
      const resolve = i % 3 === 0;
      const p = resolve ? pod(i - 1) : pod(i);
      const res = await postAlert(bot.url, crashLoopPayload({ status: resolve ? 'resolved' : 'firing', pod: p }));
      expect(res.status, res.text).toBe(202);
      const result = (res.json as WebhookAccepted).results[0];
      expect(result?.status).toBe(resolve ? 'resolved' : 'posted');
      acked.push({ type: resolve ? 'resolve' : 'open', fingerprint: `fp-${p}` });
      if (i === EVENTS) await bot.kill();
    }
    expect((await bot.exited).signal).toBe('SIGKILL');
    const firings = acked.filter((a) => a.type === 'open').length;

    const file = join(dir, 'reprise.sqlite');
    const store = createStore(`sqlite://${file}`, dir);
    try {
      const ledger = await Ledger.open(store, { snapshotEvery: 0 });
      expect(ledger.seq).toBeGreaterThanOrEqual(EVENTS);
      const snap = await store.get<{ seq: number }>(SNAPSHOT_KEY);
      expect(snap?.seq, 'a periodic snapshot was written before the crash').toBeGreaterThanOrEqual(7);

      // Every acknowledged request is an event in the log, in order.
      const keys = Array.from({ length: ledger.seq }, (_, k) => eventKey(k + 1));
      const events = (await store.getMany<LedgerEvent>(keys)).filter((e): e is LedgerEvent => e !== undefined);
      const mine = events
        .filter((e): e is Extract<LedgerEvent, { type: 'open' | 'resolve' }> => e.type === 'open' || e.type === 'resolve')
        .map((e) => ({ type: e.type, fingerprint: e.fingerprint }));
      expect(mine).toEqual(acked);

      // Incremental aggregates (snapshot + tail) equal a replay from the first event.
      const replayed = await Ledger.replayAll(store);
      expect(ledger.read.digest()).toBe(stateDigest(replayed));
      expect(ledger.read.aggregates().applied).toBe(ledger.seq);
      expect(ledger.read.skipped).toBe(0);
      expect(ledger.read.aggregates().resolves).toBe(EVENTS - firings);
      const agg = ledger.read.entryStats(CHECKOUT_ENTRY);
      expect(agg.recalls, 'the recalled entry has aggregates').toBeGreaterThanOrEqual(1);
      expect(agg.resolved).toBeGreaterThanOrEqual(1);
    } finally {
      await store.close();
    }

    // Restart on the same folder: it serves, the count continues, an open from before the crash pairs.
    const again = await spawnBot({ dataDir: dir, args: ['--config', config], transcript: join(dir, 't2.jsonl') });
    const next = await postAlert(again.url, crashLoopPayload({ status: 'firing', pod: pod(EVENTS + 1) }));
    expect(next.status, next.text).toBe(202);
    // Its own thread (a thread the dead process acknowledged but never delivered goes out first).
    const mine = (l: { kind: string; text: string }): boolean => l.kind === 'rca' && l.text.includes(pod(EVENTS + 1));
    const line = (await again.waitForTranscript((ls) => ls.some(mine))).find(mine);
    expect(line, 'an rca line after the restart').toBeDefined();
    expect(line!.text).toContain(`🔁 #${firings + 1}`);

    const late = await postAlert(again.url, crashLoopPayload({ status: 'resolved', pod: pod(EVENTS) }));
    expect(late.status, late.text).toBe(202);
    expect((late.json as WebhookAccepted).results[0]).toMatchObject({ status: 'resolved', paired: true });
    expect(await again.stop()).toEqual({ code: 0, signal: null });
  });

  it('lists every acknowledged event with `reprise ledger events --json` after a kill -9 mid-stream', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, process: true }); // killed below
    // Four clients firing as fast as the bot answers; killed while requests are in flight.
    const acked: string[] = [];
    let n = 0;
    let stop = false;
    const client = async (): Promise<void> => {
      while (!stop) {
        const i = n++;
        const fingerprint = `stream-${i}`;
        try {
          const res = await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: pod(i), fingerprint }));
          if (res.status === 202) acked.push(fingerprint);
        } catch {
          // the connection died with the bot: not acknowledged
        }
      }
    };
    const clients = [client(), client(), client(), client()];
    await waitFor(() => acked.length >= 60, { what: '60 acknowledged webhooks', intervalMs: 5 });
    await bot.kill();
    stop = true;
    await Promise.all(clients);
    expect(n, 'requests were still being sent when the bot died').toBeGreaterThan(acked.length);

    const listed = await runCli(['ledger', 'events', '--json'], { env: { REPRISE_DATA_DIR: dir } });
    expect(listed.code, listed.stderr).toBe(0);
    const events = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; type: string; fingerprint?: string });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const opens = events.filter((e) => e.type === 'open').map((e) => e.fingerprint);
    for (const fp of acked) expect(opens, `acknowledged ${fp}`).toContain(fp);
    expect(new Set(opens).size, 'no open recorded twice').toBe(opens.length);
    // The store's aggregates agree with a replay of what was written before the kill.
    const verify = await runCli(['ledger', 'verify'], { env: { REPRISE_DATA_DIR: dir } });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    // --trigger and --since filter the same stream.
    const one = await runCli(['ledger', 'events', '--json', '--trigger', 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1', '--since', '1h'], {
      env: { REPRISE_DATA_DIR: dir },
    });
    expect(one.stdout.trim().split('\n').length).toBe(events.length);
    const none = await runCli(['ledger', 'events', '--json', '--trigger', 'other|trigger'], { env: { REPRISE_DATA_DIR: dir } });
    expect(none.stdout).toBe('');
  });
});
