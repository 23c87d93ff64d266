/**
 * `reprise import postmortems` end to end (issue 31 item 3): the real CLI, git and Octokit
 * against a bare catalog remote and the GitHub REST fake. A dry run lists one draft per readable
 * postmortem with its resolution and writes nothing; the real run files them in batches, each a
 * branch on the remote and a PR; a second run files nothing; what cannot be read is listed.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, incidentEntry, makeGitRemote, type GitRemote } from '../helpers/git-remote.js';
import { startImportTarget, type ImportTarget } from './helpers/import-target.js';
import { cleanup, makeTmpDir, runCli } from './helpers/spawn-bot.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/postmortems');
let target: ImportTarget | undefined;
let remote: GitRemote | undefined;
afterEach(async () => {
  await cleanup();
  await target?.close();
  target = undefined;
  remote?.cleanup();
  remote = undefined;
});

interface Listed {
  mode: string;
  drafts: { file: string; path: string; type: string; resolution: string; resource?: string; alerts: string[]; pr?: { number: number } }[];
  skipped: { file: string; reason: string }[];
  unreadable: { file: string; reason: string }[];
  pullRequests: { number: number; files: string[] }[];
}

describe('reprise import postmortems', () => {
  it('dry run lists a draft per postmortem with its resolution; the run files batches of PRs; a second run files none', { timeout: 120_000 }, async () => {
    target = await startImportTarget({
      'incidents/web.md': incidentEntry({ title: 'web pods crash after the cache change', resource: 'prod/web', alert: 'KubePodCrashLooping' }),
    });
    const { fake, env } = target;
    const bare = target.remote.bare;
    const pms = join(makeTmpDir(), 'postmortems');
    cpSync(FIXTURES, pms, { recursive: true });

    const dry = await runCli(['import', 'postmortems', pms, '--dry-run', '--json'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(fake.writes()).toEqual([]);
    const listed = JSON.parse(dry.stdout) as Listed;
    expect(listed.mode).toBe('dry-run');
    expect(listed.drafts.map((d) => d.file).sort()).toEqual([
      'good/2024-03-05-checkout-crashloop.md',
      'good/disk-full-logs.md',
      'good/gdoc-export-ingress.md',
      'good/incident-2023-11-db-lag.md',
      'good/numbered-cert-expiry.md',
    ]);
    const disk = listed.drafts.find((d) => d.file === 'good/disk-full-logs.md');
    expect(disk).toMatchObject({ type: 'Incident', resource: 'host/logs-02', alerts: ['NodeFilesystemSpaceFillingUp'] });
    expect(disk?.resolution).toBe('Vacuumed the journal: `journalctl --vacuum-size=2G`, then restarted rsyslog.');
    expect(listed.unreadable.map((u) => u.file).sort()).toEqual([
      'bad/broken-front-matter.md',
      'bad/export.md',
      'bad/no-resolution.md',
      'bad/postmortem-template.md',
    ]);
    expect(listed.unreadable.find((u) => u.file === 'bad/no-resolution.md')?.reason).toMatch(/no Resolution \/ Mitigation section/);

    const text = await runCli(['import', 'postmortems', pms, '--dry-run'], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('+ good/disk-full-logs.md → incidents/');
    expect(text.stdout).toContain('    Resolution: Vacuumed the journal: `journalctl --vacuum-size=2G`, then restarted rsyslog.');
    expect(text.stdout).toContain('✗ bad/export.md: binary content');
    expect(text.stdout).toMatch(/would file 5 entries in 1 pull request \(0 already known, 4 not imported\); run without --dry-run to file\n$/);

    const run = await runCli(['import', 'postmortems', pms, '--batch', '3', '--json'], { env });
    expect(run.code, run.stderr).toBe(0);
    const filed = JSON.parse(run.stdout) as Listed;
    expect(filed.pullRequests.map((p) => p.files.length)).toEqual([3, 2]);
    expect(run.stderr).toMatch(/\[1\/2\] filed PR #\d+ with 3 entries/);
    const pulls = fake.pulls();
    expect(pulls).toHaveLength(2);
    expect(pulls.every((p) => p.labels.includes('postmortem-import'))).toBe(true);
    // Each PR's branch is on the catalog remote with its entries, ready for a human to merge.
    for (const p of filed.pullRequests) {
      const head = pulls.find((x) => x.number === p.number)!.head;
      const tree = git(bare, 'ls-tree', '-r', '--name-only', head).split('\n');
      const paths = filed.drafts.filter((d) => d.pr?.number === p.number).map((d) => d.path);
      expect(paths).toHaveLength(p.files.length);
      for (const path of paths) expect(tree).toContain(path);
    }
    const body = pulls.map((p) => p.body).join('\n');
    expect(body).not.toMatch(/@channel|<b>/);

    const writes = fake.writes().length;
    const again = await runCli(['import', 'postmortems', pms, '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout) as Listed;
    expect(second.drafts).toEqual([]);
    expect(second.skipped).toHaveLength(5);
    expect(second.skipped.every((s) => /^already imported in PR #\d+ \(open\)$/.test(s.reason))).toBe(true);
    expect(fake.writes()).toHaveLength(writes);
  });

  it('says what filing needs, and refuses what is not a folder of postmortems', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const none = await runCli(['import', 'postmortems', FIXTURES], { env: { REPRISE_DATA_DIR: dir } });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/filing needs a forge .* and the catalog's git remote .*; run with --dry-run to see the drafts without filing/);
    const missing = await runCli(['import', 'postmortems', join(dir, 'nope'), '--dry-run'], { env: { REPRISE_DATA_DIR: dir } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/is not a folder \(or a git URL\) of postmortems/);
    const dry = await runCli(['import', 'postmortems', FIXTURES, '--dry-run', '--batch', '0'], { env: { REPRISE_DATA_DIR: dir } });
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(/--batch must be a whole number from 1 to 50/);
    const unknown = await runCli(['import', 'jira'], { env: { REPRISE_DATA_DIR: dir } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown source "jira"/);
  });

  it('reads postmortems from a git URL', { timeout: 60_000 }, async () => {
    remote = makeGitRemote({ 'pm/disk.md': (await import('node:fs')).readFileSync(join(FIXTURES, 'good/disk-full-logs.md'), 'utf8') });
    const dir = makeTmpDir();
    const r = await runCli(['import', 'postmortems', `file://${remote.bare}`, '--dry-run', '--json'], { env: { REPRISE_DATA_DIR: dir } });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as Listed).drafts.map((d) => [d.file, d.resource])).toEqual([['pm/disk.md', 'host/logs-02']]);
  });
});
