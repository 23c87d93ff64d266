/**
 * Real git repositories on disk for sync tests: a bare "remote" and a work clone that
 * commits and pushes to it, as a human merging a PR would.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const GIT_ENV = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.org',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.org',
  GIT_CONFIG_NOSYSTEM: '1',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    env: GIT_ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** An Incident entry for `KubePodCrashLooping`-like alerts on one workload. */
export function incidentEntry(o: { title: string; resource: string; alert: string; cause?: string; status?: string }): string {
  return [
    '---',
    'type: Incident',
    `title: ${o.title}`,
    `description: ${o.title}.`,
    `resource: ${o.resource}`,
    `alerts: [${o.alert}]`,
    'timestamp: 2026-01-10',
    ...(o.status ? [`status: ${o.status}`] : []),
    '---',
    '## Symptom',
    '',
    `${o.title}.`,
    '',
    '## Cause',
    '',
    o.cause ?? 'A bad rollout.',
    '',
    '## Resolution',
    '',
    'Roll back the deployment.',
    '',
  ].join('\n');
}

export interface GitRemote {
  root: string;
  /** The bare repository (the remote's URL is this path). */
  bare: string;
  /** A work clone that pushes to it. */
  work: string;
  /** Writes files (path → content; null deletes), commits and pushes; returns the new HEAD. */
  push(files: Record<string, string | null>, message?: string, links?: Record<string, string>): string;
  head(): string;
  cleanup(): void;
}

/** A bare remote on `main` with one first commit of `files`. */
export function makeGitRemote(files: Record<string, string>): GitRemote {
  const root = mkdtempSync(join(tmpdir(), 'reprise-git-'));
  const bare = join(root, 'remote.git');
  const work = join(root, 'work');
  mkdirSync(bare);
  git(bare, 'init', '--bare', '--quiet');
  git(root, 'clone', '--quiet', bare, work);
  git(work, 'checkout', '--quiet', '-B', 'main');
  const apply = (f: Record<string, string | null>, links: Record<string, string> = {}): void => {
    for (const [p, content] of Object.entries(f)) {
      const abs = join(work, p);
      if (content === null) rmSync(abs, { force: true });
      else {
        mkdirSync(dirname(abs), { recursive: true });
        writeFileSync(abs, content);
      }
    }
    for (const [p, target] of Object.entries(links)) {
      mkdirSync(dirname(join(work, p)), { recursive: true });
      symlinkSync(target, join(work, p));
    }
  };
  const push = (f: Record<string, string | null>, message = 'change', links?: Record<string, string>): string => {
    apply(f, links);
    git(work, 'add', '-A');
    git(work, 'commit', '--quiet', '--allow-empty', '-m', message);
    git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    return git(work, 'rev-parse', 'HEAD');
  };
  push(files, 'first');
  return { root, bare, work, push, head: () => git(bare, 'rev-parse', 'main'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
