/**
 * The forge on GitHub (`@octokit/rest`): pull requests, comments, labels and issues of one
 * repository. Auth is a token or a GitHub App installation (`@octokit/auth-app` signs the JWT and
 * caches the installation token); `baseUrl` points at GitHub Enterprise (or the test fake).
 * Octokit's own plugins carry the traffic rules: `plugin-retry` retries 5xx and network errors
 * with backoff, `plugin-throttling` spaces writes as GitHub asks and waits out a rate limit
 * (primary: until `x-ratelimit-reset`; secondary: `retry-after`) when the wait is short enough.
 * What still fails becomes a ForgeError saying whether a later attempt may work (with the reset
 * as `retryAt`) and how to fix it when not.
 */
import { createAppAuth } from '@octokit/auth-app';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import Bottleneck from 'bottleneck';
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
import { rateLimitRetryAt, toForgeError } from './github-errors.js';

/** A GitHub App installation: the App signs a JWT that buys installation tokens. */
export interface AppCredentials {
  appId: string;
  /** PEM private key of the App. */
  privateKey: string;
  installationId: number;
}

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
  /**
   * Milliseconds per unit of the waits Octokit's plugins take: the retry plugin waits n² units
   * after the n-th failure, the throttling plugin the seconds GitHub names (default 1000; tests
   * shrink it so that a retry costs a millisecond).
   */
  delayUnitMs?: number;
  /** The longest rate-limit wait taken in place; a later reset is handed back as `retryAt`. */
  maxWaitMs?: number;
  /**
   * Least time between two content-creating requests: GitHub's advice against secondary rate
   * limits is 1 s, and 3 s for those that notify people (which get 3× this). 0 in tests.
   */
  writeSpacingMs?: number;
  now?: () => Date;
}

/**
 * What the innermost hook needs. The throttling plugin reads a rate limit's reset against the
 * system clock; this hook notes each wait on the injected clock (by request), so the choice
 * between waiting in place and handing the work back follows the clock the caller gave. It also
 * logs the failures Octokit's retry plugin is about to try again, which that plugin does not.
 */
interface ForgeHookOptions {
  now: () => Date;
  waitNotes: WeakMap<object, number>;
  log: Logger;
  retries: number;
}

/** Octokit with our note-and-log hook innermost, then throttling, then retry outermost. */
const ForgeOctokit = Octokit.plugin(
  (octokit, options) => {
    const own = options['reprise'] as ForgeHookOptions | undefined;
    if (own) {
      octokit.hook.error('request', (error, req) => {
        const at = rateLimitRetryAt(error, own.now());
        if (at instanceof Date) own.waitNotes.set(req, Math.max(0, at.getTime() - own.now().getTime()) + 1000);
        const status = (error as { status?: number }).status;
        const attempt = Number((req.request as { retryCount?: number } | undefined)?.retryCount ?? 0) + 1;
        if (at === 'not_rate_limited' && (status === undefined || status >= 500) && attempt <= own.retries)
          own.log.warn({ method: req.method, url: req.url, status, attempt }, 'GitHub request failed; retrying');
        throw error;
      });
    }
    return {};
  },
  throttling,
  retry,
);

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
  readonly #octokit: InstanceType<typeof ForgeOctokit>;
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
    const retries = Math.max(1, opts.maxAttempts ?? 4) - 1;
    const maxWait = opts.maxWaitMs ?? 60_000;
    const unit = opts.delayUnitMs ?? 1000;
    const spacing = opts.writeSpacingMs ?? 1000;
    const waitNotes = new WeakMap<object, number>();
    const onLimit =
      (kind: string) =>
      (retryAfter: number, options: { method?: string; url?: string }, _octokit: unknown, retryCount: number): boolean => {
        const waitMs = waitNotes.get(options) ?? retryAfter * 1000;
        // Tried enough, or too far off: the caller keeps the work and comes back at the reset.
        if (retryCount >= retries || waitMs > maxWait) return false;
        log.warn({ method: options.method, url: options.url, attempt: retryCount + 1, retryInMs: waitMs }, `GitHub ${kind}; waiting it out in place`);
        return true;
      };
    this.#octokit = new ForgeOctokit({
      baseUrl: (opts.baseUrl ?? 'https://api.github.com').replace(/\/+$/, ''),
      userAgent: 'reprise',
      ...(opts.app
        ? { authStrategy: createAppAuth, auth: { appId: opts.app.appId, privateKey: opts.app.privateKey, installationId: opts.app.installationId } }
        : { auth: opts.token }),
      reprise: { now: this.#now, waitNotes, log, retries } satisfies ForgeHookOptions,
      // Rate limits (403, 429) are the throttling plugin's alone.
      retry: { retries, retryAfterBaseValue: unit, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
      throttle: {
        retryAfterBaseValue: unit,
        // This forge's own spacing, not Octokit's process-wide groups.
        write: new Bottleneck.Group({ maxConcurrent: 1, minTime: spacing }),
        notifications: new Bottleneck.Group({ maxConcurrent: 1, minTime: spacing * 3 }),
        onRateLimit: onLimit('rate limit'),
        onSecondaryRateLimit: onLimit('secondary rate limit'),
      },
      log: {
        debug: () => {},
        info: () => {},
        warn: (m: string) => log.debug({ octokit: m }, 'octokit warning'),
        error: (m: string) => log.debug({ octokit: m }, 'octokit error'),
      },
    });
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
