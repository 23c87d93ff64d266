/**
 * `reprise feedback` and the control plane (issues 2 and 13): the CLI drives the loop without
 * chat. A running bot owns the store: the CLI goes through its control socket (a Unix socket,
 * mode 0600, in the data dir); with no bot it writes directly under the store lock. The public
 * port has no control API at all, and a second `serve` on one store refuses to start.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/adapters/keyv/keyv-store.js';
import type { LedgerEvent } from '../../src/core/ledger-events.js';
import { eventKey, Ledger } from '../../src/core/ledger/ledger.js';
import { crashLoopPayload, postAlert, request, type WebhookAccepted } from './helpers/alerts.js';
import { cleanup, MAIN_JS, makeTmpDir, runCli, spawnBot, type BotProcess } from './helpers/spawn-bot.js';

afterEach(cleanup);

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';

/** Opens the data dir's ledger in-process (no server may be running on it) and reads every event. */
async function readLedger(dataDir: string): Promise<{ seq: number; events: LedgerEvent[]; silenced: boolean }> {
  const store = createStore(`sqlite://${join(dataDir, 'reprise.sqlite')}`, dataDir);
  try {
    const ledger = await Ledger.open(store, { snapshotEvery: 0 });
    const keys = Array.from({ length: ledger.seq }, (_, i) => eventKey(i + 1));
    const events = (await store.getMany<LedgerEvent>(keys)).filter((e): e is LedgerEvent => e !== undefined);
    return { seq: ledger.seq, events, silenced: ledger.read.silence(TRIGGER, new Date()).active };
  } finally {
    await store.close();
  }
}

/** A data dir whose ledger has seen TRIGGER once (one firing through a bot, then stopped). */
async function seededDataDir(): Promise<string> {
  const dataDir = makeTmpDir();
  const bot = await spawnBot({ dataDir });
  expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
  await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'));
  expect(await bot.stop()).toEqual({ code: 0, signal: null });
  return dataDir;
}

describe('reprise feedback', () => {
  it('writes locally when no bot runs, refuses unknown triggers and bad input, and goes through a running bot', { timeout: 150_000 }, async () => {
    const dataDir = await seededDataDir();
    const env = { REPRISE_DATA_DIR: dataDir };
    const base = (await readLedger(dataDir)).seq; // the open and its delivery

    const seqOf = (stdout: string): number => Number(/as event #(\d+)/.exec(stdout)?.[1]);
    const down = await runCli(['feedback', TRIGGER, 'down', '--user', 'bob'], { env });
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toMatch(new RegExp(`recorded down on .* for bob as event #${base + 1}`));
    // Without --user, the OS user the CLI runs as.
    const before = Date.now();
    const silence = await runCli(['feedback', TRIGGER, 'silence', '1h'], { env });
    expect(silence.code, silence.stderr).toBe(0);
    expect(silence.stdout).toMatch(new RegExp(`recorded silence until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC on .* for ${userInfo().username} as event #\\d+`));

    let l = await readLedger(dataDir);
    expect(l.events[seqOf(down.stdout) - 1]).toMatchObject({ type: 'feedback', triggerKey: TRIGGER, user: 'bob', vote: 'down', via: 'cli' });
    const silenceEvent = l.events[seqOf(silence.stdout) - 1] as Extract<LedgerEvent, { type: 'silence' }>;
    expect(silenceEvent).toMatchObject({ type: 'silence', triggerKey: TRIGGER, user: userInfo().username, via: 'cli' });
    // The same loop as the bot's: the card's rewrites (the 👎 tally, the silence) and the thread's
    // notice wait in the outbox for the bot to deliver when it next runs.
    const waiting = l.events.slice(base).filter((e) => e.type === 'outbox');
    expect(waiting.map((e) => (e as { op: string }).op)).toEqual(['update', 'update', 'reply']);
    const afterOffline = l.seq;
    const until = Date.parse(silenceEvent.until);
    expect(until - before).toBeGreaterThan(59 * 60_000);
    expect(until - before).toBeLessThan(61 * 60_000 + 30_000);
    expect(l.silenced).toBe(true);

    const bad = await runCli(['feedback', TRIGGER, 'silence', '5x', '--user', 'bob'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/duration.*"5x"/);
    const usage = await runCli(['feedback', TRIGGER, 'sideways'], { env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/usage:/);
    // A typo in the trigger key is refused, naming the trigger it probably meant.
    const typo = await runCli(['feedback', TRIGGER.replace('payments', 'paymnets'), 'down'], { env });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(`No trigger is named “${TRIGGER.replace('payments', 'paymnets')}”. The closest: ${JSON.stringify(TRIGGER)}`);
    // A user name that would drive a terminal or hide as another name is refused.
    for (const user of ['eve\u001b[2J', 'adm\u202Enimda', 'two\nlines']) {
      const r = await runCli(['feedback', TRIGGER, 'up', '--user', user], { env });
      expect(r.code, JSON.stringify(user)).toBe(2);
      expect(r.stderr).toMatch(/user must be printable/);
    }
    expect((await readLedger(dataDir)).seq, 'rejected feedback writes nothing').toBe(afterOffline);

    // With a server on the same data dir, the CLI goes through its control socket. Starting, it
    // delivers what the offline commands left: the card now says silenced, and the thread why.
    const bot = await spawnBot({ dataDir });
    await bot.waitForTranscript((ls) => ls.some((x) => x.kind === 'update' && /silenced/.test(String(x.text)) && /👎 1/.test(String(x.text))));
    await bot.waitForTranscript((ls) => ls.some((x) => x.kind === 'silenced' && /silenced by \S+ until/.test(String(x.text))));
    const socket = join(dataDir, 'reprise.sock');
    expect(statSync(socket).mode & 0o777, 'control socket is owner-only').toBe(0o600);
    // The trigger named by a few of its words: the running bot records it on the whole key.
    const up = await runCli(['feedback', 'checkout-api', 'crashloop', 'up', '--user', 'bob'], { env });
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(`via the running bot (pid ${bot.pid})`);
    expect(up.stdout).toContain(`up on ${TRIGGER} for bob`);
    await bot.waitForLog((x) => x.msg === 'feedback recorded' && x.user === 'bob' && x.via === 'cli');
    const unknown = await runCli(['feedback', 'no|such|trigger', 'up'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No trigger is named “no|such|trigger”');

    // The trigger is silenced: a warning firing is acknowledged but posts nothing. What the 👍
    // edits on the card is delivered first (settled), so the count below is the firing's alone.
    await bot.settled();
    const transcriptBefore = bot.transcriptLines().length;
    const rcaBefore = bot.transcriptLines().filter((x) => x.kind === 'rca').length;
    const quiet = await postAlert(bot.url, crashLoopPayload({ status: 'firing', severity: 'warning', pod: 'checkout-api-7d9f8c6b5-q1q1q' }));
    expect(quiet.status, quiet.text).toBe(202);
    expect((quiet.json as WebhookAccepted).results[0]).toMatchObject({ status: 'silenced', triggerKey: TRIGGER });
    // The webhook's answer came after its transaction: once the outbox is empty and the ledger
    // still, whatever the quiet firing asked to post would have been posted.
    await bot.settled();
    expect(bot.transcriptLines()).toHaveLength(transcriptBefore);

    // A critical firing breaks through (and ends the silence): this is what makes the quiet one meaningful.
    const loud = await postAlert(bot.url, crashLoopPayload({ status: 'firing', severity: 'critical', pod: 'checkout-api-7d9f8c6b5-p4q7z' }));
    expect(loud.status, loud.text).toBe(202);
    expect((loud.json as WebhookAccepted).results[0]).toMatchObject({ status: 'posted', triggerKey: TRIGGER });
    await bot.waitForTranscript((ls) => ls.filter((x) => x.kind === 'rca').length === rcaBefore + 1);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });

    l = await readLedger(dataDir);
    // What was recorded, in order (messages the bot sent are outbox/delivered events between them).
    const decisions = l.events.slice(base).filter((e) => !['outbox', 'delivered', 'outbox_failed'].includes(e.type));
    // The quiet firing opened nothing; its suppression is recorded with its reason.
    expect(decisions.map((e) => e.type)).toEqual(['feedback', 'silence', 'feedback', 'noise', 'silence', 'open']);
    expect(decisions[2]).toMatchObject({ type: 'feedback', triggerKey: TRIGGER, user: 'bob', vote: 'up', via: 'cli' });
    expect(decisions[3]).toMatchObject({ type: 'noise', action: 'drop', reason: 'silence', triggerKey: TRIGGER });
    expect(decisions[4]).toMatchObject({ type: 'silence', triggerKey: TRIGGER, user: 'reprise:critical' });
    expect(l.silenced).toBe(false);

    // Stopped cleanly: the socket is gone, so the CLI writes locally again.
    const clear = await runCli(['feedback', TRIGGER, 'clear', '--user', 'bob'], { env });
    expect(clear.code, clear.stderr).toBe(0);
    expect(clear.stdout).not.toContain('via the running bot');
    expect(clear.stdout).toMatch(new RegExp(`as event #${l.seq + 1}`));
  });

  it('has no control API on the public port: forged 👎 and silences change nothing', { timeout: 60_000 }, async () => {
    const dataDir = await seededDataDir();
    const bot = await spawnBot({ dataDir, args: ['--host', '127.0.0.1'] });
    const before = bot.transcriptLines().length;
    const seqBefore = (await bot.readyz()).checks.ledger.seq;
    for (let i = 0; i < 5; i++) {
      const forged = await request(bot.url, {
        path: '/api/feedback',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ triggerKey: TRIGGER, action: 'down', user: `mallory${i}` }),
      });
      expect(forged.status).toBe(404);
    }
    const silence = await request(bot.url, {
      path: '/api/feedback',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ triggerKey: TRIGGER, action: 'silence', duration: '30d', user: 'mallory' }),
    });
    expect(silence.status).toBe(404);
    // The next real firing is posted: no forged silence holds it.
    const fired = await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-m4m4m' }));
    expect((fired.json as WebhookAccepted).results[0]).toMatchObject({ status: 'posted' });
    await bot.waitForTranscript((ls) => ls.length === before + 1);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    const l = await readLedger(dataDir);
    // Only the real firing's open and its message: no vote, no silence.
    expect(l.events.slice(seqBefore).map((e) => e.type)).toEqual(['open', 'outbox', 'delivered']);
    expect(l.events.some((e) => 'user' in e && String(e.user).startsWith('mallory'))).toBe(false);
  });

  it('lets one serve own a store: a second exits 1 naming the holder, and the CLI will not write under it', { timeout: 60_000 }, async () => {
    const dataDir = await seededDataDir();
    // The lock is between processes: the first serve and the second are each a process of their own.
    const first: BotProcess = await spawnBot({ dataDir, process: true });
    const second = await runCli(['serve', '--port', '0', '--host', '127.0.0.1'], { env: { REPRISE_DATA_DIR: dataDir }, timeoutMs: 20_000, process: true });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`reprise serve (pid ${first.pid}`);
    expect(second.stderr).toMatch(/stop it \(kill \d+\), or give this one its own data dir/);
    // The first keeps serving, untouched.
    expect((await postAlert(first.url, crashLoopPayload({ status: 'firing', pod: 'checkout-api-7d9f8c6b5-s2s2s' }))).status).toBe(202);

    // A bot whose socket does not answer (here: its announcement points nowhere, as after a
    // wedge) still holds the lock: the CLI refuses instead of writing beside it.
    const ownerFile = join(dataDir, 'serve.json');
    const announced = readFileSync(ownerFile, 'utf8');
    writeFileSync(ownerFile, JSON.stringify({ ...JSON.parse(announced), socket: join(dataDir, 'gone.sock') }));
    // The firing's message is delivered (and its `delivered` recorded) asynchronously: wait
    // until nothing is pending and the ledger stops moving, so what follows measures the CLI alone.
    await first.waitForTranscript((ls) => ls.length >= 1);
    const seq = await first.settled();
    const refused = await runCli(['feedback', TRIGGER, 'down'], { env: { REPRISE_DATA_DIR: dataDir } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is in use by reprise serve (pid ${first.pid}`);
    expect(refused.stderr).toContain('nothing was recorded');
    writeFileSync(ownerFile, announced);
    expect(await first.stop()).toEqual({ code: 0, signal: null });
    expect((await readLedger(dataDir)).seq).toBe(seq);
  });

  // Needs root (to become another user), a node that user can execute and a checkout they can
  // read: under root's home (mode 0700) `nobody` can do neither, so the test says why and skips.
  it.runIf(process.getuid?.() === 0)('refuses, for another OS user, to write what the owner would (no EPERM guess)', { timeout: 60_000 }, async (ctx) => {
    const cannot = cannotRunNodeAs('nobody');
    if (cannot) return ctx.skip(cannot);
    const dataDir = await seededDataDir();
    chmodSync(dataDir, 0o755); // another user may look, not write
    const bot = await spawnBot({ dataDir });
    const seq = (await bot.readyz()).checks.ledger.seq;
    let out: string;
    let code = 0;
    try {
      out = execFileSync('runuser', ['-u', 'nobody', '--', process.execPath, MAIN_JS, 'feedback', TRIGGER, 'down', '--user', 'nobody'], {
        env: { ...process.env, REPRISE_DATA_DIR: dataDir },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      const e = err as { status: number; stderr: string };
      code = e.status;
      out = e.stderr;
    }
    expect(code).toBe(1);
    expect(out).toMatch(/[Nn]othing was recorded/);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    expect((await readLedger(dataDir)).seq).toBe(seq);
  });
});

/**
 * Why `user` cannot run this test's CLI (no runuser, node not executable by them, or the
 * checkout not readable by them — a clone under root's 0700 home), or undefined.
 */
function cannotRunNodeAs(user: string): string | undefined {
  try {
    execFileSync('runuser', ['-u', user, '--', process.execPath, '-e', '0'], { stdio: 'ignore' });
  } catch (err) {
    return `runuser -u ${user} cannot execute ${process.execPath} (${(err as Error).message.split('\n')[0]}); run the suite with a node every user can execute`;
  }
  try {
    execFileSync('runuser', ['-u', user, '--', process.execPath, '-e', `require('node:fs').accessSync(${JSON.stringify(MAIN_JS)})`], { stdio: 'ignore' });
    return undefined;
  } catch {
    return `${user} cannot read ${MAIN_JS} (the checkout is in a folder only its owner may enter, e.g. root's home); run from a checkout every user can read`;
  }
}
