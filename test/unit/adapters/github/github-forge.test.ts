import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { GitHubForge } from '../../../../src/adapters/github/github-forge.js';
import { ForgeError } from '../../../../src/ports/forge.js';
import { silentLogger } from '../../../../src/ports/logger.js';
import { startGitHubFake, type GitHubFake } from '../../../fakes/github-fake.js';
import { recordingLogger, type LogLine } from '../../../fakes/slack-recording-logger.js';

let fake: GitHubFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const NOW = new Date('2026-06-01T12:00:00Z');

/**
 * A forge on the fake whose retries and write spacing cost a millisecond at most; `waits` are
 * the rate-limit waits it chose to take in place, on its injected clock.
 */
function forge(
  f: GitHubFake,
  extra: Partial<ConstructorParameters<typeof GitHubForge>[0]> = {},
): { forge: GitHubForge; waits: () => number[]; logs: LogLine[] } {
  const logs: LogLine[] = [];
  const g = new GitHubForge({
    repo: 'acme/kb',
    token: 'test-token',
    baseUrl: f.url,
    logger: recordingLogger(logs),
    delayUnitMs: 1,
    writeSpacingMs: 0,
    now: () => NOW,
    ...extra,
  });
  const waits = (): number[] => logs.filter((l) => /waiting it out/.test(l.msg ?? '')).map((l) => l.fields['retryInMs'] as number);
  return { forge: g, waits, logs };
}

describe('GitHubForge against the REST fake', () => {
  it('reads access, opens a labelled PR on the default branch, comments, lists every page', async () => {
    fake = await startGitHubFake({ defaultPerPage: 2, defaultBranch: 'trunk' });
    const { forge: g } = forge(fake);
    expect(await g.access()).toEqual({ repo: 'acme/kb', defaultBranch: 'trunk', pull: true, push: true });
    for (let i = 0; i < 120; i++) fake.addPull({ title: `old ${i}`, head: `h${i}`, state: i % 2 ? 'closed' : 'open', merged: i % 4 === 1 });
    const pr = await g.createPullRequest({ title: 'KB: disk full', body: 'body', head: 'reprise/kb/x', labels: ['reprise', 'kb-draft'] });
    expect(pr).toMatchObject({ title: 'KB: disk full', base: 'trunk', head: 'reprise/kb/x', state: 'open', merged: false, labels: ['reprise', 'kb-draft'] });
    expect(fake.items.get(pr.number)?.labels).toEqual(['reprise', 'kb-draft']);
    await g.comment(pr.number, 'same again');
    expect((await g.listComments(pr.number)).map((c) => c.body)).toEqual(['same again']);
    const open = await g.listPullRequests('open');
    expect(open).toHaveLength(61);
    expect(open[0]!.number).toBe(pr.number);
    const closed = await g.listPullRequests('closed');
    expect(closed.filter((p) => p.merged)).toHaveLength(30);
    // 121 pull requests at 100 per page: two pages.
    expect(await g.listPullRequests('all')).toHaveLength(121);
    expect(
      fake.requests.filter((r) => r.method === 'GET' && r.path === '/repos/acme/kb/pulls' && r.query.state === 'all').map((r) => r.query.page ?? '1'),
    ).toEqual(['1', '2']);
  });

  it('lists issues without the pull requests the issues API mixes in', async () => {
    fake = await startGitHubFake();
    fake.addPull({ title: 'a PR', head: 'x', labels: ['knowledge-gap'] });
    const { forge: g } = forge(fake);
    const created = await g.createIssue({ title: 'gap', body: 'b', labels: ['knowledge-gap'] });
    expect((await g.listIssues('open', ['knowledge-gap'])).map((i) => i.number)).toEqual([created.number]);
  });

  it('retries a 500 with backoff and a rate limit until its reset, then succeeds', async () => {
    fake = await startGitHubFake();
    const f = forge(fake);
    fake.fail({ status: 500, path: '/repos/acme/kb' });
    const reset = Math.floor(NOW.getTime() / 1000) + 20;
    fake.fail({
      status: 403,
      path: '/repos/acme/kb',
      message: 'API rate limit exceeded for installation',
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
    });
    fake.fail({ status: 429, path: '/repos/acme/kb', message: 'You have exceeded a secondary rate limit', headers: { 'retry-after': '3' } });
    expect((await f.forge.access()).push).toBe(true);
    // Until the reset, then the secondary limit's retry-after, each plus a second, on the forge's clock.
    expect(f.waits()).toEqual([21_000, 4_000]);
    expect(fake.requests.map((r) => r.status)).toEqual([500, 403, 429, 200]);
  });

  it('gives up after the attempts bound with a retryable ForgeError, and hands back a far reset as retryAt', async () => {
    fake = await startGitHubFake();
    const f = forge(fake, { maxAttempts: 3 });
    const g = f.forge;
    fake.fail({ status: 502, times: 5 });
    const err = await g.listPullRequests('open').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForgeError);
    expect(err).toMatchObject({ retryable: true, status: 502 });
    expect(fake.requests).toHaveLength(3);

    const reset = Math.floor(NOW.getTime() / 1000) + 3600;
    fake.fail({ status: 403, times: 5, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } });
    const limited = await g.comment(1, 'x').catch((e: unknown) => e);
    expect(limited).toMatchObject({ retryable: true, status: 403 });
    expect((limited as ForgeError).retryAt?.getTime()).toBe(reset * 1000);
    expect((limited as ForgeError).message).toMatch(/rate limit/);
    // An hour off is past maxWaitMs: not waited for in place, so one rate-limited request.
    expect(f.waits()).toEqual([]);
    expect(fake.requests.filter((r) => r.status === 403)).toHaveLength(1);
  });

  it('hands back a plain 429 as retryable at its retry-after, without a retry in place', async () => {
    fake = await startGitHubFake();
    const f = forge(fake);
    fake.fail({ status: 429, path: '/repos/acme/kb', headers: { 'retry-after': '30' } });
    const err = await f.forge.access().catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: true, status: 429 });
    expect((err as ForgeError).retryAt?.getTime()).toBe(NOW.getTime() + 30_000);
    expect(fake.requests).toHaveLength(1);
  });

  it('turns credentials, permission and missing-repo errors into non-retryable errors that say how to fix them', async () => {
    fake = await startGitHubFake();
    const bad = forge(fake, { token: 'expired' }).forge;
    await expect(bad.access()).rejects.toMatchObject({ retryable: false, status: 401, message: expect.stringMatching(/GITHUB_TOKEN/) });
    const missing = forge(fake, { repo: 'acme/nope' }).forge;
    await expect(missing.access()).rejects.toMatchObject({ retryable: false, status: 404, message: expect.stringMatching(/REPRISE_GITHUB_REPO/) });
    fake.setPermissions({ pull: true, push: false });
    const { forge: g } = forge(fake);
    expect((await g.access()).push).toBe(false);
    await expect(g.createIssue({ title: 't', body: 'b' })).rejects.toMatchObject({
      retryable: false,
      status: 403,
      message: expect.stringMatching(/write access/),
    });
    expect(() => new GitHubForge({ repo: 'not a repo', token: 't', logger: silentLogger })).toThrow(/owner\/name/);
    expect(() => new GitHubForge({ repo: 'a/b', logger: silentLogger })).toThrow(/GITHUB_TOKEN/);
  });

  it('authenticates as a GitHub App: a signed JWT buys an installation token, reused until it nears expiry', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    fake = await startGitHubFake({ app: { appId: '4242', installationId: 7, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() } });
    const app = { appId: '4242', installationId: 7, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    const g = new GitHubForge({ repo: 'acme/kb', app, baseUrl: fake.url, logger: silentLogger, writeSpacingMs: 0 });
    await g.access();
    await g.listPullRequests('open');
    const exchanges = fake.requests.filter((r) => r.path === '/app/installations/7/access_tokens');
    expect(exchanges).toHaveLength(1);
    expect(fake.requests.filter((r) => r.path.startsWith('/repos/')).every((r) => r.authorization === 'token ghs_fake_1')).toBe(true);
    // A key that is not the App's is refused by the forge.
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const wrong = new GitHubForge({ repo: 'acme/kb', app: { ...app, privateKey: other }, baseUrl: fake.url, logger: silentLogger });
    await expect(wrong.access()).rejects.toMatchObject({ retryable: false, status: 401 });
  });

  it('talks to GitHub Enterprise under its /api/v3 prefix, pages included', async () => {
    fake = await startGitHubFake({ apiPrefix: '/api/v3', defaultPerPage: 2 });
    for (let i = 0; i < 150; i++) fake.addPull({ title: `p${i}`, head: `h${i}` });
    const g = new GitHubForge({ repo: 'acme/kb', token: 'test-token', baseUrl: `${fake.url}/api/v3/`, logger: silentLogger });
    expect(await g.listPullRequests('open')).toHaveLength(150);
    expect(fake.requests.map((r) => r.path)).toEqual(['/repos/acme/kb/pulls', '/repos/acme/kb/pulls']);
  });
});
