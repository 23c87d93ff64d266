/**
 * The Slack transport's options from the ecosystem's environment names, for the composition
 * root: Slack is on when `SLACK_BOT_TOKEN` is set; `SLACK_APP_TOKEN` selects Socket Mode,
 * otherwise `SLACK_SIGNING_SECRET` is required (HTTP mode).
 */
import type { SlackTransportOptions } from './slack-transport.js';

export type SlackEnvOptions = Omit<SlackTransportOptions, 'logger' | 'clock'>;

/** Undefined when Slack is not configured; throws naming the missing variable when half-configured. */
export function slackOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): SlackEnvOptions | undefined {
  const get = (k: string): string | undefined => {
    const v = env[k]?.trim();
    return v ? v : undefined;
  };
  const botToken = get('SLACK_BOT_TOKEN');
  if (!botToken) {
    const stray = ['SLACK_SIGNING_SECRET', 'SLACK_APP_TOKEN', 'SLACK_CHANNEL'].filter((k) => get(k));
    if (stray.length > 0) throw new Error(`${stray.join(', ')} set but SLACK_BOT_TOKEN is not: set it to the app's "Bot User OAuth Token" (xoxb-…)`);
    return undefined;
  }
  const appToken = get('SLACK_APP_TOKEN');
  const signingSecret = get('SLACK_SIGNING_SECRET');
  if (!appToken && !signingSecret) throw new Error('SLACK_BOT_TOKEN is set but neither SLACK_SIGNING_SECRET (HTTP mode) nor SLACK_APP_TOKEN (Socket Mode) is');
  const defaultChannel = get('SLACK_CHANNEL');
  if (!defaultChannel) throw new Error('SLACK_CHANNEL is not set: the channel id (C…) incidents go to when no routing rule places them');
  const apiUrl = get('SLACK_API_URL');
  return { botToken, defaultChannel, ...(appToken ? { appToken } : {}), ...(signingSecret ? { signingSecret } : {}), ...(apiUrl ? { apiUrl } : {}) };
}
