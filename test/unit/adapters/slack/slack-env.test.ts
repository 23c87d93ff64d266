import { describe, expect, it } from 'vitest';
import { slackOptionsFromEnv } from '../../../../src/adapters/slack/slack-env.js';

describe('slackOptionsFromEnv', () => {
  it('is off without a bot token, and says what is missing when half-configured', () => {
    expect(slackOptionsFromEnv({})).toBeUndefined();
    expect(() => slackOptionsFromEnv({ SLACK_SIGNING_SECRET: 's' })).toThrow(/SLACK_BOT_TOKEN is not/);
    expect(() => slackOptionsFromEnv({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_CHANNEL: 'C1' })).toThrow(/SLACK_SIGNING_SECRET.*SLACK_APP_TOKEN/);
    expect(() => slackOptionsFromEnv({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' })).toThrow(/SLACK_CHANNEL/);
  });

  it('maps HTTP mode, Socket Mode and the API URL', () => {
    expect(slackOptionsFromEnv({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', SLACK_CHANNEL: 'C1' })).toEqual({ botToken: 'xoxb-1', signingSecret: 's', defaultChannel: 'C1' });
    expect(slackOptionsFromEnv({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1', SLACK_CHANNEL: 'C1', SLACK_API_URL: 'http://127.0.0.1:9/api/' })).toEqual({ botToken: 'xoxb-1', appToken: 'xapp-1', defaultChannel: 'C1', apiUrl: 'http://127.0.0.1:9/api/' });
  });
});
