/** The shipped Slack app manifest must ask for exactly what the transport handles. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SLACK_EVENTS } from '../../../../src/adapters/slack/slack-transport.js';

interface Manifest {
  features: { slash_commands: Array<{ command: string; url: string; should_escape: boolean }>; bot_user: { display_name: string } };
  oauth_config: { scopes: { bot: string[] } };
  settings: { event_subscriptions: { request_url: string; bot_events: string[] }; interactivity: { is_enabled: boolean; request_url: string }; socket_mode_enabled: boolean };
}

const manifest = parse(readFileSync(fileURLToPath(new URL('../../../../manifests/slack-app.yaml', import.meta.url)), 'utf8')) as Manifest;

describe('manifests/slack-app.yaml', () => {
  it('subscribes to every event the transport handles, and no other', () => {
    // message.channels / message.groups are how Slack names the `message` event per channel type.
    const handled = new Set<string>(SLACK_EVENTS.flatMap((e) => (e === 'message' ? ['message.channels', 'message.groups'] : [e])));
    expect(new Set(manifest.settings.event_subscriptions.bot_events)).toEqual(handled);
  });

  it('asks for the scopes those events, the slash command and posting need', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(['app_mentions:read', 'channels:history', 'chat:write', 'commands', 'groups:history', 'reactions:read']);
  });

  it('sends events, interactivity and /reprise to the one route the transport mounts', () => {
    const urls = [manifest.settings.event_subscriptions.request_url, manifest.settings.interactivity.request_url, ...manifest.features.slash_commands.map((c) => c.url)];
    for (const u of urls) expect(new URL(u).pathname).toBe('/slack/events');
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(['/reprise']);
    expect(manifest.settings.socket_mode_enabled).toBe(false);
  });
});
