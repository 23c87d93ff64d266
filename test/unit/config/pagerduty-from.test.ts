import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadConfig } from '../../../src/config/load-config.js';

const env = { REPRISE_PAGERDUTY_TOKEN: 'pd-token' };

describe('pagerduty.from', () => {
  it('is required with a token to serve: the bot acknowledges as that user', () => {
    let err: unknown;
    try {
      loadConfig({ env, cwd: '/nonexistent' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).format()).toMatch(/pagerduty\.from.*is required with pagerduty\.token/s);
  });

  it('is not needed by a command that only reads PagerDuty', () => {
    const config = loadConfig({ env, cwd: '/nonexistent', sections: ['store', 'log', 'catalog', 'forge', 'pagerduty', 'identity'] });
    expect(config.pagerduty.token).toBe('pd-token');
    expect(config.pagerduty.from).toBeUndefined();
  });
});
