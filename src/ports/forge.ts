/**
 * The forge port (SPEC §10): where drafted knowledge becomes a pull request a human merges.
 * Branches and commits go through git (the catalog remote); pull requests, comments, labels and
 * issues go through this port. Adapters (GitHub on `@octokit/rest`) translate an API to these
 * types; no provider's name appears in the domain.
 */

export interface ForgePullRequest {
  number: number;
  /** The page a human opens (html URL). */
  url: string;
  title: string;
  body: string;
  state: 'open' | 'closed';
  /** Closed by a merge (a closed, unmerged PR is a human's "no"). */
  merged: boolean;
  labels: string[];
  /** Branch the PR proposes (head ref). */
  head: string;
  /** Branch it targets (base ref). */
  base: string;
  createdAt: string;
  updatedAt: string;
  closedAt?: string;
}

export interface ForgeIssue {
  number: number;
  url: string;
  title: string;
  body: string;
  state: 'open' | 'closed';
  labels: string[];
  createdAt: string;
}

export interface ForgeComment {
  id: number;
  url: string;
  body: string;
  createdAt: string;
}

export interface NewPullRequest {
  title: string;
  body: string;
  /** The branch already pushed to the catalog remote. */
  head: string;
  /** Target branch; the adapter's default branch when absent. */
  base?: string;
  labels?: readonly string[];
}

export interface NewIssue {
  title: string;
  body: string;
  labels?: readonly string[];
}

/** What the credentials may do on the repository (for `reprise doctor` and clear errors). */
export interface ForgeAccess {
  repo: string;
  defaultBranch: string;
  pull: boolean;
  push: boolean;
}

export interface ForgePort {
  /** `owner/name`, for messages and links. */
  readonly repo: string;
  access(): Promise<ForgeAccess>;
  /** Every pull request in `state` (all pages), newest first. */
  listPullRequests(state: 'open' | 'closed' | 'all'): Promise<ForgePullRequest[]>;
  getPullRequest(number: number): Promise<ForgePullRequest>;
  createPullRequest(pr: NewPullRequest): Promise<ForgePullRequest>;
  /** Comments on a pull request or an issue (one number space on the forge), oldest first. */
  listComments(number: number): Promise<ForgeComment[]>;
  /** Comments on a pull request or an issue. */
  comment(number: number, body: string): Promise<ForgeComment>;
  addLabels(number: number, labels: readonly string[]): Promise<void>;
  /** Closes a pull request without merging it. */
  closePullRequest(number: number): Promise<void>;
  listIssues(state: 'open' | 'closed' | 'all', labels?: readonly string[]): Promise<ForgeIssue[]>;
  createIssue(issue: NewIssue): Promise<ForgeIssue>;
}

/** One file on a new branch of the catalog remote (SPEC §10: branches go through git). */
export interface DraftFile {
  branch: string;
  /** Path inside the catalog (`incidents/<slug>-<fp8>.md`). */
  path: string;
  content: string;
  /** Further files of the same commit (an import's batch of entries). */
  more?: ReadonlyArray<{ path: string; content: string }>;
  /** Commit message. */
  message: string;
}

/** Pushes draft branches to the catalog remote; the git adapter implements it. */
export interface DraftBranchPort {
  /** Creates (or replaces) `branch` off the remote's default branch with one commit adding the file (and `more`). */
  push(file: DraftFile): Promise<{ branch: string; commit: string }>;
  /**
   * The file at `path` on the remote's `branch` (its default branch when absent), freshly
   * fetched; undefined when the branch or the file is not there. What an edit of an existing
   * entry starts from.
   */
  read(path: string, branch?: string): Promise<string | undefined>;
}

/**
 * A forge call that failed after the adapter's own retries. `retryable` says whether a later
 * attempt may succeed (5xx, rate limit, network) — the caller keeps the work and tries again —
 * or not (401/403 without a rate limit, 404, 422): the caller records a skip with `message`.
 */
export class ForgeError extends Error {
  readonly status: number | undefined;
  readonly retryable: boolean;
  /** When the forge said to come back (rate-limit reset / Retry-After), if it said. */
  readonly retryAt: Date | undefined;
  constructor(message: string, opts: { status?: number; retryable: boolean; retryAt?: Date; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.name = 'ForgeError';
    this.status = opts.status;
    this.retryable = opts.retryable;
    this.retryAt = opts.retryAt;
  }
}
