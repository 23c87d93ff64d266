/**
 * What building a chat surface needs, and which surfaces the config turns on: a leaf, so
 * build-surfaces.ts and the lazily loaded chat-surfaces.ts (the chat SDKs) share it without
 * importing each other.
 */
import type { Config } from '../config/schema.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';

export interface SurfaceDeps {
  write: (text: string) => void;
  logger: Logger;
  clock: Clock;
  store: KeyValueStore;
  /** Checked right before each chat send (replicas: the lease is held with margin). */
  mayDeliver?: () => boolean;
}

export function slackEnabled(config: Config): boolean {
  return Boolean(config.transport.slack.bot_token);
}

export function matrixEnabled(config: Config): boolean {
  const m = config.transport.matrix;
  return Boolean(m.homeserver_url && m.access_token && m.room_id);
}

export function mattermostEnabled(config: Config): boolean {
  const m = config.transport.mattermost;
  return Boolean(m.url && m.token && m.channel);
}
