/**
 * Load only what is configured (issue 30 item 5): `reprise serve` on the embedded defaults
 * never loads the SDKs of surfaces, stores and services it was not configured for — each costs
 * resident memory and start-up time for nothing. The spawned bot records every package it
 * loads (test/fixtures/record-packages.mjs) and writes the list when it exits.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import { cleanup, makeTmpDir, REPO_ROOT, spawnBot } from './helpers/spawn-bot.js';

afterAll(cleanup);

const RECORDER = join(REPO_ROOT, 'test', 'fixtures', 'record-packages.mjs');

/** Packages a bot loads only when the part that needs them is configured. */
const OPTIONAL = [
  '@slack/bolt',
  '@slack/web-api',
  'matrix-bot-sdk',
  'openai',
  '@modelcontextprotocol/sdk',
  '@octokit/rest',
  '@octokit/core',
  '@redis/client',
  '@keyv/redis',
  'simple-git',
];

async function packagesLoaded(env: Record<string, string>): Promise<string[]> {
  const dir = makeTmpDir();
  const file = join(dir, 'packages.json');
  // A process of its own: what it loads is what is measured (process: true).
  const bot = await spawnBot({ process: true, dataDir: join(dir, 'data'), env: { NODE_OPTIONS: `--import=${RECORDER}`, RECORD_PACKAGES_FILE: file, ...env } });
  await waitFor(async () => (await fetch(`${bot.url}/readyz`)).status === 200 || undefined, { what: '/readyz to answer 200' });
  const exit = await bot.stop();
  expect(exit.code, bot.stderr()).toBe(0);
  return JSON.parse(readFileSync(file, 'utf8')) as string[];
}

describe('serve loads only what is configured', () => {
  it('on the embedded defaults: no chat SDK, no model or MCP client, no Octokit, no Redis client, no git', { timeout: 90_000 }, async () => {
    const loaded = await packagesLoaded({});
    // The recorder works: what every bot needs is there.
    expect(loaded).toEqual(expect.arrayContaining(['hono', 'pino', 'zod', 'keyv']));
    expect(loaded.filter((p) => OPTIONAL.includes(p))).toEqual([]);
  });

  it('a configured model loads its client, and still no MCP SDK without a tool server', { timeout: 90_000 }, async () => {
    // Nothing listens there: a model that cannot be reached never stops the bot from serving.
    const loaded = await packagesLoaded({
      REPRISE_MODEL_BASE_URL: 'http://127.0.0.1:9/v1',
      REPRISE_MODEL: 'stand-in',
      REPRISE_MODEL_API_KEY: 'k',
      REPRISE_BEARER_TOKEN: 'a-bearer-token-long-enough-for-the-check',
    });
    expect(loaded).toContain('openai');
    expect(loaded.filter((p) => OPTIONAL.includes(p) && p !== 'openai')).toEqual([]);
  });
});
