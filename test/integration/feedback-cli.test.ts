/**
 * `reprise feedback` (issue 2): drives the loop without chat. Without a server it appends to
 * the local ledger; with a `serve` on the same data dir it goes through the running bot (one
 * ledger writer), and a silenced trigger then posts nothing for a non-critical firing.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import type { LedgerEvent } from '../../src/core/ledger-events.js';
import { eventKey, Ledger } from '../../src/core/ledger/ledger.js';
import { crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { cleanup, makeTmpDir, runCli, spawnBot } from './helpers/spawn-bot.js';

afterEach(cleanup);

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';

/** Opens the data dir's ledger in-process (no server may be running on it) and reads every event. */
async function readLedger(dataDir: string): Promise<{ seq: number; events: LedgerEvent[]; silenced: boolean }> {
  const store = createStore(`sqlite://${join(dataDir, 'reprise.sqlite')}`, dataDir);
  try {
    const ledger = await Ledger.open(store, { snapshotEvery: 0 });
    const keys = Array.from({ length: ledger.seq }, (_, i) => eventKey(i + 1));
    const events = (await store.getMany<LedgerEvent>(keys)).filter((e): e is LedgerEvent => e !== undefined);
    return { seq: ledger.seq, events, silenced: ledger.silenceState(TRIGGER, new Date()).active };
  } finally {
    await store.close();
  }
}

describe('reprise feedback', () => {
  it('records votes and silences locally, rejects a bad duration, and goes through a running bot', { timeout: 60_000 }, async () => {
    const dataDir = makeTmpDir();
    const env = { REPRISE_DATA_DIR: dataDir };

    const down = await runCli(['feedback', TRIGGER, 'down', '--user', 'bob'], { env });
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toMatch(/recorded down on .* as event #1/);
    const before = Date.now();
    const silence = await runCli(['feedback', TRIGGER, 'silence', '1h', '--user', 'bob'], { env });
    expect(silence.code, silence.stderr).toBe(0);
    expect(silence.stdout).toMatch(/recorded silence until \S+ on .* as event #2/);

    let l = await readLedger(dataDir);
    expect(l.seq).toBe(2);
    expect(l.events[0]).toMatchObject({ type: 'feedback', triggerKey: TRIGGER, user: 'bob', vote: 'down' });
    expect(l.events[1]).toMatchObject({ type: 'silence', triggerKey: TRIGGER, user: 'bob' });
    const until = Date.parse((l.events[1] as Extract<LedgerEvent, { type: 'silence' }>).until);
    expect(until - before).toBeGreaterThan(59 * 60_000);
    expect(until - before).toBeLessThan(61 * 60_000 + 30_000);
    expect(l.silenced).toBe(true);

    const bad = await runCli(['feedback', TRIGGER, 'silence', '5x', '--user', 'bob'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/duration.*"5x"/);
    const usage = await runCli(['feedback', TRIGGER, 'sideways'], { env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/usage:/);
    expect((await readLedger(dataDir)).seq, 'rejected feedback writes nothing').toBe(2);

    // With a server on the same data dir, the CLI goes through it.
    const bot = await spawnBot({ dataDir });
    const up = await runCli(['feedback', TRIGGER, 'up', '--user', 'bob'], { env });
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain('via the running bot');
    expect(up.stdout).toContain(`pid ${bot.child.pid}`);
    await bot.waitForLog((x) => x.msg === 'feedback recorded' && x.user === 'bob');

    // The trigger is silenced: a warning firing is acknowledged but posts nothing.
    const quiet = await postAlert(bot.url, crashLoopPayload({ status: 'firing', severity: 'warning' }));
    expect(quiet.status, quiet.text).toBe(202);
    expect((quiet.json as WebhookAccepted).results[0]).toMatchObject({ status: 'silenced', triggerKey: TRIGGER });
    expect(bot.transcriptLines()).toEqual([]);
    expect(bot.stdout()).not.toContain('KubePodCrashLooping');

    // A critical firing breaks through (and ends the silence): this is what makes the quiet one meaningful.
    const loud = await postAlert(bot.url, crashLoopPayload({ status: 'firing', severity: 'critical', pod: 'checkout-api-7d9f8c6b5-p4q7z' }));
    expect(loud.status, loud.text).toBe(202);
    expect((loud.json as WebhookAccepted).results[0]).toMatchObject({ status: 'posted', triggerKey: TRIGGER });
    expect(bot.transcriptLines().filter((x) => x.kind === 'rca')).toHaveLength(1);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });

    l = await readLedger(dataDir);
    expect(l.events.map((e) => e.type)).toEqual(['feedback', 'silence', 'feedback', 'silence', 'open']);
    expect(l.events[2]).toMatchObject({ type: 'feedback', triggerKey: TRIGGER, user: 'bob', vote: 'up' });
    expect(l.events[3]).toMatchObject({ type: 'silence', triggerKey: TRIGGER, user: 'reprise:critical' });
    expect(l.silenced).toBe(false);

    // Stopped cleanly: the serve lock is gone, so the CLI writes locally again.
    const clear = await runCli(['feedback', TRIGGER, 'clear', '--user', 'bob'], { env });
    expect(clear.code, clear.stderr).toBe(0);
    expect(clear.stdout).not.toContain('via the running bot');
    expect(clear.stdout).toMatch(/as event #6/);
  });
});
