/**
 * Where `reprise import postmortems` and `reprise import pagerduty` file to, one way for both:
 * the catalog their drafts are deduplicated against, the forge's pull requests (what was filed
 * before), and the catalog remote their branches are pushed to.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import { GitDrafts } from '../adapters/git/git-drafts.js';
import type { Config } from '../config/schema.js';
import type { ForgePort, ForgePullRequest } from '../ports/forge.js';
import type { Logger } from '../ports/logger.js';
import { servedCatalogFolder } from './served-catalog.js';

/**
 * The catalog to dedup against: `--catalog`, else the one the bot serves; with catalog.git set
 * and no clone of the bot's yet (no bot ever ran here), a shallow clone of the remote's branch.
 */
export async function dedupCatalog(config: Config, given: string | undefined): Promise<{ dir: string; cleanup: () => Promise<void> } | string> {
  const served = servedCatalogFolder(config, given);
  if (typeof served !== 'string') return { dir: served.dir, cleanup: async () => {} };
  const g = config.catalog.git;
  if (given !== undefined || !g) return served;
  const root = await mkdtemp(join(tmpdir(), 'reprise-import-catalog-'));
  const token = config.forge?.token;
  try {
    const git = simpleGit(token ? { config: [`http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`] } : {});
    await git.clone(g.url, root, ['--depth', '1', '--quiet', '--branch', g.branch]);
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    return `could not read the catalog to dedup against from catalog.git (${(err instanceof Error ? err.message : String(err)).split('\n')[0]}); pass --catalog DIR`;
  }
  return { dir: join(root, ...(g.path ? g.path.split('/') : [])), cleanup: () => rm(root, { recursive: true, force: true }) };
}

/**
 * Every PR on the forge, open and closed: what an import filed before. A failure stops a real run
 * (it could file twice: the message says nothing was filed); a dry run goes on, warned.
 */
export async function filedBefore(
  forge: ForgePort | undefined,
  dryRun: boolean,
  say: (line: string) => void,
): Promise<{ pullRequests: ForgePullRequest[] } | { error: string }> {
  if (!forge) return { pullRequests: [] };
  try {
    return { pullRequests: await forge.listPullRequests('all') };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    if (!dryRun) return { error: `could not list the forge's pull requests (nothing was filed): ${why}` };
    say(`warning: could not list the forge's pull requests, so the dry run cannot tell what was filed before: ${why}`);
    return { pullRequests: [] };
  }
}

/** The branch pusher of an import: the catalog remote, its own work folder under the data dir. */
export function importDrafts(config: Config, git: NonNullable<Config['catalog']['git']>, logger: Logger): GitDrafts {
  const token = config.forge?.token;
  return new GitDrafts({
    remoteUrl: git.url,
    baseBranch: git.branch,
    workDir: join(config.store.data_dir, 'import-drafts'),
    ...(token ? { token } : {}),
    logger,
  });
}
