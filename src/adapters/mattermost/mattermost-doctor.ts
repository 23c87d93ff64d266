/**
 * `reprise doctor`'s Mattermost line: the token (`GET /users/me`), the channel (found by id or
 * `team/name`, and the bot a member of it), and the WebSocket (an authentication challenge
 * answered by `hello`). Each step bounded by `timeoutMs`; the token is never printed.
 */
import WebSocket from 'ws';
import { MattermostApi, MattermostHttpError, MATTERMOST_ID } from './mattermost-api.js';

export interface MattermostCheck {
  status: 'ok' | 'fail';
  detail: string;
  fix?: string;
}

const why = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export async function checkMattermost(opts: { url: string; token: string; channel: string; timeoutMs: number }): Promise<MattermostCheck> {
  const api = new MattermostApi({ baseUrl: opts.url, token: opts.token, timeoutMs: opts.timeoutMs });
  const hide = (s: string): string => s.split(opts.token).join('***');
  let me: { id: string; username: string };
  try {
    me = await api.me();
  } catch (err) {
    if (err instanceof MattermostHttpError && err.status === 401)
      return {
        status: 'fail',
        detail: 'users/me: 401 token refused',
        fix: "set transport.mattermost.token (MATTERMOST_TOKEN) to the bot account's access token",
      };
    return { status: 'fail', detail: `cannot reach ${opts.url}: ${hide(why(err))}`, fix: 'check transport.mattermost.url (MATTERMOST_URL) and the network' };
  }
  let channelId = opts.channel;
  try {
    if (!MATTERMOST_ID.test(opts.channel)) {
      const [team = '', name = ''] = opts.channel.split('/');
      channelId = (await api.channelByName(team, name)).id;
    }
    if (!(await api.isMember(channelId, me.id)))
      return {
        status: 'fail',
        detail: `users/me ok (@${me.username}); not a member of ${opts.channel}`,
        fix: `add @${me.username} to the team and to ${opts.channel} (/invite @${me.username})`,
      };
  } catch (err) {
    return {
      status: 'fail',
      detail: `users/me ok (@${me.username}); channel ${opts.channel}: ${hide(why(err))}`,
      fix: 'set transport.mattermost.channel (MATTERMOST_CHANNEL) to a channel id or team-name/channel-name the bot can see',
    };
  }
  const ws = await handshake(api.websocketUrl, opts.token, opts.timeoutMs);
  if (ws !== 'hello')
    return {
      status: 'fail',
      detail: `users/me ok (@${me.username}); member of ${opts.channel}; WebSocket: ${hide(ws)}`,
      fix: 'let WebSocket upgrades through to /api/v4/websocket (proxy: Upgrade and Connection headers)',
    };
  return { status: 'ok', detail: `users/me ok (@${me.username}); member of ${opts.channel}; WebSocket hello` };
}

/** `hello`, or what went wrong. */
function handshake(url: string, token: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { handshakeTimeout: timeoutMs });
    const done = (r: string): void => {
      clearTimeout(timer);
      ws.terminate();
      resolve(r);
    };
    const timer = setTimeout(() => done(`no hello within ${timeoutMs} ms`), timeoutMs);
    ws.on('open', () => ws.send(JSON.stringify({ seq: 1, action: 'authentication_challenge', data: { token } })));
    ws.on('message', (raw) => {
      try {
        const m = JSON.parse(String(raw)) as { event?: unknown; status?: unknown };
        if (m.event === 'hello') done('hello');
        else if (m.status === 'FAIL') done('authentication challenge refused');
      } catch {
        done('a message that is not JSON');
      }
    });
    ws.on('unexpected-response', (_req, res) => done(`upgrade refused: HTTP ${res.statusCode}`));
    ws.on('error', (err) => done(err.message));
    ws.on('close', () => done('closed before hello'));
  });
}
