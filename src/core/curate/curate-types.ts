/**
 * What a grooming sweep (SPEC §10, issue 6 item 6) plans and does. A plan is a list of
 * actions; each names its target, why, and the hidden marker that makes it idempotent.
 */

export type SweepActionKind = 'dedup' | 'stale' | 'suppress' | 'promote' | 'gap' | 'contested' | 'retire' | 'revalidate';

interface Base {
  kind: SweepActionKind;
  /** `#12` for a PR or issue, the entry path for a catalog entry, the trigger key for a gap. */
  target: string;
  /** One line a human reads: what would be done and why. */
  summary: string;
}

/** Comment with a back-reference, then close (dedup, stale, suppress). */
export interface CloseAction extends Base {
  kind: 'dedup' | 'stale' | 'suppress';
  pr: number;
  comment: string;
  /** Label recording that the sweep (not a human) closed it. */
  label: string;
  /** The PR it refers to (the original, the rejected one). */
  ref?: number;
}

export interface PromoteAction extends Base {
  kind: 'promote';
  pr: number;
  label: string;
  fingerprint: string;
}

export interface ContestedAction extends Base {
  kind: 'contested';
  pr: number;
  comment: string;
  triggerKey: string;
}

export interface GapAction extends Base {
  kind: 'gap';
  title: string;
  body: string;
  labels: string[];
  count: number;
}

/** A PR with a one-line frontmatter edit on a branch (retire, revalidate). */
export interface EntryAction extends Base {
  kind: 'retire' | 'revalidate';
  /** Catalog entry id (path inside the catalog). */
  entry: string;
  /** Path inside the repository (the catalog's folder + the entry id). */
  repoPath: string;
  branch: string;
  content: string;
  title: string;
  body: string;
  labels: string[];
}

export type SweepAction = CloseAction | PromoteAction | ContestedAction | GapAction | EntryAction;

export type ActionOutcome = 'planned' | 'done' | 'skipped' | 'failed';

/** One line of the audit log. */
export interface AuditRecord {
  at: string;
  /** Id of the sweep run it belongs to. */
  run: string;
  mode: 'dry-run' | 'apply';
  kind: SweepActionKind | 'run';
  target: string;
  summary: string;
  outcome: ActionOutcome;
  /** Where the result is (PR / issue / comment URL), once done. */
  url?: string;
  error?: string;
}

export interface SweepReport {
  run: string;
  mode: 'dry-run' | 'apply';
  at: string;
  actions: Array<{ kind: SweepActionKind; target: string; summary: string; outcome: ActionOutcome; url?: string; error?: string }>;
  /** Passes that could not run (a forge read failed, no git remote for entry PRs). */
  skippedPasses: Array<{ pass: string; reason: string }>;
}
