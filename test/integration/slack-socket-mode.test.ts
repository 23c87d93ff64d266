/**
 * Slack in Socket Mode (SLACK_APP_TOKEN: no public ingress): Bolt's SocketModeReceiver opens
 * `apps.connections.open` on the fake, holds a real WebSocket to it, and acknowledges every
 * envelope; events, commands and clicks reach the sink as the same intents as over HTTP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSlackTransport, type SlackTransport } from '../../src/adapters/slack/slack-transport.js';
import type { ChatIntent } from '../../src/core/chat/chat-types.js';
import { silentLogger } from '../../src/ports/logger.js';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { blockActionsPayload, eventEnvelope, reactionEvent, slashCommandForm } from '../fakes/slack-requests.js';
import { card } from '../unit/adapters/slack/thread-fixtures.js';

let fake: SlackFake;
let slack: SlackTransport;
const received: ChatIntent[] = [];
const BOT = 'U0REPRISE';

beforeAll(async () => {
  fake = await startSlackFake({ botUserId: BOT });
  const handle = createSlackTransport({
    botToken: fake.botToken,
    appToken: fake.appToken,
    signingSecret: 'unused-in-socket-mode',
    apiUrl: fake.apiUrl,
    defaultChannel: 'C0INCIDENTS',
    logger: silentLogger,
    retries: 0,
  });
  slack = handle.transport;
  expect(handle.mount).toBeUndefined();
  await slack.start(async (e) => {
    received.push(e);
  });
});

afterAll(async () => {
  await slack?.close();
  await fake?.close();
});

beforeEach(() => {
  received.length = 0;
});

describe('Slack Socket Mode', () => {
  it('opens the connection with the app-level token, then holds a WebSocket session', async () => {
    const [open] = fake.calls('apps.connections.open');
    expect(open?.headers.authorization).toBe(`Bearer ${fake.appToken}`);
    expect(slack.mode).toBe('socket');
    await fake.socket.waitForConnection();
    expect(fake.socket.sessions).toBe(1);
  });

  it('delivers an Events API envelope to the sink and acknowledges it', async () => {
    const ref = await slack.post({ transport: 'slack', channel: 'C0INCIDENTS' }, card(), undefined, { idempotencyKey: 'k' });
    const envelope = eventEnvelope(fake.workspace, reactionEvent({ user: 'U0ANN', reaction: '-1', channel: ref.channel, ts: ref.id, itemUser: BOT }), {
      eventId: 'Ev0SOCKET1',
    });
    const id = fake.socket.send('events_api', envelope);
    await fake.socket.waitForAck(id);
    await fake.waitFor(() => (received.length > 0 ? true : undefined));
    expect(received).toEqual([
      {
        type: 'vote',
        eventId: 'Ev0SOCKET1',
        actor: { id: 'U0ANN', via: 'slack' },
        vote: 'down',
        target: { message: { transport: 'slack', channel: ref.channel, id: ref.id } },
      },
    ]);
  });

  it('a reaction on someone else’s message is acknowledged and never reaches the sink', async () => {
    const id = fake.socket.send(
      'events_api',
      eventEnvelope(fake.workspace, reactionEvent({ user: 'U0ANN', reaction: '+1', channel: 'C0INCIDENTS', ts: '1.1', itemUser: 'U0BOB' })),
    );
    await fake.socket.waitForAck(id);
    expect(received).toEqual([]);
  });

  it('slash commands and clicks arrive as envelopes too, acknowledged', async () => {
    const cmd = fake.socket.send(
      'slash_commands',
      slashCommandForm(fake.workspace, { text: 'status', user: 'U0ANN', channel: 'C0INCIDENTS', responseUrl: fake.responseUrl(), triggerId: '9.9.t' }),
    );
    await fake.socket.waitForAck(cmd);
    const ref = await slack.post({ transport: 'slack', channel: 'C0INCIDENTS' }, card(), undefined, { idempotencyKey: 'k2' });
    const blockId = (fake.message(ref.channel, ref.id)!.blocks as Array<{ type: string; block_id?: string }>).find((b) => b.type === 'actions')!.block_id!;
    const click = fake.socket.send(
      'interactive',
      blockActionsPayload(fake.workspace, {
        user: 'U0ANN',
        channel: ref.channel,
        messageTs: ref.id,
        actionId: 'reprise_silence',
        blockId,
        selected: '1h',
        responseUrl: fake.responseUrl(),
      }),
    );
    await fake.socket.waitForAck(click);
    expect(received).toMatchObject([
      { type: 'command', eventId: 'command:9.9.t', name: 'status', args: '', replyTo: { kind: 'response_url' } },
      { type: 'silence', duration: '1h', target: { controlsId: 'inc-42', message: { channel: ref.channel, id: ref.id } } },
    ]);
  });

  it('reconnects when Slack asks it to, and keeps delivering', async () => {
    fake.socket.disconnect('refresh_requested');
    await fake.waitFor(() => (fake.socket.sessions >= 2 && fake.socket.connected() ? true : undefined), 15_000);
    expect(fake.calls('apps.connections.open').length).toBeGreaterThanOrEqual(2);
    const id = fake.socket.send(
      'slash_commands',
      slashCommandForm(fake.workspace, { text: 'help', user: 'U0ANN', channel: 'C0INCIDENTS', responseUrl: fake.responseUrl() }),
    );
    await fake.socket.waitForAck(id);
    expect(received.map((e) => e.type)).toEqual(['command']);
  });

  it('a rejected app token fails start with how to fix it', async () => {
    const bad = createSlackTransport({
      botToken: fake.botToken,
      appToken: 'xapp-revoked',
      apiUrl: fake.apiUrl,
      defaultChannel: 'C0INCIDENTS',
      logger: silentLogger,
      retries: 0,
    }).transport;
    await expect(bad.start(async () => {})).rejects.toThrow(/SLACK_APP_TOKEN.*invalid_auth.*connections:write/);
    await bad.close();
  });

  it('Slack unreachable at start: keeps trying in the background and connects once it is back', async () => {
    // Only the transport under test may reconnect from here on.
    await slack.close();
    const sessions = fake.socket.sessions;
    await fake.down();
    const later = createSlackTransport({
      botToken: fake.botToken,
      appToken: fake.appToken,
      apiUrl: fake.apiUrl,
      defaultChannel: 'C0INCIDENTS',
      logger: silentLogger,
      retries: 0,
      reconnectMs: 100,
    }).transport;
    try {
      await later.start(async () => {});
    } finally {
      await fake.up();
    }
    await fake.waitFor(() => (fake.socket.sessions > sessions && fake.socket.connected() ? true : undefined), 5000);
    await later.close();
  });
});
