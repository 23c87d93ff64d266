/**
 * Draft branches on the catalog remote (SPEC §10: branches go through git, pull requests
 * through the forge API). A work clone of its own — never the clone the catalog is served
 * from — branches off the remote's default branch, adds one file, commits as the bot and
 * pushes. Operations are serialised: one work tree, one draft at a time.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import type { DraftBranchPort, DraftFile } from '../../ports/forge.js';
import type { Logger } from '../../ports/logger.js';
import { maskUrl, redactText, urlSecrets } from '../../core/redact.js';

export interface GitDraftsOptions {
  /** The catalog remote (https, ssh, or a path / file:// URL). */
  remoteUrl: string;
  /** Where the work clone lives (created when missing). */
  workDir: string;
  /** Branch drafts start from; the remote's default branch (its HEAD) when absent. */
  baseBranch?: string;
  /** Sent as HTTP basic auth (`x-access-token`) on https remotes, never written to disk. */
  token?: string;
  author?: { name: string; email: string };
  logger: Logger;
}

const DEFAULT_AUTHOR = { name: 'Reprise', email: 'reprise-bot@users.noreply.github.com' };

/** A git failure, with the remote named and any credential stripped from the text. */
export class GitDraftError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GitDraftError';
  }
}

export class GitDrafts implements DraftBranchPort {
  readonly #opts: GitDraftsOptions;
  readonly #author: { name: string; email: string };
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: GitDraftsOptions) {
    this.#opts = opts;
    this.#author = opts.author ?? DEFAULT_AUTHOR;
  }

  #git(baseDir?: string): SimpleGit {
    const config: string[] = [];
    if (this.#opts.token && /^https:/i.test(this.#opts.remoteUrl)) {
      config.push(`http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${this.#opts.token}`).toString('base64')}`);
    }
    return simpleGit({ ...(baseDir ? { baseDir } : {}), config, maxConcurrentProcesses: 1 });
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #fail(what: string, err: unknown): GitDraftError {
    const raw = err instanceof Error ? err.message : String(err);
    const text = redactText(raw, urlSecrets(this.#opts.remoteUrl)).split('\n').filter(Boolean).slice(0, 3).join(' / ');
    return new GitDraftError(`git could not ${what} (${maskUrl(this.#opts.remoteUrl)}): ${text}`, { cause: err });
  }

  /** The work clone, fetched; returns the branch drafts start from. */
  async #prepare(): Promise<{ git: SimpleGit; base: string }> {
    const dir = this.#opts.workDir;
    const exists = await stat(join(dir, '.git')).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await mkdir(dirname(dir), { recursive: true });
      await this.#git()
        .clone(this.#opts.remoteUrl, dir, ['--no-checkout'])
        .catch((err: unknown) => {
          throw this.#fail('clone the catalog remote', err);
        });
    }
    const git = this.#git(dir);
    await git.fetch(['origin', '--prune']).catch((err: unknown) => {
      throw this.#fail('fetch from the catalog remote', err);
    });
    let base = this.#opts.baseBranch;
    if (!base) {
      const head = await git.raw(['ls-remote', '--symref', 'origin', 'HEAD']).catch((err: unknown) => {
        throw this.#fail('read the remote default branch', err);
      });
      base = /^ref: refs\/heads\/(\S+)\s+HEAD/m.exec(head)?.[1] ?? 'main';
    }
    return { git, base };
  }

  /** Pushes `file` on a new branch off the base; returns the commit. */
  push(file: DraftFile): Promise<{ branch: string; commit: string; base: string }> {
    return this.#serial(async () => {
      const files = [{ path: file.path, content: file.content }, ...(file.more ?? [])].map((f) => ({
        rel: normalize(f.path),
        path: f.path,
        content: f.content,
      }));
      for (const { rel, path } of files)
        if (rel.startsWith('..') || rel.startsWith(sep) || rel.includes(`${sep}..${sep}`) || rel.split(sep).includes('.git'))
          throw new GitDraftError(`refusing draft path ${path}: it leaves the catalog`);
      const rel = files.length === 1 ? files[0]!.rel : `${files.length} files`;
      if (!/^[A-Za-z0-9._/-]+$/.test(file.branch) || file.branch.includes('..')) throw new GitDraftError(`refusing branch name ${file.branch}`);
      const { git, base } = await this.#prepare();
      try {
        await git.raw(['checkout', '--force', '-B', file.branch, `origin/${base}`]);
        await git.raw(['clean', '-fdx']);
        for (const f of files) {
          const abs = join(this.#opts.workDir, f.rel);
          await mkdir(dirname(abs), { recursive: true });
          await writeFile(abs, f.content, 'utf8');
        }
        await git.add(files.map((f) => f.rel));
        await git.raw(['-c', `user.name=${this.#author.name}`, '-c', `user.email=${this.#author.email}`, 'commit', '--no-verify', '-m', file.message]);
      } catch (err) {
        throw this.#fail(`prepare branch ${file.branch} from origin/${base}`, err);
      }
      const commit = (await git.revparse(['HEAD'])).trim();
      // The bot owns reprise/* branches: a retry replaces what an interrupted attempt pushed.
      await git.push(['--force', 'origin', `${file.branch}:refs/heads/${file.branch}`]).catch((err: unknown) => {
        throw this.#fail(`push branch ${file.branch}`, err);
      });
      this.#opts.logger.info({ branch: file.branch, path: rel, commit }, 'draft branch pushed');
      return { branch: file.branch, commit, base };
    });
  }

  /** The file at `path` on the remote's `branch` (the base when absent); undefined when either is missing. */
  read(path: string, branch?: string): Promise<string | undefined> {
    return this.#serial(async () => {
      const rel = normalize(path);
      if (rel.startsWith('..') || rel.startsWith(sep) || rel.split(sep).includes('.git'))
        throw new GitDraftError(`refusing draft path ${path}: it leaves the catalog`);
      if (branch !== undefined && (!/^[A-Za-z0-9._/-]+$/.test(branch) || branch.includes('..'))) throw new GitDraftError(`refusing branch name ${branch}`);
      const { git, base } = await this.#prepare();
      const ref = `origin/${branch ?? base}`;
      const known = await git.raw(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).catch(() => '');
      if (known.trim() === '') return undefined;
      // `git show` fails for a path the ref does not have: that is "no such file", not an error.
      return git.show([`${ref}:${rel.split(sep).join('/')}`]).catch(() => undefined);
    });
  }

  /** True when the remote has `branch`. */
  async branchExists(branch: string): Promise<boolean> {
    const out = await this.#git()
      .listRemote(['--heads', this.#opts.remoteUrl, `refs/heads/${branch}`])
      .catch((err: unknown) => {
        throw this.#fail('list remote branches', err);
      });
    return out.trim() !== '';
  }
}
