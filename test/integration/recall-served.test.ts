/**
 * `reprise recall` answers what the running bot answers (issue 28 item 3): with the same config
 * — found as ./reprise.yaml, no --config — it reads the catalog the bot serves (its git clone,
 * not the bundled folder) and the track records in the bot's store, so after a merge + sync and
 * after a 👎 its answer is still the bot's, firing for firing. Companion commands validate only
 * the config they read.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKOUT_ENTRY, crashLoopPayload, postAlert, type WebhookAccepted } from './helpers/alerts.js';
import type { RecallJsonIncident } from './helpers/recall-cli.js';
import { cleanup, makeTmpDir, REPO_ROOT, runCli, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { makeGitRemote, type GitRemote } from '../helpers/git-remote.js';
import { waitFor } from '../helpers/wait-for.js';

const remotes: GitRemote[] = [];
afterEach(async () => {
  await cleanup();
  for (const r of remotes.splice(0)) r.cleanup();
});

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';

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

type Answer = { kind: string; entry: string; confidence: number } | null;

describe('reprise recall beside a running bot', () => {
  it('answers what the bot answered, from its git catalog and its store, with the config found in the working directory', { timeout: 180_000 }, async () => {
    // The served catalog lacks the checkout entry the bundled one has: reading the wrong one shows.
    const remote = makeGitRemote(bundledFiles([CHECKOUT_ENTRY]));
    remotes.push(remote);
    const dir = makeTmpDir();
    const dataDir = join(dir, 'data');
    writeFileSync(
      join(dir, 'reprise.yaml'),
      `store:\n  data_dir: data\ncatalog:\n  git:\n    url: ${remote.bare}\n    poll_interval: 1h\ntrigger:\n  coalesce:\n    enabled: false\n`,
    );
    const bot = await spawnBot({ dataDir, args: ['--config', join(dir, 'reprise.yaml')] });
    await waitFor(async () => (await fetch(`${bot.url}/readyz`)).status === 200 || undefined, 'the first index');

    let pods = 0;
    /** What the CLI says for the next firing, then what the bot answers it: the pair must agree. */
    const cliThenBot = async (): Promise<{ cli: Answer; bot: Answer; stderr: string }> => {
      const payload = crashLoopPayload({ status: 'firing', pod: `checkout-api-7d9f8c6b5-r${++pods}x9z` });
      writeFileSync(join(dir, 'alert.json'), JSON.stringify(payload));
      // No --config, no REPRISE_DATA_DIR: ./reprise.yaml says it all.
      const r = await runCli(['recall', '--alert', 'alert.json', '--json'], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      const [cli] = (JSON.parse(r.stdout) as { incidents: RecallJsonIncident[] }).incidents;
      expect(cli!.triggerKey).toBe(TRIGGER);
      const res = await postAlert(bot.url, payload);
      expect(res.status, res.text).toBe(202);
      const [fired] = (res.json as WebhookAccepted).results;
      return { cli: cli!.answer, bot: fired!.answer ?? null, stderr: r.stderr };
    };
    const human = async (): Promise<string> => {
      const r = await runCli(['recall', '--alert', 'alert.json'], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      return r.stderr;
    };

    // 1. The git catalog has no checkout entry: the bot shows the crash-loop runbook, and so does the CLI.
    const first = await cliThenBot();
    expect(first.bot).not.toBeNull();
    expect(first.bot!.entry).not.toBe(CHECKOUT_ENTRY);
    expect(first.cli).toEqual(first.bot);
    expect(await human()).toContain(`catalog: the bot's git clone ${join(dataDir, 'catalog-git')} at ${remote.head().slice(0, 12)}`);

    // 2. The entry is merged and synced (`catalog sync`, config found the same way): both recall it.
    const entry = readFileSync(join(REPO_ROOT, 'catalog', CHECKOUT_ENTRY), 'utf8');
    remote.push({ [CHECKOUT_ENTRY]: entry }, 'KB: checkout-api OOMKilled');
    const synced = await runCli(['catalog', 'sync'], { cwd: dir });
    expect(synced.code, synced.stderr).toBe(0);
    const second = await cliThenBot();
    expect(second.bot).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    expect(second.cli).toEqual(second.bot);

    // 3. A 👎 (the trigger named by a few words) moves the entry's track record in the bot's
    //    store: the bot's next answer changes, and the CLI, reading that store, says the same.
    const down = await runCli(['feedback', 'checkout-api', 'crashloop', 'down', '--user', 'ann'], { cwd: dir });
    expect(down.code, down.stderr).toBe(0);
    await bot.waitForLog((l) => l.msg === 'feedback recorded' && l.user === 'ann');
    const third = await cliThenBot();
    expect(third.bot).not.toEqual(second.bot);
    expect(third.cli).toEqual(third.bot);
    expect(await human()).toMatch(/^ledger: .*reprise\.sqlite \(event #\d+\)$/m);

    // --store takes the data dir too, and reads the same.
    const viaDir = await runCli(['recall', '--alert', 'alert.json', '--json', '--store', 'data'], { cwd: dir });
    expect(viaDir.code, viaDir.stderr).toBe(0);
    const fourth = await cliThenBot();
    expect((JSON.parse(viaDir.stdout) as { incidents: RecallJsonIncident[] }).incidents[0]!.answer).toEqual(fourth.bot);
    await stop(bot);
  });

  it(
    'a companion command validates only what it reads: Slack without a channel in this shell does not stop catalog sync or recall',
    { timeout: 60_000 },
    async () => {
      const dir = makeTmpDir();
      // The bot gets SLACK_CHANNEL from its own environment; this shell has only the file.
      writeFileSync(
        join(dir, 'reprise.yaml'),
        'transport:\n  slack:\n    bot_token: xoxb-0000000000-0000000000000-abcdefghijklmnopqrstuvwx\n    signing_secret: 0123456789abcdef0123456789abcdef\n',
      );
      const serve = await runCli(['config', 'check'], { cwd: dir });
      expect(serve.code).toBe(2);
      expect(serve.stderr).toMatch(/transport\.slack\.channel/);
      const sync = await runCli(['catalog', 'sync'], { cwd: dir });
      expect(sync.code).toBe(1);
      expect(sync.stderr).toMatch(/no running bot found for data dir .*data/);
      writeFileSync(join(dir, 'alert.json'), JSON.stringify(crashLoopPayload({ status: 'firing' })));
      const recall = await runCli(['recall', '--alert', 'alert.json', '--json'], { cwd: dir });
      expect(recall.code, recall.stderr).toBe(0);
      expect((JSON.parse(recall.stdout) as { incidents: RecallJsonIncident[] }).incidents[0]!.answer).toMatchObject({ entry: CHECKOUT_ENTRY });
    },
  );
});

async function stop(bot: BotProcess): Promise<void> {
  expect(await bot.stop()).toEqual({ code: 0, signal: null });
}
