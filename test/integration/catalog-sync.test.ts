/**
 * Catalog sync through the real `reprise serve` and `reprise catalog sync` (issue 6 item 2):
 * a bare git remote, pushes to it, `/readyz` waiting for the first index, an on-demand sync
 * after which the new entry's alert is an instant recall, HEAD unchanged → no rebuild, a
 * failing remote keeping the last good index (readyz detail, metrics), and a poll picking a
 * push up unasked.
 */
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKOUT_ENTRY, crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { makeGitRemote, type GitRemote } from '../helpers/git-remote.js';
import { waitFor } from '../helpers/wait-for.js';

const remotes: GitRemote[] = [];
afterEach(async () => {
  await cleanup();
  for (const r of remotes.splice(0)) r.cleanup();
});

/** The bundled starter catalog as files, minus the entries named. */
function bundledFiles(without: readonly string[]): Record<string, string> {
  const root = join(REPO_ROOT, 'catalog');
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const abs = join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else {
        const rel = relative(root, abs).split('\\').join('/');
        if (!without.includes(rel)) out[rel] = readFileSync(abs, 'utf8');
      }
    }
  };
  walk(root);
  return out;
}

interface Readyz {
  status: string;
  reasons: string[];
  checks: { catalog: Record<string, unknown> & { head: string | null; entries: number } };
}
const readyz = async (bot: BotProcess): Promise<{ status: number; body: Readyz }> => {
  const res = await fetch(`${bot.url}/readyz`);
  return { status: res.status, body: (await res.json()) as Readyz };
};
const metric = async (bot: BotProcess, line: RegExp): Promise<number | undefined> => {
  const text = await (await fetch(`${bot.url}/metrics`)).text();
  const m = text.split('\n').find((l) => line.test(l));
  return m === undefined ? undefined : Number(m.split(' ').at(-1));
};
let pods = 0;
const fire = async (bot: BotProcess) => {
  const res = await postAlert(bot.url, crashLoopPayload({ status: 'firing', pod: `checkout-api-7d9f8c6b5-s${++pods}x9z` }));
  expect(res.status, res.text).toBe(202);
  return (res.json as WebhookAccepted).results[0]!;
};

describe('catalog sync through reprise serve', () => {
  it(
    'is not ready before the first index; `catalog sync` lands a merged entry as an instant recall; failures keep the last good index',
    { timeout: 120_000 },
    async () => {
      const remote = makeGitRemote(bundledFiles([CHECKOUT_ENTRY]));
      remotes.push(remote);
      const dir = makeTmpDir();
      const config = join(dir, 'reprise.yaml');
      // The remote is not there yet: the bot starts, but is not ready.
      const hidden = `${remote.bare}.later`;
      renameSync(remote.bare, hidden);
      // Each firing is recalled on its own here (not folded into its group's thread).
      writeFileSync(config, `catalog:\n  git:\n    url: ${remote.bare}\n    poll_interval: 1h\ntrigger:\n  coalesce:\n    enabled: false\n`);
      const env = { REPRISE_DATA_DIR: dir };

      // No bot yet: a clear refusal.
      const none = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/no running bot found.*reprise serve/s);

      const bot = await spawnBot({ dataDir: dir, args: ['--config', config] });
      let r: { status: number; body: Readyz };
      // The first fetch fails (no remote): not ready, and the reason says why.
      await waitFor(() => bot.logs().find((l) => typeof l.msg === 'string' && l.msg.startsWith('catalog sync failed')), 'the first failed fetch');
      r = await readyz(bot);
      expect(r.status).toBe(503);
      expect(r.body.status).toBe('not_ready');
      expect(r.body.reasons.join(' ')).toMatch(/catalog: no index yet: fetching/);
      const failedSync = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(failedSync.code).toBe(1);
      expect(failedSync.stderr).toMatch(/catalog sync failed/);

      // The remote appears: an on-demand sync clones and indexes it; ready.
      renameSync(hidden, remote.bare);
      const first = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain(`catalog synced: HEAD ${remote.head()} (first index)`);
      r = await readyz(bot);
      expect(r.status).toBe(200);
      expect(r.body.checks.catalog).toMatchObject({ source: 'git', head: remote.head(), consecutiveFailures: 0 });
      const firstHead = remote.head();

      // Not in the catalog yet: no instant recall of the checkout entry.
      const miss = await fire(bot);
      expect(miss.answer?.entry).not.toBe(CHECKOUT_ENTRY);

      // A human merges the entry (a push to the remote); `catalog sync` returns once indexed.
      const entry = readFileSync(join(REPO_ROOT, 'catalog', CHECKOUT_ENTRY), 'utf8');
      const merged = remote.push({ [CHECKOUT_ENTRY]: entry }, 'KB: checkout-api OOMKilled');
      const synced = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(synced.code, synced.stderr).toBe(0);
      expect(synced.stdout).toContain(`catalog synced: HEAD ${merged} (was ${firstHead})`);
      expect(synced.stdout).toMatch(/1 entry changed, \d+ indexed \(updated in place\)/);
      const hit = await fire(bot);
      expect(hit.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });

      // HEAD unchanged: nothing rebuilt (the rebuild counters stay, the unchanged one moves).
      const full = await metric(bot, /^reprise_catalog_rebuilds_total\{mode="full"\}/);
      const inPlace = await metric(bot, /^reprise_catalog_rebuilds_total\{mode="incremental"\}/);
      expect([full, inPlace]).toEqual([1, 1]);
      const same = await runCli(['catalog', 'sync', '--config', config, '--json'], { env });
      expect(same.code, same.stderr).toBe(0);
      expect(JSON.parse(same.stdout)).toMatchObject({ mode: 'none', head: merged, oldHead: merged, entriesChanged: 0 });
      expect(await metric(bot, /^reprise_catalog_rebuilds_total\{mode="full"\}/)).toBe(1);
      expect(await metric(bot, /^reprise_catalog_rebuilds_total\{mode="incremental"\}/)).toBe(1);
      expect(await metric(bot, /^reprise_catalog_rebuilds_total\{mode="none"\}/)).toBe(1);
      expect(await metric(bot, new RegExp(`^reprise_catalog_info\\{head="${merged}"`))).toBe(1);

      // The remote breaks: the last good index is kept and reported; recall still answers.
      const failuresBefore = (await metric(bot, /^reprise_catalog_sync_failures_total /))!;
      renameSync(remote.bare, hidden);
      const broken = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(broken.code).toBe(1);
      expect(broken.stderr).toMatch(/catalog sync failed: .*still serving/);
      r = await readyz(bot);
      expect(r.status).toBe(200);
      expect(r.body.checks.catalog).toMatchObject({ head: merged, consecutiveFailures: 1, serving: expect.stringContaining(merged) });
      expect((r.body.checks.catalog['lastError'] as { message: string }).message).toMatch(/fetch/);
      expect(await metric(bot, /^reprise_catalog_sync_failures_total /)).toBe(failuresBefore + 1);
      expect(await metric(bot, /^reprise_catalog_sync_consecutive_failures /)).toBe(1);
      expect((await fire(bot)).answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });

      // A broken entry in a new HEAD is skipped with its reason; the bot keeps going.
      renameSync(hidden, remote.bare);
      remote.push({ 'incidents/broken.md': '---\ntype: Incident\ntitle: [oops\n---\n' });
      const withBroken = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(withBroken.code, withBroken.stderr).toBe(0);
      expect(withBroken.stdout).toMatch(/skipped incidents\/broken\.md:\d+ \[/);
      r = await readyz(bot);
      expect(r.body.checks.catalog).toMatchObject({ skippedFiles: 1, consecutiveFailures: 0 });
      expect(r.body.checks.catalog['lastError']).toBeUndefined();

      expect(await bot.stop()).toEqual({ code: 0, signal: null });
      const stopped = await runCli(['catalog', 'sync', '--config', config], { env });
      expect(stopped.code).toBe(1);
      expect(stopped.stderr).toMatch(/no running bot found|is not running/);
    },
  );

  it('a poll picks a push up unasked; a restart with the remote gone serves the clone it left', { timeout: 90_000 }, async () => {
    const remote = makeGitRemote(bundledFiles([CHECKOUT_ENTRY]));
    remotes.push(remote);
    const dir = makeTmpDir();
    const config = join(dir, 'reprise.yaml');
    // Each firing is recalled on its own here (not folded into its group's thread).
    writeFileSync(config, `catalog:\n  git:\n    url: ${remote.bare}\n    poll_interval: 300ms\ntrigger:\n  coalesce:\n    enabled: false\n`);
    const bot = await spawnBot({ dataDir: dir, args: ['--config', config] });
    const head1 = remote.head();
    await pollReady(bot, head1);
    const merged = remote.push({ [CHECKOUT_ENTRY]: readFileSync(join(REPO_ROOT, 'catalog', CHECKOUT_ENTRY), 'utf8') });
    await pollReady(bot, merged);
    expect((await fire(bot)).answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    expect(await bot.stop()).toEqual({ code: 0, signal: null });

    renameSync(remote.bare, `${remote.bare}.gone`);
    const again = await spawnBot({ dataDir: dir, args: ['--config', config] });
    const r = await readyz(again);
    expect(r.status).toBe(200);
    expect(r.body.checks.catalog).toMatchObject({ head: merged });
    expect((await fire(again)).answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
  });
});

describe('catalog sync without git', () => {
  it('`catalog sync` against a bot serving a folder says how to turn sync on', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir });
    const res = await runCli(['catalog', 'sync'], { env: { REPRISE_DATA_DIR: dir } });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/serves the folder .* as is: catalog sync needs catalog\.git\.url \(or REPRISE_CATALOG_GIT_URL\)/);
    expect((await readyz(bot)).status).toBe(200);
    const usage = await runCli(['catalog', 'sync', 'extra'], { env: { REPRISE_DATA_DIR: dir } });
    expect(usage.code).toBe(2);
  });
});

/** Polls /readyz until the catalog serves `head`. */
async function pollReady(bot: BotProcess, head: string): Promise<void> {
  await waitFor(async () => {
    const r = await readyz(bot);
    return r.status === 200 && r.body.checks.catalog.head === head;
  }, `the bot to index ${head}`);
}
