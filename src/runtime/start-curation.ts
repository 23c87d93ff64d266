/**
 * Wires file-time curation when a forge is configured (SPEC §10): the GitHub adapter, the git
 * drafts clone, and the curation worker over the ledger. Without a forge: undefined, and notes
 * stay in the ledger as before.
 */
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Intent } from '../core/bot/intent.js';
import { CurationWorker } from '../core/curate/curation-worker.js';
import type { Ledger } from '../core/ledger/ledger.js';
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { maskUrl } from '../core/redact.js';
import type { PeopleDirectory } from '../ports/people.js';

export interface StartedCuration {
  /** Makes the curation worker for the loop's entrance (see `buildLoop`). */
  worker(handle: (intent: Intent) => Promise<unknown>): CurationWorker;
  repo: string;
  /** The quality bar's confidence floor (file-time curation of Findings). */
  minConfidence: number;
}

export async function startCuration(
  config: Config,
  deps: { ledger: Pick<Ledger, 'read'>; catalog: () => CatalogSnapshot; clock: Clock; logger: Logger; people?: PeopleDirectory },
): Promise<StartedCuration | undefined> {
  const f = config.forge;
  const remote = config.catalog.git?.url;
  if (!f || !remote) return undefined;
  // Loaded only with a forge: Octokit and simple-git are no part of a bot that files nothing.
  const [{ GitDrafts }, { GitHubForge }] = await Promise.all([import('../adapters/git/git-drafts.js'), import('../adapters/github/github-forge.js')]);
  const log = deps.logger.child({ component: 'curation' });
  const app =
    f.app_id && f.app_private_key && f.app_installation_id
      ? { appId: f.app_id, privateKey: f.app_private_key.replace(/\\n/g, '\n'), installationId: f.app_installation_id }
      : undefined;
  const forge = new GitHubForge({
    repo: f.repo,
    ...(f.token ? { token: f.token } : {}),
    ...(app ? { app } : {}),
    baseUrl: f.api_url,
    logger: log.child({ component: 'github' }),
    now: () => deps.clock.now(),
  });
  const drafts = new GitDrafts({
    remoteUrl: remote,
    workDir: f.work_dir ?? join(config.store.data_dir, 'forge-work'),
    ...(config.catalog.git?.branch ? { baseBranch: config.catalog.git.branch } : {}),
    ...(f.token ? { token: f.token } : {}),
    logger: log.child({ component: 'git-drafts' }),
  });
  const worker = (handle: (intent: Intent) => Promise<unknown>): CurationWorker =>
    new CurationWorker({
      ledger: deps.ledger,
      forge,
      drafts,
      catalog: deps.catalog,
      clock: deps.clock,
      logger: log,
      handle,
      ...(deps.people ? { people: deps.people } : {}),
      options: {
        labels: f.labels,
        dupScore: f.dup_score,
        writesPerHour: f.writes_per_hour,
        baseDelayMs: f.retry_base_ms,
        maxDelayMs: f.retry_max_ms,
        maxAgeMs: f.max_age_ms,
        ...(config.catalog.git?.path ? { catalogPath: config.catalog.git.path } : {}),
      },
    });
  log.info({ repo: forge.repo, remote: maskUrl(remote) }, 'curation on: findings and notes are filed as pull requests');
  return { worker, repo: forge.repo, minConfidence: f.min_confidence };
}
