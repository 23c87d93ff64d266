/** The shipped Slack app manifest must ask for exactly what the transport handles. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SLACK_EVENTS } from '../../../../src/adapters/slack/slack-transport.js';

interface Manifest {
  features: { slash_commands: Array<{ command: string; url: string; should_escape: boolean }>; bot_user: { display_name: string } };
  oauth_config: { scopes: { bot: string[] } };
  settings: {
    event_subscriptions: { request_url: string; bot_events: string[] };
    interactivity: { is_enabled: boolean; request_url: string };
    socket_mode_enabled: boolean;
  };
}

/** Bot-token scopes of the Web API methods Reprise calls (conversations.info: public and private channels). */
const METHOD_SCOPES: Record<string, readonly string[]> = {
  'auth.test': [],
  'chat.postMessage': ['chat:write'],
  'chat.update': ['chat:write'],
  // A bot deletes its own messages (a late duplicate) with chat:write alone.
  'chat.delete': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  // The memory view's thread links: Slack's reference lists no scope for it.
  'chat.getPermalink': [],
  'conversations.info': ['channels:read', 'groups:read'],
  // The lookup of a send whose outcome is unknown (exactly once).
  'conversations.history': ['channels:history', 'groups:history'],
  'conversations.replies': ['channels:history', 'groups:history'],
  // Who is on call (docs/oncall.md): a person's id by email.
  'users.lookupByEmail': ['users:read', 'users:read.email'],
  // Display names where text cannot mention a person.
  'users.info': ['users:read'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

const manifest = parse(readFileSync(fileURLToPath(new URL('../../../../manifests/slack-app.yaml', import.meta.url)), 'utf8')) as Manifest;

describe('manifests/slack-app.yaml', () => {
  it('subscribes to every event the transport handles, and no other', () => {
    // message.channels / message.groups are how Slack names the `message` event per channel type.
    const handled = new Set<string>(SLACK_EVENTS.flatMap((e) => (e === 'message' ? ['message.channels', 'message.groups'] : [e])));
    expect(new Set(manifest.settings.event_subscriptions.bot_events)).toEqual(handled);
  });

  it('asks for the scopes those events, the slash command and posting need', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([
      'app_mentions:read',
      'channels:history',
      'channels:read',
      'chat:write',
      'commands',
      'groups:history',
      'groups:read',
      'reactions:read',
      'users:read',
      'users:read.email',
    ]);
  });

  it('asks for the scope of every Web API method the code calls (a new call without its scope fails here)', () => {
    const calls = new Set<string>();
    for (const file of sourceFiles(fileURLToPath(new URL('../../../../src', import.meta.url)))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\bclient\.([a-z]+)\.([a-zA-Z]+)\(/g)) calls.add(`${m[1]}.${m[2]}`);
    }
    expect(calls.size).toBeGreaterThan(0);
    const scopes = new Set(manifest.oauth_config.scopes.bot);
    for (const method of calls) {
      const needs = METHOD_SCOPES[method];
      expect(needs, `add ${method} and its scopes (api.slack.com/methods/${method}) to METHOD_SCOPES and to manifests/slack-app.yaml`).toBeDefined();
      for (const scope of needs ?? []) expect(scopes.has(scope), `${method} needs ${scope}`).toBe(true);
    }
  });

  it('sends events, interactivity and /reprise to the one route the transport mounts', () => {
    const urls = [
      manifest.settings.event_subscriptions.request_url,
      manifest.settings.interactivity.request_url,
      ...manifest.features.slash_commands.map((c) => c.url),
    ];
    for (const u of urls) expect(new URL(u).pathname).toBe('/slack/events');
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(['/reprise']);
    expect(manifest.settings.socket_mode_enabled).toBe(false);
  });
});
