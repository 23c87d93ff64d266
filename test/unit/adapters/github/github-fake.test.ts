import { afterEach, describe, expect, it } from 'vitest';
import { Octokit } from '@octokit/rest';
import { startGitHubFake, type GitHubFake } from '../../../fakes/github-fake.js';

let fake: GitHubFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('the GitHub REST fake speaks what Octokit calls', () => {
  it('paginates with a Link header, records requests and refuses a bad token', async () => {
    fake = await startGitHubFake({ defaultPerPage: 2 });
    for (let i = 0; i < 5; i++) fake.addPull({ title: `PR ${i}`, head: `b${i}` });
    const ok = new Octokit({ auth: 'test-token', baseUrl: fake.url });
    const all = await ok.paginate(ok.rest.pulls.list, { owner: 'acme', repo: 'kb', state: 'open' });
    expect(all.map((p) => p.number)).toEqual([5, 4, 3, 2, 1]);
    expect(fake.requests.filter((r) => r.path === '/repos/acme/kb/pulls')).toHaveLength(3);
    expect(fake.writes()).toEqual([]);
    const bad = new Octokit({ auth: 'nope', baseUrl: fake.url });
    await expect(bad.rest.repos.get({ owner: 'acme', repo: 'kb' })).rejects.toMatchObject({ status: 401 });
  });

  it('creates PRs, comments and labels; scripted failures are consumed in order', async () => {
    fake = await startGitHubFake();
    const o = new Octokit({ auth: 'test-token', baseUrl: fake.url });
    fake.fail({ status: 500, method: 'POST', path: '/pulls' });
    await expect(o.rest.pulls.create({ owner: 'acme', repo: 'kb', title: 'KB: x', head: 'reprise/kb/x', base: 'main', body: 'b' })).rejects.toMatchObject({
      status: 500,
    });
    const pr = await o.rest.pulls.create({ owner: 'acme', repo: 'kb', title: 'KB: x', head: 'reprise/kb/x', base: 'main', body: 'b' });
    await o.rest.issues.addLabels({ owner: 'acme', repo: 'kb', issue_number: pr.data.number, labels: ['reprise'] });
    await o.rest.issues.createComment({ owner: 'acme', repo: 'kb', issue_number: pr.data.number, body: 'hi' });
    expect(fake.pulls()[0]).toMatchObject({ title: 'KB: x', labels: ['reprise'] });
    expect(fake.commentsOn(pr.data.number).map((c) => c.body)).toEqual(['hi']);
    expect(fake.writes().map((w) => `${w.method} ${w.status}`)).toEqual(['POST 500', 'POST 201', 'POST 200', 'POST 201']);
  });
});
