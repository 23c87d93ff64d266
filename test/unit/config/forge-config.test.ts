import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';

const cwd = '/work/here';
const parse = (text: string, env: NodeJS.ProcessEnv = {}) => parseConfigText(text, { env, cwd });
function problems(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parse(text, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems.map((p) => `${p.path}: ${p.rule}`);
  }
  throw new Error('expected a ConfigError');
}

describe('forge config', () => {
  it('is off without a repo; a stray GITHUB_TOKEN does not switch it on', () => {
    expect(parse('').forge).toBeUndefined();
    expect(parse('', { GITHUB_TOKEN: 'ghp_x' }).forge).toBeUndefined();
    expect(parse('').catalog.git).toBeUndefined();
  });

  it('turns on from the environment alone: GITHUB_TOKEN, REPRISE_GITHUB_REPO, REPRISE_CATALOG_GIT_URL, REPRISE_GITHUB_API_URL', () => {
    const cfg = parse('', {
      GITHUB_TOKEN: 'ghp_x\n',
      REPRISE_GITHUB_REPO: 'acme/runbooks',
      REPRISE_CATALOG_GIT_URL: 'https://github.com/acme/runbooks.git',
      REPRISE_GITHUB_API_URL: 'https://ghe.example.com/api/v3',
    });
    expect(cfg.forge).toMatchObject({
      repo: 'acme/runbooks',
      token: 'ghp_x',
      api_url: 'https://ghe.example.com/api/v3',
      dup_score: 8,
      min_confidence: 0.75,
      writes_per_hour: 30,
      labels: ['reprise', 'kb-draft'],
      retry_base_ms: 30_000,
      max_age_ms: 7 * 86_400_000,
    });
    expect(cfg.catalog.git).toMatchObject({ url: 'https://github.com/acme/runbooks.git', branch: 'main' });
  });

  it('says what is missing: credentials, a well-formed repo, the catalog remote, a complete App', () => {
    expect(problems('', { REPRISE_GITHUB_REPO: 'acme/runbooks' })).toEqual([
      expect.stringMatching(/^forge\.token: is required when a forge is configured \(set GITHUB_TOKEN\)/),
      expect.stringMatching(/^catalog\.git\.url: is required when a forge is configured.*REPRISE_CATALOG_GIT_URL/),
    ]);
    expect(problems('forge:\n  repo: not-a-repo\n  token: t\ncatalog:\n  git:\n    url: /tmp/x.git\n')).toEqual([
      expect.stringMatching(/^forge\.repo: must be owner\/name/),
    ]);
    expect(problems('forge:\n  repo: a/b\n  app_id: "12"\ncatalog:\n  git:\n    url: /tmp/x.git\n')).toEqual([
      expect.stringMatching(/^forge\.app_private_key: is required for GitHub App auth/),
      expect.stringMatching(/^forge\.app_installation_id: is required for GitHub App auth/),
    ]);
    const app = parse('forge:\n  repo: a/b\n  app_id: "12"\n  app_private_key: k\n  app_installation_id: 7\ncatalog:\n  git:\n    url: /tmp/x.git\n');
    expect(app.forge).toMatchObject({ app_id: '12', app_installation_id: 7 });
  });
});
