import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { simpleGit } from 'simple-git';
import { GitDrafts, GitDraftError } from '../../../../src/adapters/git/git-drafts.js';
import { silentLogger } from '../../../../src/ports/logger.js';
import { createBareCatalogRepo, type BareCatalogRepo } from '../../../fakes/bare-catalog-repo.js';

let remote: BareCatalogRepo | undefined;
let work: string | undefined;
afterEach(async () => {
  await remote?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  remote = undefined;
  work = undefined;
});

describe('GitDrafts against a bare repository on disk', () => {
  it('pushes one file on a new branch off the remote default branch, as the bot', async () => {
    remote = await createBareCatalogRepo({ 'incidents/old.md': 'old\n' });
    work = await mkdtemp(join(tmpdir(), 'reprise-work-'));
    const drafts = new GitDrafts({ remoteUrl: remote.url, workDir: join(work, 'clone'), logger: silentLogger });
    const r = await drafts.push({
      branch: 'reprise/kb/disk-full-1a2b3c4d',
      path: 'incidents/disk-full-1a2b3c4d.md',
      content: '---\ntype: Incident\n---\n',
      message: 'KB: disk full',
    });
    expect(r.base).toBe('main');
    expect(await remote.branches()).toContain('reprise/kb/disk-full-1a2b3c4d');
    expect(await remote.show('reprise/kb/disk-full-1a2b3c4d', 'incidents/disk-full-1a2b3c4d.md')).toBe('---\ntype: Incident\n---\n');
    // Branched off main: main's file is there, main itself is untouched.
    expect(await remote.show('reprise/kb/disk-full-1a2b3c4d', 'incidents/old.md')).toBe('old\n');
    expect(await remote.show('main', 'incidents/disk-full-1a2b3c4d.md')).toBeUndefined();
    const log = await simpleGit(remote.url).log(['reprise/kb/disk-full-1a2b3c4d', '-1']);
    expect(log.latest).toMatchObject({ author_name: 'Reprise', message: 'KB: disk full', hash: r.commit });
    expect(await drafts.branchExists('reprise/kb/disk-full-1a2b3c4d')).toBe(true);
    expect(await drafts.branchExists('reprise/kb/nope')).toBe(false);
  });

  it('a second draft starts from the current main, not from the previous draft', async () => {
    remote = await createBareCatalogRepo();
    work = await mkdtemp(join(tmpdir(), 'reprise-work-'));
    const drafts = new GitDrafts({ remoteUrl: remote.url, workDir: join(work, 'clone'), logger: silentLogger });
    await drafts.push({ branch: 'reprise/kb/a-11111111', path: 'incidents/a-11111111.md', content: 'a', message: 'a' });
    await remote.commit({ 'concepts/human.md': 'h' });
    await drafts.push({ branch: 'reprise/kb/b-22222222', path: 'concepts/b-22222222.md', content: 'b', message: 'b' });
    expect(await remote.show('reprise/kb/b-22222222', 'incidents/a-11111111.md')).toBeUndefined();
    expect(await remote.show('reprise/kb/b-22222222', 'concepts/human.md')).toBe('h');
    // A retry of the same branch replaces what was pushed before.
    await drafts.push({ branch: 'reprise/kb/a-11111111', path: 'incidents/a-11111111.md', content: 'a2', message: 'a again' });
    expect(await remote.show('reprise/kb/a-11111111', 'incidents/a-11111111.md')).toBe('a2');
  });

  it('refuses paths outside the catalog and reports an unreachable remote without credentials', async () => {
    work = await mkdtemp(join(tmpdir(), 'reprise-work-'));
    remote = await createBareCatalogRepo();
    const drafts = new GitDrafts({ remoteUrl: remote.url, workDir: join(work, 'clone'), logger: silentLogger });
    await expect(drafts.push({ branch: 'reprise/kb/x', path: '../escape.md', content: 'x', message: 'x' })).rejects.toThrow(/leaves the catalog/);
    await expect(drafts.push({ branch: 'reprise/kb/x', path: '.git/hooks/post-commit', content: 'x', message: 'x' })).rejects.toThrow(/leaves the catalog/);
    await expect(drafts.push({ branch: '--upload-pack=x', path: 'a.md', content: 'x', message: 'x' })).rejects.toThrow(/branch name/);
    const gone = new GitDrafts({ remoteUrl: 'https://user:s3cret@127.0.0.1:9/none.git', workDir: join(work, 'other'), logger: silentLogger });
    const err = await gone.push({ branch: 'reprise/kb/x', path: 'a.md', content: 'x', message: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitDraftError);
    expect(String((err as Error).message)).not.toContain('s3cret');
  });
});
