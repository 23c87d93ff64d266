/**
 * The chat surfaces `serve` runs, from config: each is on when its credentials are set (Slack,
 * Matrix and Mattermost can run at once, each incident goes to each); the console when none is, or when
 * `transport.console: on`.
 */
import { ConsoleTransport } from '../adapters/console/console-transport.js';
import type { Config } from '../config/schema.js';
import type { Actor } from '../core/chat/chat-types.js';
import type { RoutedTransport, RoutingOptions } from '../core/bot/routing.js';
import type { HttpApp } from '../http/create-server.js';
import type { ChatTransport } from '../ports/chat-transport.js';
import type { NameLookup, PeopleDirectory } from '../ports/people.js';
import { CachedPeopleDirectory } from './people-directory.js';
import { matrixEnabled, mattermostEnabled, slackEnabled, type SurfaceDeps } from './surface-deps.js';

export interface Surfaces {
  transports: ChatTransport[];
  /** Routes the surfaces need on the bot's HTTP port (Slack's /slack/events in HTTP mode). */
  mounts: Array<(app: HttpApp) => void>;
  routing: RoutingOptions;
  /** Who may vote, silence and write notes, per surface. */
  allow: (actor: Actor) => boolean;
  /** Display names of the surfaces' people (Slack users.info, Matrix profiles), cached. */
  people: PeopleDirectory;
}

export async function buildSurfaces(config: Config, deps: SurfaceDeps): Promise<Surfaces> {
  const transports: ChatTransport[] = [];
  const routed: RoutedTransport[] = [];
  const mounts: Array<(app: HttpApp) => void> = [];
  const chat = slackEnabled(config) || matrixEnabled(config) || mattermostEnabled(config);
  let lookups: Record<string, NameLookup> = {};
  if (chat) {
    const { chatSurfaces } = await import('./chat-surfaces.js');
    const built = await chatSurfaces(config, deps);
    transports.push(...built.transports);
    routed.push(...built.routed);
    mounts.push(...built.mounts);
    lookups = built.lookups;
  }
  if (config.transport.console === 'on' || (config.transport.console === 'auto' && !chat)) {
    transports.push(new ConsoleTransport({ write: deps.write }));
    routed.push({ name: 'console', defaultChannel: 'console', param: 'console' });
  }
  const allowLists: Record<string, Set<string>> = {
    slack: new Set(config.transport.slack.allow_users),
    matrix: new Set(config.transport.matrix.allow_users),
    mattermost: new Set(config.transport.mattermost.allow_users),
  };
  return {
    transports,
    mounts,
    routing: {
      transports: routed,
      rules: config.routing.rules.map((r) => ({
        match: r.match,
        channels: { ...(r.slack ? { slack: r.slack } : {}), ...(r.matrix ? { matrix: r.matrix } : {}), ...(r.mattermost ? { mattermost: r.mattermost } : {}) },
        ...(r.ask_fix !== undefined ? { askFix: r.ask_fix } : {}),
      })),
      mentions: config.routing.mentions.map((m) => ({ match: m.match, ids: { slack: m.slack, matrix: m.matrix, mattermost: m.mattermost } })),
    },
    people: new CachedPeopleDirectory({
      lookups,
      cacheSize: config.transport.people.cache_size,
      ttlMs: config.transport.people.ttl_ms,
      retryAfterMs: config.transport.people.retry_after_ms,
      lookupTimeoutMs: config.transport.people.lookup_timeout_ms,
      logger: deps.logger.child({ component: 'people' }),
    }),
    allow: (actor) => {
      const list = allowLists[actor.via];
      return !list || list.size === 0 || list.has(actor.id);
    },
  };
}
