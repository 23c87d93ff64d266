/**
 * Mattermost's optional ingress through `reprise serve` (with `server.public_url`): the card's
 * buttons carry an HMAC'd context and a click with a forged one is refused; the `/reprise` slash
 * command is taken only with its token (compared in constant time) and answered on the server's
 * response_url. Without a public URL there is no route and no button (mattermost-e2e).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMattermostFake, type FakePost, type MattermostFake } from '../fakes/mattermost-server.js';
import { crashLoopPayload, postAlert, request } from './helpers/alerts.js';
import { eventsOf } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const SLASH_TOKEN = 'mm-slash-9f2c4e7a1b3d5f60';
let fake: MattermostFake;
let dataDir: string;
let bot: BotProcess;
let card: FakePost;

beforeAll(async () => {
  fake = await startMattermostFake();
  dataDir = makeTmpDir();
  bot = await spawnBot({
    dataDir,
    env: {
      MATTERMOST_URL: fake.url,
      MATTERMOST_TOKEN: fake.botToken,
      MATTERMOST_CHANNEL: fake.channels.incidents,
      MATTERMOST_SLASH_TOKEN: SLASH_TOKEN,
      REPRISE_PUBLIC_URL: 'https://reprise.example.org',
    },
  });
  await bot.waitForLog((l) => l.msg === 'mattermost: WebSocket connected', 15_000);
  expect((await postAlert(bot.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
  card = await waitFor(() => fake.roots(fake.channels.incidents)[0], 'the card');
}, 60_000);

afterAll(async () => {
  await cleanup();
  await fake?.close();
});

interface Button {
  id: string;
  name: string;
  integration: { url: string; context: Record<string, string> };
}
const buttons = (p: FakePost): Button[] => ((p.props['attachments'] as Array<{ actions: Button[] }> | undefined) ?? []).flatMap((a) => a.actions);
const click = (context: Record<string, unknown>, user = fake.users.alice.id) =>
  request(bot.url, {
    path: '/mattermost/actions',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user_id: user, user_name: 'alice', channel_id: fake.channels.incidents, post_id: card.id, trigger_id: 'tr1', context }),
  });
const slash = (fields: Record<string, string>) =>
  request(bot.url, {
    path: '/mattermost/command',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });

describe('Mattermost ingress (public URL configured)', () => {
  it('puts the controls on the card as buttons pointing at the public URL', () => {
    expect(buttons(card).map((b) => b.name)).toEqual(['👍 Accurate', '👎 Off-base', '👀 On it', '🔕 Silence 4h']);
    for (const b of buttons(card)) expect(b.integration.url).toBe('https://reprise.example.org/mattermost/actions');
  });

  it('takes a click whose context the bot made, and refuses a forged or altered one', async () => {
    const down = buttons(card).find((b) => b.name.includes('Off-base'))!;
    expect((await click({ ...down.integration.context, action: 'silence' })).status).toBe(401);
    expect((await click({ ...down.integration.context, sig: 'AAAA' })).status).toBe(401);
    expect((await click({ action: 'vote_down', controls: down.integration.context['controls'] })).status).toBe(401);
    expect((await request(bot.url, { path: '/mattermost/actions', headers: { 'content-type': 'application/json' }, body: '{nope' })).status).toBe(400);
    const ok = await click(down.integration.context);
    expect(ok.status).toBe(200);
    const [vote] = await eventsOf(dataDir, 'feedback', 1);
    expect(vote).toMatchObject({ vote: 'down', user: `mattermost:${fake.users.alice.id}` });
  });

  it('takes /reprise only with its token, and answers on the server response_url', async () => {
    const base = {
      user_id: fake.users.bob.id,
      user_name: 'bob',
      channel_id: fake.channels.incidents,
      trigger_id: 'trig-1',
      response_url: `${fake.url}/hooks/commands/abc123`,
      text: 'help',
    };
    expect((await slash({ ...base, token: 'wrong' })).status).toBe(401);
    expect((await slash({ ...base, token: SLASH_TOKEN, response_url: 'https://evil.example/hook' })).status).toBe(400);
    expect((await slash({ ...base, token: SLASH_TOKEN })).status).toBe(200);
    const answer = await waitFor(() => fake.responses[0], 'the answer on the response_url');
    expect(answer.path).toBe('/hooks/commands/abc123');
    expect(answer.body['response_type']).toBe('ephemeral');
    expect(String(answer.body['text'])).toMatch(/reprise/i);
    expect(fake.responses).toHaveLength(1);
  });
});
