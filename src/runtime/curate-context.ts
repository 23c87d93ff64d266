/**
 * What a grooming run needs, built from config and env: the forge, the branch pusher for
 * entry PRs, the catalog's files, the sweep options. Shared by `serve` (scheduled and on
 * request through the control socket) and `reprise curate` when no bot runs.
 * The forge is the `forge` config block (or `GITHUB_TOKEN`, `REPRISE_GITHUB_REPO`,
 * `REPRISE_GITHUB_API_URL` without a config file), as for file-time curation.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GitDrafts } from '../adapters/git/git-drafts.js';
import { GitHubForge } from '../adapters/github/github-forge.js';
import type { Config } from '../config/schema.js';
import type { CurateAudit } from '../core/curate/curate-audit.js';
import type { SweepReport } from '../core/curate/curate-types.js';
import { DEFAULT_SWEEP_OPTIONS, type SweepOptions } from '../core/curate/plan-sweeps.js';
import { runSweeps, type BranchPusher } from '../core/curate/run-sweeps.js';
import type { SweepFacts } from '../core/curate/plan-sweeps.js';
import type { Entry } from '../core/types.js';
import { escapeLine } from '../core/render/escape-text.js';
import type { ForgePort } from '../ports/forge.js';
import type { Logger } from '../ports/logger.js';

/** The forge of the `forge` config block, or undefined when none is configured. */
export function forgeFromConfig(config: Config, logger: Logger): ForgePort | undefined {
  const f = config.forge;
  if (!f) return undefined;
  const app =
    f.app_id && f.app_private_key && f.app_installation_id
      ? { appId: f.app_id, privateKey: f.app_private_key.replace(/\\n/g, '\n'), installationId: f.app_installation_id }
      : undefined;
  return new GitHubForge({
    repo: f.repo,
    ...(f.token ? { token: f.token } : {}),
    ...(app ? { app } : {}),
    baseUrl: f.api_url,
    logger: logger.child({ component: 'github' }),
  });
}

/**
 * Pushes retirement / revalidation branches to the catalog remote (catalog.git), in a work
 * clone of its own (the file-time curator's is `forge.work_dir`: one clone, one writer).
 */
export function draftPusher(config: Config, logger: Logger): BranchPusher | undefined {
  const git = config.catalog.git;
  if (!git) return undefined;
  const token = config.forge?.token;
  return new GitDrafts({
    remoteUrl: git.url,
    baseBranch: git.branch,
    workDir: join(config.store.data_dir, 'curate-drafts'),
    ...(token ? { token } : {}),
    logger,
  });
}

export function sweepOptions(config: Config): Partial<SweepOptions> {
  const c = config.curate;
  return {
    staleAfterMs: c.stale_after_ms,
    titleSimilarity: c.title_similarity,
    recurrenceThreshold: c.recurrence_threshold,
    minObservations: c.min_observations,
    retirement: c.retirement,
    revalidation: c.revalidation,
    revalidateMinIntervalMs: c.revalidation_min_interval_ms,
    revalidateMaxOpen: c.revalidation_max_open,
    outcomeFloor: config.recall.outcome_floor,
    botLabels: [...new Set([...DEFAULT_SWEEP_OPTIONS.botLabels, ...(config.forge?.labels ?? []), 'operator-note'])],
  };
}

export interface CurationInput {
  config: Config;
  forge: ForgePort;
  ledger: SweepFacts['ledger'];
  entries: readonly Entry[];
  /** The catalog folder of the git clone; entry PRs need it (and catalog.git). */
  catalogRoot?: string;
  pusher?: BranchPusher;
  audit: CurateAudit;
  apply: boolean;
  logger: Logger;
  now?: Date;
}

export function runCuration(i: CurationInput): Promise<SweepReport> {
  const root = i.catalogRoot;
  return runSweeps({
    forge: i.forge,
    apply: i.apply,
    audit: i.audit,
    ...(i.pusher ? { pusher: i.pusher } : {}),
    logger: i.logger,
    options: sweepOptions(i.config),
    facts: {
      now: i.now ?? new Date(),
      ledger: i.ledger,
      entries: i.entries,
      ...(root && i.pusher
        ? { readEntry: (id: string) => readFile(join(root, id), 'utf8').catch(() => undefined), catalogPath: i.config.catalog.git?.path ?? '' }
        : {}),
    },
  });
}

/** The report as lines a human reads. */
export function formatReport(r: SweepReport): string {
  const lines: string[] = [];
  const verb = r.mode === 'apply' ? '' : 'would ';
  for (const a of r.actions) {
    const mark = a.outcome === 'done' ? '✓' : a.outcome === 'failed' ? '✗' : '·';
    lines.push(escapeLine(`${mark} ${a.kind.padEnd(10)} ${verb}${a.summary}${a.url ? ` — ${a.url}` : ''}${a.error ? ` — failed: ${a.error}` : ''}`));
  }
  for (const s of r.skippedPasses) lines.push(escapeLine(`- ${s.pass} skipped: ${s.reason}`));
  const failed = r.actions.filter((a) => a.outcome === 'failed').length;
  if (r.actions.length === 0) lines.push('nothing to do: the knowledge PRs are groomed');
  else if (r.mode === 'dry-run') lines.push(`${r.actions.length} action(s) planned (dry run: nothing was written); run \`reprise curate --apply\` to act`);
  else lines.push(`${r.actions.length - failed} action(s) done${failed ? `, ${failed} failed (skipped; the next run retries them)` : ''}`);
  return `${lines.join('\n')}\n`;
}
