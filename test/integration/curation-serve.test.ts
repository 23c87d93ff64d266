/**
 * `reprise serve` with a forge configured from the environment alone (GITHUB_TOKEN,
 * REPRISE_GITHUB_REPO, REPRISE_GITHUB_API_URL, REPRISE_CATALOG_GIT_URL), and `reprise note`
 * through the running bot's control socket: the note becomes a Concept PR on the fake, its
 * branch on the bare remote, and the thread says where it went. Without a forge, notes stay in
 * the ledger as before, with no error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createBareCatalogRepo, type BareCatalogRepo } from '../fakes/bare-catalog-repo.js';
import { startGitHubFake, type GitHubFake } from '../fakes/github-fake.js';
import { crashLoopPayload, postAlert, request } from './helpers/alerts.js';
import { cleanup, makeTmpDir, runCli, spawnBot } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const TRIGGER = 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1';
let fake: GitHubFake | undefined;
let remote: BareCatalogRepo | undefined;
afterEach(async () => {
  await cleanup();
  await fake?.close();
  await remote?.cleanup();
  fake = undefined;
  remote = undefined;
});

describe('serve with a forge', () => {
  it('files a CLI note as a Concept PR through the running bot, and reports the forge in /readyz', { timeout: 60_000 }, async () => {
    remote = await createBareCatalogRepo();
    fake = await startGitHubFake();
    const dataDir = makeTmpDir();
    const env = {
      REPRISE_DATA_DIR: dataDir,
      GITHUB_TOKEN: 'test-token',
      REPRISE_GITHUB_REPO: 'acme/kb',
      REPRISE_GITHUB_API_URL: fake.url,
      REPRISE_CATALOG_GIT_URL: remote.url,
    };
    const bot = await spawnBot({ dataDir, env });
    expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
    await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'));

    const r = await runCli(['note', TRIGGER, 'the', 'crash', 'follows', 'the', '@platform/oncall', 'config', 'push', '--user', 'bob'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^note recorded via the running bot \(pid \d+\) as event #\d+ on .* for bob; it will be filed on acme\/kb\n$/);
    await waitFor(() => (fake!.pulls().length > 0 ? true : undefined), { what: 'the Concept PR', timeoutMs: 20_000 });
    const pr = fake.pulls()[0]!;
    expect(pr.body).toContain('Operator knowledge from bob via cli');
    expect(pr.body).toContain('> the crash follows the @\u2060platform/oncall config push');
    expect(await remote.branches()).toContain(pr.head);
    const lines = await bot.waitForTranscript((ls) => ls.some((l) => /filed as a new Concept entry/.test(l.text)));
    expect(lines.find((l) => /filed as a new Concept entry/.test(l.text))!.text).toContain(`PR #${pr.number}`);

    const ready = await request(bot.url, { method: 'GET', path: '/readyz' });
    expect(ready.json).toMatchObject({ checks: { forge: { ok: true, repo: 'acme/kb', pending: 0, retrying: 0 } } });
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });

  it(
    'without a forge: the note is kept with the incident, nothing else changes; an unknown trigger and an oversized note are refused clearly',
    { timeout: 60_000 },
    async () => {
      const dataDir = makeTmpDir();
      const env = { REPRISE_DATA_DIR: dataDir };
      const bot = await spawnBot({ dataDir, env });
      expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
      await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'));
      const ok = await runCli(['note', TRIGGER, 'restart', 'helped', '--user', 'bob'], { env });
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/^note recorded via the running bot \(pid \d+\) as event #\d+ on .* for bob\n$/);
      await bot.waitForTranscript((ls) => ls.some((l) => l.kind === 'note' && /filed with this incident/.test(l.text)));
      const unknown = await runCli(['note', 'nope|x', 'hi'], { env });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/No trigger is named “nope\|x”/);
      const big = await runCli(['note', TRIGGER, 'x'.repeat(100 * 1024)], { env });
      expect(big.code).toBe(2);
      expect(big.stderr).toMatch(/note not saved: it is 100 KiB, longer than 8 KiB/);
      expect(await bot.stop()).toEqual({ code: 0, signal: null });
      // With no bot running, the note is written directly under the store lock.
      const direct = await runCli(['note', TRIGGER, 'second', 'thought', '--user', 'ann'], { env });
      expect(direct.code, direct.stderr).toBe(0);
      expect(direct.stdout).toMatch(/^note recorded on .* for ann as event #\d+\n$/);
    },
  );
});
