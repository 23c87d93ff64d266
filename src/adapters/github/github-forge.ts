/**
 * The forge on GitHub (`@octokit/rest`): pull requests, comments, labels and issues of one
 * repository. Auth is a token or a GitHub App installation; `baseUrl` points at GitHub
 * Enterprise (or the test fake). Every request — each page of a list too — is retried with
 * backoff on 5xx and network errors, and on a rate limit after the time GitHub names
 * (`retry-after`, `x-ratelimit-reset`), within bounds; what still fails becomes a ForgeError
 * saying whether a later attempt may work and how to fix it when not.
 */
import { Octokit } from '@octokit/rest';
import {
  ForgeError,
  type ForgeAccess,
  type ForgeComment,
  type ForgeIssue,
  type ForgePort,
  type ForgePullRequest,
  type NewIssue,
  type NewPullRequest,
} from '../../ports/forge.js';
import type { Logger } from '../../ports/logger.js';
import { InstallationTokens, type AppCredentials } from './app-token.js';
import { isRetryable, rateLimitRetryAt, toForgeError } from './github-errors.js';

export interface GitHubForgeOptions {
  /** `owner/name`. */
  repo: string;
  token?: string;
  app?: AppCredentials;
  /** API root (default https://api.github.com; GHE: https://ghe.example.com/api/v3). */
  baseUrl?: string;
  logger: Logger;
  /** Attempts per request, the first included (default 4). */
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** The longest rate-limit wait taken in place; a later reset is handed back as `retryAt`. */
  maxWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => Date;
}

type Pull = {
  number: number;
  html_url: string;
  title: string;
  body?: string | null;
  state: string;
  merged?: boolean;
  merged_at?: string | null;
  labels: Array<string | { name?: string }>;
  head: { ref: string };
  base: { ref: string };
  created_at: string;
  updated_at: string;
  closed_at?: string | null;
};
type Issue = {
  number: number;
  html_url: string;
  title: string;
  body?: string | null;
  state: string;
  labels: Array<string | { name?: string }>;
  created_at: string;
  pull_request?: unknown;
};

const labelNames = (l: Array<string | { name?: string }>): string[] => l.map((x) => (typeof x === 'string' ? x : (x.name ?? ''))).filter(Boolean);

function toPull(p: Pull): ForgePullRequest {
  return {
    number: p.number,
    url: p.html_url,
    title: p.title,
    body: p.body ?? '',
    state: p.state === 'closed' ? 'closed' : 'open',
    merged: p.merged ?? (p.merged_at !== null && p.merged_at !== undefined),
    labels: labelNames(p.labels),
    head: p.head.ref,
    base: p.base.ref,
    createdAt: p.created_at,
    updatedAt: p.updated_at,
    ...(p.closed_at ? { closedAt: p.closed_at } : {}),
  };
}

function toIssue(i: Issue): ForgeIssue {
  return {
    number: i.number,
    url: i.html_url,
    title: i.title,
    body: i.body ?? '',
    state: i.state === 'closed' ? 'closed' : 'open',
    labels: labelNames(i.labels),
    createdAt: i.created_at,
  };
}

export class GitHubForge implements ForgePort {
  readonly repo: string;
  readonly #owner: string;
  readonly #name: string;
  readonly #octokit: Octokit;
  readonly #log: Logger;
  readonly #now: () => Date;
  #defaultBranch: string | undefined;

  constructor(opts: GitHubForgeOptions) {
    const m = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(opts.repo.trim());
    if (!m) throw new ForgeError(`the forge repository must be owner/name, got ${JSON.stringify(opts.repo)} (REPRISE_GITHUB_REPO)`, { retryable: false });
    if (!opts.token && !opts.app)
      throw new ForgeError('no GitHub credentials: set GITHUB_TOKEN, or a GitHub App id, private key and installation id', { retryable: false });
    this.repo = `${m[1]}/${m[2]}`;
    this.#owner = m[1]!;
    this.#name = m[2]!;
    this.#log = opts.logger;
    this.#now = opts.now ?? (() => new Date());
    const log = this.#log;
    this.#octokit = new Octokit({
      baseUrl: (opts.baseUrl ?? 'https://api.github.com').replace(/\/+$/, ''),
      userAgent: 'reprise',
      ...(opts.token ? { auth: opts.token } : {}),
      log: {
        debug: () => {},
        info: () => {},
        warn: (m: string) => log.debug({ octokit: m }, 'octokit warning'),
        error: (m: string) => log.debug({ octokit: m }, 'octokit error'),
      },
    });
    const tokens = opts.app ? new InstallationTokens(opts.app, (jwt, id) => this.#exchange(jwt, id), this.#now) : undefined;
    const attempts = Math.max(1, opts.maxAttempts ?? 4);
    const base = opts.baseDelayMs ?? 1000;
    const maxDelay = opts.maxDelayMs ?? 30_000;
    const maxWait = opts.maxWaitMs ?? 60_000;
    const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    this.#octokit.hook.wrap('request', async (request, options) => {
      for (let n = 1; ; n++) {
        try {
          if (tokens && !String(options.url).startsWith('/app/')) options.headers = { ...options.headers, authorization: `token ${await tokens.get()}` };
          return await request(options);
        } catch (err) {
          const status = (err as { status?: number }).status;
          if (tokens && status === 401 && n === 1) {
            tokens.invalidate();
            continue;
          }
          const now = this.#now();
          if (!isRetryable(err, now) || n >= attempts) throw err;
          const limited = rateLimitRetryAt(err, now);
          let wait = Math.min(maxDelay, base * 2 ** (n - 1));
          if (limited instanceof Date) {
            wait = Math.max(0, limited.getTime() - now.getTime()) + 1000;
            if (wait > maxWait) throw err; // too far off: the caller keeps the work and comes back then
          }
          log.warn({ method: options.method, url: options.url, status, attempt: n, retryInMs: wait }, 'GitHub request failed; retrying');
          await sleep(wait);
        }
      }
    });
  }

  async #exchange(jwt: string, installationId: number): Promise<{ token: string; expiresAt: string }> {
    const r = await this.#octokit.request('POST /app/installations/{installation_id}/access_tokens', {
      installation_id: installationId,
      headers: { authorization: `bearer ${jwt}` },
    });
    return { token: r.data.token, expiresAt: r.data.expires_at };
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toForgeError(err, this.repo, what, this.#now());
    }
  }

  get #ref(): { owner: string; repo: string } {
    return { owner: this.#owner, repo: this.#name };
  }

  async access(): Promise<ForgeAccess> {
    const r = await this.#call('read the repository', () => this.#octokit.rest.repos.get(this.#ref));
    this.#defaultBranch = r.data.default_branch;
    return { repo: this.repo, defaultBranch: r.data.default_branch, pull: r.data.permissions?.pull ?? true, push: r.data.permissions?.push ?? false };
  }

  async listPullRequests(state: 'open' | 'closed' | 'all'): Promise<ForgePullRequest[]> {
    const list = await this.#call(`list ${state} pull requests`, () =>
      this.#octokit.paginate(this.#octokit.rest.pulls.list, { ...this.#ref, state, per_page: 100, sort: 'created', direction: 'desc' }),
    );
    return (list as unknown as Pull[]).map(toPull);
  }

  async getPullRequest(number: number): Promise<ForgePullRequest> {
    const r = await this.#call(`read pull request #${number}`, () => this.#octokit.rest.pulls.get({ ...this.#ref, pull_number: number }));
    return toPull(r.data as unknown as Pull);
  }

  async createPullRequest(pr: NewPullRequest): Promise<ForgePullRequest> {
    const base = pr.base ?? this.#defaultBranch ?? (await this.access()).defaultBranch;
    const r = await this.#call(`open a pull request from ${pr.head}`, () =>
      this.#octokit.rest.pulls.create({ ...this.#ref, title: pr.title, body: pr.body, head: pr.head, base }),
    );
    const created = toPull(r.data as unknown as Pull);
    if (pr.labels && pr.labels.length > 0) {
      await this.addLabels(created.number, pr.labels);
      created.labels = [...new Set([...created.labels, ...pr.labels])];
    }
    return created;
  }

  async listComments(number: number): Promise<ForgeComment[]> {
    const list = await this.#call(`list comments of #${number}`, () =>
      this.#octokit.paginate(this.#octokit.rest.issues.listComments, { ...this.#ref, issue_number: number, per_page: 100 }),
    );
    return (list as Array<{ id: number; html_url: string; body?: string; created_at: string }>).map((c) => ({
      id: c.id,
      url: c.html_url,
      body: c.body ?? '',
      createdAt: c.created_at,
    }));
  }

  async comment(number: number, body: string): Promise<ForgeComment> {
    const r = await this.#call(`comment on #${number}`, () => this.#octokit.rest.issues.createComment({ ...this.#ref, issue_number: number, body }));
    return { id: r.data.id, url: r.data.html_url, body: r.data.body ?? '', createdAt: r.data.created_at };
  }

  async addLabels(number: number, labels: readonly string[]): Promise<void> {
    await this.#call(`label #${number}`, () => this.#octokit.rest.issues.addLabels({ ...this.#ref, issue_number: number, labels: [...labels] }));
  }

  async closePullRequest(number: number): Promise<void> {
    await this.#call(`close pull request #${number}`, () => this.#octokit.rest.pulls.update({ ...this.#ref, pull_number: number, state: 'closed' }));
  }

  async listIssues(state: 'open' | 'closed' | 'all', labels?: readonly string[]): Promise<ForgeIssue[]> {
    const list = await this.#call(`list ${state} issues`, () =>
      this.#octokit.paginate(this.#octokit.rest.issues.listForRepo, {
        ...this.#ref,
        state,
        per_page: 100,
        ...(labels && labels.length > 0 ? { labels: labels.join(',') } : {}),
      }),
    );
    // The issues API lists pull requests too; the port keeps them apart.
    return (list as unknown as Issue[]).filter((i) => !i.pull_request).map(toIssue);
  }

  async createIssue(issue: NewIssue): Promise<ForgeIssue> {
    const r = await this.#call('open an issue', () =>
      this.#octokit.rest.issues.create({ ...this.#ref, title: issue.title, body: issue.body, ...(issue.labels ? { labels: [...issue.labels] } : {}) }),
    );
    return toIssue(r.data as unknown as Issue);
  }
}
