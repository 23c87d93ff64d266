/** `reprise doctor`'s Mattermost line against the stand-in: token, channel membership, WebSocket. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMattermost } from '../../src/adapters/mattermost/mattermost-doctor.js';
import { doctor } from '../../src/cli/doctor.js';
import type { CliIO } from '../../src/runtime/cli-io.js';
import { startMattermostFake, type MattermostFake } from '../fakes/mattermost-server.js';
import { cleanup, makeTmpDir, REPO_ROOT } from './helpers/spawn-bot.js';

let fake: MattermostFake;
beforeAll(async () => {
  fake = await startMattermostFake();
});
afterAll(async () => {
  await fake.close();
  await cleanup();
});

const check = (over: { token?: string; channel?: string; url?: string } = {}) =>
  checkMattermost({ url: over.url ?? fake.url, token: over.token ?? fake.botToken, channel: over.channel ?? `${fake.team}/incidents`, timeoutMs: 3000 });

describe('doctor: Mattermost', () => {
  it('passes with a valid token, a channel the bot is in and a WebSocket that says hello', async () => {
    expect(await check()).toEqual({ status: 'ok', detail: 'users/me ok (@reprise); member of ops/incidents; WebSocket hello' });
    expect((await check({ channel: fake.channels.payments })).status).toBe('ok');
  });

  it('says what to fix: a refused token, a channel the bot is not in, one it cannot find, a WebSocket refused', async () => {
    expect(await check({ token: 'wrong-token' })).toMatchObject({
      status: 'fail',
      detail: 'users/me: 401 token refused',
      fix: expect.stringContaining('MATTERMOST_TOKEN'),
    });
    expect(await check({ channel: 'ops/elsewhere' })).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('not a member of ops/elsewhere'),
      fix: expect.stringContaining('/invite @reprise'),
    });
    expect(await check({ channel: 'ops/nope' })).toMatchObject({ status: 'fail', fix: expect.stringContaining('MATTERMOST_CHANNEL') });
    fake.setBehaviour({ refuseSockets: true });
    expect(await check()).toMatchObject({ status: 'fail', detail: expect.stringContaining('WebSocket: upgrade refused: HTTP 503') });
    fake.setBehaviour({ refuseSockets: false });
  });

  it('prints its line in `reprise doctor`, the token never shown', async () => {
    let out = '';
    const io: CliIO = {
      stdout: (t) => void (out += t),
      stderr: () => {},
      stdin: async () => '',
      env: {
        REPRISE_DATA_DIR: makeTmpDir('reprise-mm-doctor-'),
        MATTERMOST_URL: fake.url,
        MATTERMOST_TOKEN: fake.botToken,
        MATTERMOST_CHANNEL: 'ops/incidents',
      },
      cwd: REPO_ROOT,
    };
    await doctor(['--timeout', '3'], io);
    expect(out).toMatch(/^✓ mattermost: users\/me ok \(@reprise\); member of ops\/incidents; WebSocket hello$/m);
    expect(out).not.toContain(fake.botToken);
  });
});
