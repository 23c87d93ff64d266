import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadConfig, parseConfigText } from '../../../src/config/load-config.js';

const cwd = '/work/here';

function problems(text: string, env: NodeJS.ProcessEnv = {}, oneShot = false): string[] {
  try {
    parseConfigText(text, { env, cwd, oneShot });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems.map((p) => `${p.path}: ${p.rule}`);
  }
  throw new Error('expected a ConfigError');
}

describe('model and tools config', () => {
  it('REPRISE_MODEL_BASE_URL and REPRISE_MODEL configure a model without a file', () => {
    const env = { REPRISE_MODEL_BASE_URL: 'http://127.0.0.1:9/v1', REPRISE_MODEL: 'm1', OPENAI_API_KEY: 'sk-1' };
    const cfg = loadConfig({ env, cwd, oneShot: true });
    expect(cfg.model).toMatchObject({ base_url: 'http://127.0.0.1:9/v1', model: 'm1', api_key: 'sk-1', request_timeout_ms: 60_000, max_retries: 2 });
  });

  it('the model opened from env still needs a bearer token to serve, but not for a one-shot command', () => {
    const env = { REPRISE_MODEL_BASE_URL: 'http://127.0.0.1:9/v1', REPRISE_MODEL: 'm1' };
    expect(problems('', env)).toEqual(['server.bearer_token: is required when a `model` block is configured (SPEC §4)']);
    expect(parseConfigText('', { env, cwd, oneShot: true }).model?.model).toBe('m1');
  });

  it('one-shot parsing still reports every other problem', () => {
    expect(problems('recall:\n  k: 0\n', { REPRISE_MODEL: 'm1' }, true).sort()).toEqual([
      'model.base_url: is required',
      'recall.k: must be a whole number ≥ 1',
    ]);
  });

  it('tools default to the four built-ins, 15 s and 16 KiB', () => {
    const cfg = parseConfigText('', { env: {}, cwd });
    expect(cfg.tools).toMatchObject({
      servers: [],
      allow: ['kb_search', 'kb_get', 'prior_findings', 'recurrence'],
      confirm: [],
      call_timeout_ms: 15_000,
      result_cap_bytes: 16_384,
      scope: [],
    });
    expect(cfg.recall.rerank_min_score).toBe(0.1);
  });

  it('rejects wildcards in the allowlist, a stdio server without a command and an http server without a url', () => {
    const text = [
      'tools:',
      '  allow: [k8s__*]',
      '  confirm: [a, b, c]',
      '  servers:',
      '    - { name: k8s, access: read }',
      '    - { name: web, access: read, transport: http }',
      '    - { name: Bad, access: rw, command: x }',
      '',
    ].join('\n');
    expect(problems(text).sort()).toEqual([
      'tools.allow[0]: must be a tool name like k8s__pod_status (no wildcards)',
      'tools.confirm: must name at most 2 tools',
      'tools.servers[0].command: is required when transport is stdio',
      'tools.servers[1].url: is required when transport is http',
      'tools.servers[2].access: must be one of read, write',
      'tools.servers[2].name: must be lower-case letters, digits, _ or - (tools are offered as <name>__<tool>)',
    ]);
  });
});

describe('confirm tools', () => {
  it('must be on the allowlist', () => {
    expect(problems('tools:\n  allow: [k8s__pod_status]\n  confirm: [k8s__pod_status, k8s__events]\n')).toEqual([
      'tools.confirm[1]: is not on tools.allow (add k8s__events there)',
    ]);
  });
});
