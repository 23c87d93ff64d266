/**
 * Configuration errors through the real CLI (issue 2): an invalid config exits with status 2
 * naming each bad key, its value and the rule, all at once; `config defaults` prints YAML
 * that is itself a valid config.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cleanup, makeTmpDir, runCli } from './helpers/spawn-bot.js';

afterAll(cleanup);

const BAD = `server:
  port: 99999
recall:
  outcome_floor: 1.5
log:
  level: loud
`;

describe('config errors', () => {
  it('serve --config with three problems exits 2 and names each key, value and rule', async () => {
    const dir = makeTmpDir();
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, BAD);
    const r = await runCli(['serve', '--config', file, '--port', '0'], { env: { REPRISE_DATA_DIR: join(dir, 'data') } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/3 problems/);
    expect(r.stderr).toMatch(/server\.port = 99999: must be a whole number between 0 and 65535.*line 2/);
    expect(r.stderr).toMatch(/recall\.outcome_floor = 1\.5: must be a number between 0 and 1.*line 4/);
    expect(r.stderr).toMatch(/log\.level = "loud": must be one of trace, debug, info, warn, error, fatal, silent.*line 6/);
    // It stopped before serving anything.
    expect(r.stderr).not.toMatch(/listening on/);
    expect(r.stdout).toBe('');
  });

  it('names an unknown key and an env var that is wrong, in the same run', async () => {
    const dir = makeTmpDir();
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'server:\n  bogus_key: 1\n');
    const r = await runCli(['serve', '--config', file], { env: { PORT: 'abc', REPRISE_DATA_DIR: join(dir, 'data') } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/server\.bogus_key = 1: unknown key/);
    expect(r.stderr).toMatch(/server\.port = "abc": must be a whole number.*env PORT/);
  });

  it('a trusted proxy without its header (loopback listed for a sidecar) stops serve, saying what to set', async () => {
    const dir = makeTmpDir();
    const r = await runCli(['serve', '--port', '0'], { env: { REPRISE_UI_TRUSTED_PROXIES: '127.0.0.1', REPRISE_DATA_DIR: join(dir, 'data') } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/ui\.trusted_header.*is required when `trusted_proxies` is set.*REPRISE_UI_TRUSTED_HEADER/);
    expect(r.stderr).not.toMatch(/listening on/);
  });

  it('an unreadable config file exits 2 naming the file', async () => {
    const dir = makeTmpDir();
    const r = await runCli(['serve', '--config', join(dir, 'missing.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/missing\.yaml.*cannot be read \(ENOENT\)/s);
  });

  it('config defaults exits 0 and prints YAML that is a valid config', async () => {
    const r = await runCli(['config', 'defaults']);
    expect(r.code, r.stderr).toBe(0);
    const doc = parse(r.stdout) as Record<string, Record<string, unknown>>;
    expect(doc.server).toMatchObject({ port: 8080, body_limit_bytes: 1_048_576 });
    expect(doc.recall).toMatchObject({ outcome_floor: 0.5 });
    expect(r.stdout).toMatch(/^# /m);

    const dir = makeTmpDir();
    const file = join(dir, 'defaults.yaml');
    writeFileSync(file, r.stdout);
    const check = await runCli(['config', 'check', '--config', file]);
    expect(check.code, check.stderr).toBe(0);
  });
});
