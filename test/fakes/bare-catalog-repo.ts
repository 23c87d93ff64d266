/**
 * A real "remote" catalog for tests: a bare git repository in a temp dir seeded with entries on
 * `main`, plus helpers to read a branch's files the way a reviewer would and to merge a branch
 * as a human would on the forge.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { simpleGit } from 'simple-git';

export interface BareCatalogRepo {
  /** Path usable as a git remote URL. */
  url: string;
  root: string;
  /** `git show <branch>:<path>`, or undefined when absent. */
  show(branch: string, path: string): Promise<string | undefined>;
  branches(): Promise<string[]>;
  /** Fast-forward/merge `branch` into `main` and push (what the merge button does). */
  merge(branch: string): Promise<void>;
  /** Commits files on `main` (a human edit). */
  commit(files: Record<string, string>, message?: string): Promise<void>;
  cleanup(): Promise<void>;
}

export async function createBareCatalogRepo(seed: Record<string, string> = { 'README.md': '# catalog\n' }): Promise<BareCatalogRepo> {
  const root = await mkdtemp(join(tmpdir(), 'reprise-remote-'));
  const bare = join(root, 'catalog.git');
  await simpleGit().raw(['init', '--bare', '--initial-branch=main', bare]);
  const work = join(root, 'human');
  await simpleGit().clone(bare, work);
  const g = simpleGit(work);
  await g.addConfig('user.name', 'Human').addConfig('user.email', 'human@example.com');
  await g.raw(['checkout', '-B', 'main']);
  const commit = async (files: Record<string, string>, message = 'edit'): Promise<void> => {
    await g.raw(['fetch', 'origin']);
    const remoteMain = (await g.raw(['ls-remote', '--heads', 'origin', 'main'])).trim();
    if (remoteMain) await g.raw(['reset', '--hard', 'origin/main']);
    for (const [p, c] of Object.entries(files)) {
      await mkdir(dirname(join(work, p)), { recursive: true });
      await writeFile(join(work, p), c);
    }
    await g.add('.');
    await g.commit(message);
    await g.push('origin', 'main');
  };
  await commit(seed, 'seed');
  const bg = simpleGit(bare);
  return {
    url: bare,
    root,
    show: (branch, path) => bg.show([`${branch}:${path}`]).catch(() => undefined),
    branches: async () => (await bg.branchLocal()).all,
    merge: async (branch) => {
      await g.raw(['fetch', 'origin']);
      await g.raw(['reset', '--hard', 'origin/main']);
      await g.raw(['merge', '--no-ff', '-m', `Merge ${branch}`, `origin/${branch}`]);
      await g.push('origin', 'main');
    },
    commit,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
