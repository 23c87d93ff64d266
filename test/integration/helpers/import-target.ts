/**
 * Where the `reprise import …` integration tests file to, set up once for all of them: the
 * GitHub REST fake, a bare catalog remote seeded with `files`, and the env that points the CLI
 * at both (a fresh data dir each). `close()` ends both.
 */
import { startGitHubFake, type GitHubFake } from '../../fakes/github-fake.js';
import { makeGitRemote, type GitRemote } from '../../helpers/git-remote.js';
import { makeTmpDir } from './spawn-bot.js';

export interface ImportTarget {
  fake: GitHubFake;
  remote: GitRemote;
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startImportTarget(files: Record<string, string>): Promise<ImportTarget> {
  const fake = await startGitHubFake();
  const remote = makeGitRemote(files);
  return {
    fake,
    remote,
    env: {
      REPRISE_DATA_DIR: makeTmpDir(),
      GITHUB_TOKEN: 'test-token',
      REPRISE_GITHUB_REPO: fake.repo,
      REPRISE_GITHUB_API_URL: fake.url,
      REPRISE_CATALOG_GIT_URL: remote.bare,
    },
    close: async () => {
      await fake.close();
      remote.cleanup();
    },
  };
}
