import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { config } from '../../../src/cli/config.js';
import type { CliIO } from '../../../src/runtime/cli-io.js';
import { configSchema } from '../../../src/config/schema.js';

function bufferIO(env: NodeJS.ProcessEnv = {}, cwd = '/'): CliIO & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (t: string) => void (io.out += t),
    stderr: (t: string) => void (io.err += t),
    stdin: async () => '',
    env,
    cwd,
  };
  return io;
}

const dir = mkdtempSync(join(tmpdir(), 'reprise-config-cli-'));

describe('reprise config', () => {
  it('defaults prints YAML that parses back to the defaults', async () => {
    const io = bufferIO();
    expect(await config(['defaults'], io)).toBe(0);
    expect(configSchema.parse(parse(io.out))).toEqual(configSchema.parse({}));
    expect(io.err).toBe('');
  });

  it('check says OK for a valid file', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'recall:\n  k: 10\n');
    const io = bufferIO();
    expect(await config(['check', '--config', file], io)).toBe(0);
    expect(io.out).toBe(`config OK (${file})\n`);
  });

  it('check prints every problem and exits 2 for an invalid file', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'recall:\n  k: many\nlog:\n  levle: debug\n');
    const io = bufferIO();
    expect(await config(['check', `--config=${file}`], io)).toBe(2);
    expect(io.err).toContain('recall.k = "many": must be a whole number ≥ 1');
    expect(io.err).toContain('log.levle = "debug": unknown key; did you mean `log.level`?');
    expect(io.err).toContain('reprise config defaults');
    expect(io.out).toBe('');
  });

  it('check reads REPRISE_CONFIG and env overrides', async () => {
    writeFileSync(join(dir, 'env.yaml'), 'log:\n  pretty: true\n');
    const io = bufferIO({ REPRISE_CONFIG: 'env.yaml', PORT: '-1' }, dir);
    expect(await config(['check'], io)).toBe(2);
    expect(io.err).toContain('server.port = -1:');
    expect(io.err).toContain('[env PORT]');
  });

  it('show prints the resolved config with secrets masked', async () => {
    const io = bufferIO({ REPRISE_BEARER_TOKEN: 'very-secret-token-value' });
    expect(await config(['show'], io)).toBe(0);
    expect(io.out).not.toContain('very-secret');
    expect(parse(io.out).server).toEqual({
      port: 8080,
      host: '0.0.0.0',
      bearer_token: '***',
      body_limit_bytes: 1_048_576,
      body_timeout: '10s',
      body_timeout_ms: 10_000,
      max_pending_webhooks: 256,
      max_pending_per_peer: 64,
      verify_pool_slots: 64,
      replay_window: '1h',
      replay_window_ms: 3_600_000,
      field_limit_chars: 8192,
    });
  });

  it('usage errors exit 2 with usage on stderr', async () => {
    for (const argv of [[], ['nope'], ['check', '--config'], ['check', 'extra'], ['defaults', 'x']]) {
      const io = bufferIO();
      expect(await config(argv, io), argv.join(' ')).toBe(2);
      expect(io.err).toContain('usage: reprise config');
    }
    const help = bufferIO();
    expect(await config(['--help'], help)).toBe(0);
    expect(help.out).toContain('usage: reprise config');
  });

  it('check reads --config FILE, --config=FILE and -c FILE', async () => {
    for (const argv of [
      ['check', '--config', 'nope.yaml'],
      ['check', '--config=nope.yaml'],
      ['check', '-c', 'nope.yaml'],
    ]) {
      const io = bufferIO();
      // The file is read (and is not there): the flag reached the loader.
      expect(await config(argv, io), argv.join(' ')).not.toBe(0);
      expect(io.err, argv.join(' ')).toContain('nope.yaml');
    }
    const empty = bufferIO();
    expect(await config(['check', '--config='], empty)).toBe(2);
    expect(empty.err).toContain('--config needs a file');
  });
});
