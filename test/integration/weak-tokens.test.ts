/**
 * `reprise serve` refuses a token that protects nothing (issue 20 item 7): `x`, or the docs'
 * `change-me`, is refused at start with the fix, before anything listens.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, makeTmpDir, runCli } from './helpers/spawn-bot.js';

afterAll(cleanup);

describe('serve with a weak bearer token', () => {
  it.each(['x', 'change-me', '<openssl rand -hex 24>'])(
    'refuses %j at start, naming the key and the fix, never the value',
    { timeout: 60_000 },
    async (token) => {
      const dir = makeTmpDir();
      const r = await runCli(['serve', '--port', '0', '--host', '127.0.0.1'], {
        env: { REPRISE_DATA_DIR: dir, REPRISE_BEARER_TOKEN: token },
        timeoutMs: 30_000,
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/✗ server\.bearer_token = \*\*\*: .*generate one with `openssl rand -hex 24`.*\[env REPRISE_BEARER_TOKEN\]/);
      expect(r.stderr).not.toContain(`= ${token}`);
      if (token.length > 1) expect(r.stderr).not.toContain(token);
      expect(r.stderr).not.toMatch(/listening on/);
    },
  );
});
