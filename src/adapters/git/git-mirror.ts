/**
 * The catalog's local clone on `simple-git` (SPEC §5 "Sync"): cloned on first use, then
 * `fetch` + `reset --hard origin/<branch>` + `clean` on every update — never a merge, so a
 * force-push or a local edit can never leave the clone in a state the remote does not have.
 * Git never prompts (a missing credential is an error, not a hang) and every command has a
 * timeout. Credentials in the URL never reach a log line or an error message.
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import type { CatalogMirror, MirrorChange } from '../../ports/catalog-mirror.js';
import { maskUrl, redactText, urlSecrets } from '../../core/redact.js';

export interface GitMirrorOptions {
  url: string;
  branch: string;
  /** Folder of the clone (created by the first clone; must be empty or a clone already). */
  dir: string;
  /** A git command silent (no output) this long is killed. Default 120 s. */
  timeoutMs?: number;
}

/** Refused before git sees them: an option smuggled in as a URL or branch. */
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\.lock$)(?!\/)(?!.*\/$)[A-Za-z0-9._/-]{1,200}$/;

/** Error codes the mirror throws, for readyz and logs. */
export type GitMirrorErrorCode = 'git_bad_config' | 'git_clone_dir' | 'git_failed';

export class GitMirrorError extends Error {
  constructor(
    readonly code: GitMirrorErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'GitMirrorError';
  }
}

/** The URL as safe to show (the one redactor's URL mask): `https://***@host/…`. */
export { maskUrl };

/** Removes every trace of the URL's credentials from a text (git echoes URLs in errors). */
function scrub(text: string, url: string): string {
  return redactText(
    text.split(url).join(maskUrl(url)),
    urlSecrets(url).filter((s) => s.length >= 4),
  );
}

/** Git's own variables the operator may set for authentication; every other GIT_* is dropped. */
const KEPT_ENV = ['GIT_TERMINAL_PROMPT', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_ASKPASS', 'SSH_ASKPASS'];
/** Programs git could be told to run on our behalf (editors, pagers, diff drivers, config paths). */
const DROPPED_ENV = new Set(['editor', 'visual', 'pager', 'prefix']);

/** The environment git runs with: never prompts, no editor or pager, C locale for stable messages. */
function gitEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || DROPPED_ENV.has(k.toLowerCase())) continue;
    if (/^git_/i.test(k) && !KEPT_ENV.includes(k.toUpperCase())) continue;
    env[k] = v;
  }
  return { ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
}

export class GitMirror implements CatalogMirror {
  readonly dir: string;
  readonly remote: string;
  readonly branch: string;
  readonly #url: string;
  readonly #timeoutMs: number;

  /** @throws GitMirrorError (`git_bad_config`) for a URL or branch git would read as an option. */
  constructor(opts: GitMirrorOptions) {
    if (opts.url.trim() === '' || opts.url.startsWith('-') || /[\s\0]/.test(opts.url))
      throw new GitMirrorError('git_bad_config', `catalog.git.url ${JSON.stringify(maskUrl(opts.url))} is not a usable git remote`);
    if (/^ext::|^fd::/i.test(opts.url))
      throw new GitMirrorError('git_bad_config', 'catalog.git.url: the ext:: and fd:: transports run commands and are refused');
    if (!BRANCH.test(opts.branch)) throw new GitMirrorError('git_bad_config', `catalog.git.branch ${JSON.stringify(opts.branch)} is not a valid branch name`);
    this.dir = resolve(opts.dir);
    this.#url = opts.url;
    this.remote = maskUrl(opts.url);
    this.branch = opts.branch;
    this.#timeoutMs = opts.timeoutMs ?? 120_000;
  }

  #git(baseDir: string): SimpleGit {
    return simpleGit({
      baseDir,
      timeout: { block: this.#timeoutMs },
      allowEnvironment: KEPT_ENV,
      // The operator's own ssh command / askpass helper (never the remote's) may authenticate.
      unsafe: { allowUnsafeSshCommand: true, allowUnsafeAskPass: true },
    }).env(gitEnv());
  }

  /** Runs `fn`, turning a git failure into a GitMirrorError without credentials. */
  async #run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof GitMirrorError) throw err;
      const raw = err instanceof Error ? err.message : String(err);
      const message = scrub(raw, this.#url)
        .trim()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .slice(-4)
        .join(' | ')
        .slice(0, 600);
      throw new GitMirrorError('git_failed', `${what} failed: ${message || 'git exited with an error'}`);
    }
  }

  /** True when `dir` holds a clone of its own (its `.git`), not merely a folder inside some other repository. */
  #isClone(): boolean {
    return existsSync(join(this.dir, '.git'));
  }

  async localHead(): Promise<string | undefined> {
    if (!this.#isClone()) return undefined;
    try {
      return (await this.#git(this.dir).revparse(['--verify', 'HEAD^{commit}'])).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  async update(): Promise<string> {
    if (!this.#isClone()) return this.#clone();
    const git = this.#git(this.dir);
    const remoteRef = `refs/remotes/origin/${this.branch}`;
    await this.#run('setting the remote', async () => {
      const current = (await git.remote(['get-url', 'origin']).catch(() => undefined))?.trim();
      if (current === undefined) await git.addRemote('origin', this.#url);
      else if (current !== this.#url) await git.remote(['set-url', 'origin', this.#url]);
    });
    await this.#run(`fetching ${this.branch} from ${this.remote}`, () =>
      git.fetch(['--no-tags', '--prune', 'origin', `+refs/heads/${this.branch}:${remoteRef}`]),
    );
    await this.#run(`resetting to origin/${this.branch}`, async () => {
      await git.raw(['reset', '--hard', '--quiet', remoteRef]);
      await git.raw(['clean', '-ffdxq']);
    });
    return this.#run('reading HEAD', async () => (await git.revparse(['--verify', 'HEAD^{commit}'])).trim());
  }

  /** Clones into a sibling temp folder and renames it into place: a failed clone leaves nothing half-made. */
  async #clone(): Promise<string> {
    if (existsSync(this.dir) && readdirSync(this.dir).length > 0) {
      throw new GitMirrorError(
        'git_clone_dir',
        `${this.dir} exists, is not empty and is not a git clone; empty it, or point catalog.git.clone_dir at another folder`,
      );
    }
    const parent = dirname(this.dir);
    await mkdir(parent, { recursive: true });
    const tmp = join(parent, `.${basename(this.dir)}.clone-${process.pid}-${Date.now()}`);
    try {
      await this.#run(`cloning ${this.remote} (branch ${this.branch})`, () =>
        this.#git(parent).clone(this.#url, tmp, ['--branch', this.branch, '--single-branch', '--no-tags']),
      );
      if (existsSync(this.dir)) rmSync(this.dir, { recursive: true, force: true });
      renameSync(tmp, this.dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return this.#run('reading HEAD', async () => (await this.#git(this.dir).revparse(['--verify', 'HEAD^{commit}'])).trim());
  }

  async changes(from: string, to: string): Promise<MirrorChange[]> {
    if (!/^[0-9a-f]{7,64}$/.test(from) || !/^[0-9a-f]{7,64}$/.test(to)) throw new GitMirrorError('git_failed', 'changes: commits must be hex object names');
    const out = await this.#run('listing changed files', () =>
      this.#git(this.dir).raw(['diff', '--name-status', '--no-renames', '--no-ext-diff', '-z', from, to, '--']),
    );
    const parts = out.split('\0');
    const changes: MirrorChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const status = parts[i]!.trim();
      const path = parts[i + 1]!;
      if (status === '' || path === '') continue;
      changes.push({ status: status.charAt(0), path });
    }
    return changes;
  }
}
