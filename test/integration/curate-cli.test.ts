/**
 * `reprise curate` end to end (issue 6 item 6): the real CLI and Octokit against the GitHub
 * REST fake. Dry run lists what it would do and makes no write call (the fake's record);
 * `--apply` acts; a second `--apply` does nothing; `curate log` prints the audit chain. Once
 * with no bot (the CLI takes the store), once through a running `reprise serve`.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { marker } from '../../src/core/curate/sweep-markers.js';
import { startGitHubFake, type GitHubFake } from '../fakes/github-fake.js';
import { incidentEntry, makeGitRemote, type GitRemote } from '../helpers/git-remote.js';
import { cleanup, makeTmpDir, runCli, spawnBot } from './helpers/spawn-bot.js';

let fake: GitHubFake | undefined;
let remote: GitRemote | undefined;
afterEach(async () => {
  await cleanup();
  await fake?.close();
  fake = undefined;
  remote?.cleanup();
  remote = undefined;
});

const DAY = 86_400_000;

async function seeded() {
  fake = await startGitHubFake();
  const f = fake;
  const old = new Date(Date.now() - 90 * DAY).toISOString();
  const a = f.addPull({
    title: 'KB: checkout-api crash loop after the cache change',
    body: `draft\n\n${marker('dup', 'fpA')}`,
    head: 'reprise/kb/a',
    labels: ['reprise'],
  });
  const b = f.addPull({ title: 'KB: checkout api restarts', body: `draft\n\n${marker('dup', 'fpA')}`, head: 'reprise/kb/b', labels: ['reprise'] });
  const stale = f.addPull({
    title: 'KB: ingress 502',
    body: `draft\n\n${marker('dup', 'fpB')}`,
    head: 'reprise/kb/c',
    labels: ['reprise'],
    createdAt: old,
    updatedAt: old,
  });
  const human = f.addPull({ title: 'Fix a typo', body: 'typo', head: 'feature/typo', createdAt: old, updatedAt: old });
  // A forge needs the catalog remote its drafts are pushed to.
  remote = makeGitRemote({
    'incidents/web.md': incidentEntry({ title: 'web pods crash after the cache change', resource: 'prod/web', alert: 'KubePodCrashLooping' }),
  });
  const url = remote.bare;
  return {
    f,
    a,
    b,
    stale,
    human,
    env: (dir: string) => ({
      REPRISE_DATA_DIR: dir,
      GITHUB_TOKEN: 'test-token',
      REPRISE_GITHUB_REPO: f.repo,
      REPRISE_GITHUB_API_URL: f.url,
      REPRISE_CATALOG_GIT_URL: url,
    }),
  };
}

describe('reprise curate', () => {
  it('dry run writes nothing and lists the plan; --apply acts; a second --apply does nothing; curate log shows it all', { timeout: 90_000 }, async () => {
    const { f, a, b, stale, human, env } = await seeded();
    const dir = makeTmpDir();

    const dry = await runCli(['curate'], { env: env(dir) });
    expect(dry.code, dry.stderr).toBe(0);
    expect(f.writes()).toEqual([]);
    expect(dry.stdout).toContain(`would close #${b.number} as a duplicate of #${a.number}`);
    expect(dry.stdout).toContain(`would close #${stale.number}: no activity for 90 days`);
    expect(dry.stdout).toMatch(/2 action\(s\) planned \(dry run: nothing was written\)/);
    expect(dry.stdout).toContain('retire/revalidate skipped');

    const applied = await runCli(['curate', '--apply', '--json'], { env: env(dir) });
    expect(applied.code, applied.stderr).toBe(0);
    const report = JSON.parse(applied.stdout) as { mode: string; actions: Array<{ kind: string; outcome: string }> };
    expect(report.mode).toBe('apply');
    expect(report.actions.map((x) => `${x.kind}:${x.outcome}`).sort()).toEqual(['dedup:done', 'stale:done']);
    expect(f.items.get(b.number)!.state).toBe('closed');
    expect(f.items.get(stale.number)!.state).toBe('closed');
    expect(f.items.get(a.number)!.state).toBe('open');
    expect(f.items.get(human.number)!.state).toBe('open');
    const writes = f.writes().length;
    expect(writes).toBeGreaterThan(0);

    const again = await runCli(['curate', '--apply'], { env: env(dir) });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to do');
    expect(f.writes().length).toBe(writes);

    const log = await runCli(['curate', 'log', '--verify'], { env: env(dir) });
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toMatch(new RegExp(`dry-run dedup #${b.number} planned`));
    expect(log.stdout).toMatch(new RegExp(`apply dedup #${b.number} done: close #${b.number}`));
    expect(log.stdout).toMatch(/apply run - done: 0 action\(s\) taken/);
    expect(log.stderr).toContain('audit chain verified');
  });

  it('goes through the running bot; without a forge it says how to configure one', { timeout: 90_000 }, async () => {
    const { f, b, env } = await seeded();
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, env: env(dir) });
    const dry = await runCli(['curate', '--json'], { env: env(dir) });
    expect(dry.code, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as { mode: string; actions: Array<{ target: string }> }).actions.map((x) => x.target)).toContain(`#${b.number}`);
    expect(f.writes()).toEqual([]);
    const applied = await runCli(['curate', '--apply'], { env: env(dir) });
    expect(applied.code, applied.stderr).toBe(0);
    expect(f.items.get(b.number)!.state).toBe('closed');
    // The log is readable while the bot runs.
    const log = await runCli(['curate', 'log', '--json'], { env: env(dir) });
    expect(
      log.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { outcome: string }).outcome),
    ).toContain('done');
    await bot.stop();

    const noForge = await runCli(['curate'], { env: { REPRISE_DATA_DIR: join(dir, 'other') } });
    expect(noForge.code).toBe(1);
    expect(noForge.stderr).toMatch(/no forge configured: set the .forge. config block, or GITHUB_TOKEN and REPRISE_GITHUB_REPO/);
  });
});
