/**
 * Slack, Matrix and Mattermost, built from config. Loaded only when one is configured, so a console-only
 * bot never pays for the chat SDKs.
 */
import type { Config } from '../config/schema.js';
import type { RoutedTransport } from '../core/bot/routing.js';
import type { HttpApp } from '../http/create-server.js';
import type { ChatTransport } from '../ports/chat-transport.js';
import type { NameLookup } from '../ports/people.js';
import { matrixEnabled, mattermostEnabled, slackEnabled, type SurfaceDeps } from './surface-deps.js';

export async function chatSurfaces(
  config: Config,
  deps: SurfaceDeps,
): Promise<{ transports: ChatTransport[]; routed: RoutedTransport[]; mounts: Array<(app: HttpApp) => void>; lookups: Record<string, NameLookup> }> {
  const transports: ChatTransport[] = [];
  const lookups: Record<string, NameLookup> = {};
  const routed: RoutedTransport[] = [];
  const mounts: Array<(app: HttpApp) => void> = [];
  if (matrixEnabled(config)) {
    const { createMatrixTransport } = await import('../adapters/matrix/matrix-transport.js');
    const m = config.transport.matrix;
    // Every room routing may send to is a room the bot serves (and listens to).
    const rooms = [...new Set([m.room_id!, ...m.rooms, ...config.routing.rules.flatMap((r) => (r.matrix ? [r.matrix] : []))])];
    const matrix = createMatrixTransport({
      homeserverUrl: m.homeserver_url!,
      accessToken: m.access_token!,
      rooms,
      defaultRoom: m.room_id!,
      store: deps.store,
      logger: deps.logger.child({ component: 'matrix' }),
    });
    transports.push(matrix);
    lookups['matrix'] = (id) => matrix.displayName(id);
    routed.push({ name: 'matrix', defaultChannel: m.room_id!, param: 'room' });
  }
  if (mattermostEnabled(config)) {
    const { createMattermostTransport } = await import('../adapters/mattermost/mattermost-transport.js');
    const m = config.transport.mattermost;
    // Every channel routing may send to is one the bot serves (and listens to).
    const channels = [...new Set([m.channel!, ...config.routing.rules.flatMap((r) => (r.mattermost ? [r.mattermost] : []))])];
    const publicUrl = config.server.public_url;
    const mm = createMattermostTransport({
      url: m.url!,
      token: m.token!,
      channels,
      store: deps.store,
      logger: deps.logger.child({ component: 'mattermost' }),
      ...(deps.mayDeliver ? { mayDeliver: deps.mayDeliver } : {}),
      // Buttons and the slash command only when Mattermost can reach the bot; otherwise no ingress.
      ...(publicUrl ? { ingress: { publicUrl, ...(m.slash_token ? { slashToken: m.slash_token } : {}), bodyLimitBytes: config.server.body_limit_bytes } } : {}),
    });
    transports.push(mm.transport);
    if (mm.mount) mounts.push(mm.mount);
    routed.push({ name: 'mattermost', defaultChannel: m.channel!, param: 'mattermost' });
    lookups['mattermost'] = (id) => mm.username(id);
  }
  if (slackEnabled(config)) {
    const { createSlackTransport } = await import('../adapters/slack/slack-transport.js');
    const s = config.transport.slack;
    // The config schema has checked the combination (channel; signing secret or app token).
    const slack = createSlackTransport({
      botToken: s.bot_token!,
      defaultChannel: s.channel!,
      ...(s.app_token ? { appToken: s.app_token } : {}),
      ...(s.signing_secret ? { signingSecret: s.signing_secret } : {}),
      ...(s.api_url ? { apiUrl: s.api_url } : {}),
      bodyLimitBytes: config.server.body_limit_bytes,
      logger: deps.logger.child({ component: 'slack' }),
      clock: deps.clock,
      ...(deps.mayDeliver ? { mayDeliver: deps.mayDeliver } : {}),
    });
    transports.push(slack.transport);
    lookups['slack'] = (id) => slack.transport.displayName(id);
    routed.push({ name: 'slack', defaultChannel: s.channel!, param: 'channel' });
    if (slack.mount) mounts.push(slack.mount);
  }
  return { transports, routed, mounts, lookups };
}
