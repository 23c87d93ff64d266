import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_EXIT_CODE, ConfigError } from '../../../src/config/config-error.js';
import type { ConfigProblem } from '../../../src/config/config-error.js';
import { configFile, defaultConfig, loadConfig, maskSecrets, parseConfigText } from '../../../src/config/load-config.js';

const cwd = '/work/here';

/** Runs the parser and returns the problems it threw (fails the test when it did not throw). */
function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): { error: ConfigError; problems: readonly ConfigProblem[] } {
  try {
    parseConfigText(text, { env, cwd, file: '/etc/reprise/reprise.yaml' });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return { error: err as ConfigError, problems: (err as ConfigError).problems };
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('an empty file gives every default, durations also in ms', () => {
    const cfg = parseConfigText('', { env: {}, cwd });
    expect(cfg.server).toEqual({
      port: 8080,
      host: '0.0.0.0',
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
    expect(cfg.ledger.resolve_window_ms).toBe(24 * 3_600_000);
    expect(cfg.store.probe_interval_ms).toBe(10_000);
    expect(cfg.recall.k).toBe(20);
    expect(cfg.recall.min_score).toBe(6);
    expect(cfg.recall.confidence_cap).toBe(0.9);
    expect(cfg.recall.stale_after).toBe('180d');
    expect(cfg.recall.stale_after_ms).toBe(180 * 86_400_000);
    expect(cfg.trigger.investigate_after_ms).toBe(60_000);
    expect(cfg.trigger.dedup_window_ms).toBe(0);
    expect(cfg.ledger.recurrence_cooldown_ms).toBe(0);
    expect(cfg.transport.console).toBe('auto');
    expect(cfg.transport.slack).toEqual({ allow_users: [] });
    expect(cfg.routing).toEqual({ rules: [], mentions: [] });
    expect(cfg.outbox).toMatchObject({ concurrency: 8, max_age_ms: 24 * 3_600_000 });
    expect(cfg.model).toBeUndefined();
    expect(cfg.catalog.git).toBeUndefined();
    expect(cfg.log).toEqual({ level: 'info', pretty: false });
    // No file: relative paths resolve against the working directory.
    expect(cfg.catalog.dir).toBe('/work/here/catalog');
    expect(cfg.store.data_dir).toBe('/work/here/data');
  });

  it('a comment-only file is the same as an empty one', () => {
    expect(parseConfigText('# nothing yet\n', { env: {}, cwd })).toEqual(parseConfigText('', { env: {}, cwd }));
  });

  it('an empty section (all lines commented out) means defaults, and env still applies', () => {
    const cfg = parseConfigText('server:\nrecall:\nmodel:\n', { env: { PORT: '81' }, cwd });
    expect(cfg.server.port).toBe(81);
    expect(cfg.recall.k).toBe(20);
    expect(cfg.model).toBeUndefined();
  });

  it('reports every problem at once with path, value and rule', () => {
    const { error, problems } = problemsOf(['recall:', '  min_score: high', '  stale_after: soon', 'recal:', '  k: 20', ''].join('\n'));
    expect(problems).toHaveLength(3);
    expect(problems).toContainEqual({ path: 'recall.min_score', value: 'high', rule: 'must be a number ≥ 0', source: 'line 2' });
    expect(problems).toContainEqual({
      path: 'recall.stale_after',
      value: 'soon',
      rule: 'must be a positive duration like 30s, 5m, 1h, 7d',
      source: 'line 3',
    });
    expect(problems).toContainEqual({ path: 'recal.k', value: 20, rule: 'unknown key; did you mean `recall.k`?', source: 'line 5' });
    const text = error.format();
    expect(text.split('\n').filter((l) => l.startsWith('  ✗ '))).toHaveLength(3);
    expect(text).toContain('recall.min_score = "high": must be a number ≥ 0');
    expect(text).toContain('/etc/reprise/reprise.yaml');
    expect(text).toContain('see `reprise config defaults`');
    expect(error.code).toBe('config_invalid');
    expect(CONFIG_EXIT_CODE).toBe(2);
  });

  it('names the key, value and rule for list items and bad enums', () => {
    const { problems } = problemsOf(
      ['trigger:', '  match:', '    - alertnme: Kube*', 'transport:', '  console: sometimes', 'log:', '  level: loud', ''].join('\n'),
    );
    expect(problems.map((p) => [p.path, p.value, p.rule])).toEqual([
      ['trigger.match[0].alertnme', 'Kube*', 'unknown key; did you mean `trigger.match[0].alertname`?'],
      ['transport.console', 'sometimes', 'must be one of auto, on, off'],
      ['log.level', 'loud', 'must be one of trace, debug, info, warn, error, fatal, silent'],
    ]);
  });

  it('links.allowed_hosts takes host names and *.domain, and names a URL or a port as the mistake', () => {
    const ok = parseConfigText('links:\n  allowed_hosts: [grafana.example.org, "*.runbooks.example.org", 10.0.3.17, "[2001:db8::1]", "2001:db8::2"]\n', {
      env: {},
      cwd,
    });
    expect(ok.links.allowed_hosts).toEqual(['grafana.example.org', '*.runbooks.example.org', '10.0.3.17', '[2001:db8::1]', '2001:db8::2']);
    expect(parseConfigText('', { env: {}, cwd }).links).toEqual({ allowed_hosts: [] });
    const { problems } = problemsOf('links:\n  allowed_hosts: ["https://grafana.example.org", "grafana.example.org:3000", "cafe.be:80"]\n');
    expect(problems.map((p) => [p.path, p.value])).toEqual([
      ['links.allowed_hosts[0]', 'https://grafana.example.org'],
      ['links.allowed_hosts[1]', 'grafana.example.org:3000'],
      ['links.allowed_hosts[2]', 'cafe.be:80'],
    ]);
    expect(problems[0]!.rule).toContain('without scheme, port or path');
  });

  it('suggests the same key in another section', () => {
    const { problems } = problemsOf('server:\n  min_score: 3\n');
    expect(problems[0]?.rule).toBe('unknown key; did you mean `recall.min_score`?');
  });

  it('env overrides secrets and knobs, winning over the file', () => {
    const cfg = parseConfigText(
      ['server:', '  port: 9000', 'transport:', '  slack:', '    channel: C1', 'model:', '  base_url: http://llm:8000/v1', '  model: m', ''].join('\n'),
      {
        cwd,
        file: '/etc/reprise/reprise.yaml',
        env: {
          PORT: '7000',
          REPRISE_BEARER_TOKEN: 'tok-from-the-environment',
          SLACK_BOT_TOKEN: 'xoxb-1\n',
          SLACK_SIGNING_SECRET: 'sig',
          OPENAI_API_KEY: 'sk-openai',
          REPRISE_MODEL_API_KEY: 'sk-reprise',
          REPRISE_LOG_LEVEL: 'debug',
          REPRISE_DATA_DIR: 'state',
          REPRISE_TRANSCRIPT: '/tmp/t.jsonl',
        },
      },
    );
    expect(cfg.server.port).toBe(7000);
    expect(cfg.server.bearer_token).toBe('tok-from-the-environment');
    expect(cfg.transport.slack.bot_token).toBe('xoxb-1');
    expect(cfg.transport.slack.signing_secret).toBe('sig');
    expect(cfg.model?.api_key).toBe('sk-reprise');
    expect(cfg.model?.wall_time_ms).toBe(300_000);
    expect(cfg.log.level).toBe('debug');
    // Env-given paths resolve against the working directory; file/default ones against the file's folder.
    expect(cfg.store.data_dir).toBe('/work/here/state');
    expect(cfg.catalog.dir).toBe('/etc/reprise/catalog');
    expect(cfg.transport.transcript).toBe('/tmp/t.jsonl');
  });

  it('a stray model API key in env does not switch the model on', () => {
    const cfg = parseConfigText('', { env: { OPENAI_API_KEY: 'sk-x' }, cwd });
    expect(cfg.model).toBeUndefined();
  });

  it('a bad env value is reported against its key and env var', () => {
    const { problems } = problemsOf('', { PORT: 'eighty', REPRISE_LOG_LEVEL: 'loud' });
    expect(problems).toContainEqual({
      path: 'server.port',
      value: 'eighty',
      rule: 'must be a whole number between 0 and 65535 (0 = any free port)',
      source: 'env PORT',
    });
    expect(problems.find((p) => p.path === 'log.level')?.source).toBe('env REPRISE_LOG_LEVEL');
  });

  it('masks secrets in errors', () => {
    const { error, problems } = problemsOf(
      ['server:', '  bearer_token: 12345', 'transport:', '  slack:', '    bot_tokn: xoxb-secret', '  matrix: syt_secret', ''].join('\n'),
    );
    expect(problems).toContainEqual({
      path: 'server.bearer_token',
      value: '***',
      rule: 'must be a non-empty string (YAML read a number: quote it)',
      source: 'line 2',
    });
    expect(problems).toContainEqual(
      expect.objectContaining({ path: 'transport.slack.bot_tokn', value: '***', rule: 'unknown key; did you mean `transport.slack.bot_token`?' }),
    );
    expect(problems).toContainEqual(expect.objectContaining({ path: 'transport.matrix', value: '***' }));
    const text = error.format();
    expect(text).not.toContain('12345');
    expect(text).not.toContain('xoxb-secret');
    expect(text).not.toContain('syt_secret');
    expect(error.message).not.toContain('xoxb-secret');
  });

  it('requires a bearer token when a model is configured', () => {
    const model = 'model:\n  base_url: https://api.openai.com/v1\n  model: gpt\n';
    const { problems } = problemsOf(model);
    expect(problems).toEqual([{ path: 'server.bearer_token', value: undefined, rule: 'is required when a `model` block is configured (SPEC §4)' }]);
    const ok = parseConfigText(model, { env: { REPRISE_BEARER_TOKEN: 'a-token-long-enough-here' }, cwd });
    expect(ok.model?.max_steps).toBe(20);
    expect(ok.tools.call_timeout_ms).toBe(15_000);
  });

  it('reports cross-field rules together with type errors', () => {
    const { problems } = problemsOf('recall:\n  k: 0\nmodel:\n  base_url: ftp://x\n');
    expect(problems.map((p) => p.path).sort()).toEqual(['model.base_url', 'model.model', 'recall.k', 'server.bearer_token']);
    expect(problems.find((p) => p.path === 'model.model')?.rule).toBe('is required');
  });

  it('checks the settings a surface needs once any of its settings is given', () => {
    const { problems } = problemsOf('transport:\n  matrix:\n    room_id: "!r:hs"\n');
    expect(problems.map((p) => p.path)).toEqual(['transport.matrix.homeserver_url', 'transport.matrix.access_token']);
    // Slack with a bot token needs a channel, and a signing secret unless Socket Mode's app token is set.
    const http = problemsOf('', { SLACK_BOT_TOKEN: 'x' });
    expect(http.problems.map((p) => p.path)).toEqual(['transport.slack.channel', 'transport.slack.signing_secret']);
    expect(http.problems[1]?.rule).toMatch(/SLACK_SIGNING_SECRET.*SLACK_APP_TOKEN/);
    expect(parseConfigText('', { env: { SLACK_BOT_TOKEN: 'x', SLACK_APP_TOKEN: 'xapp', SLACK_CHANNEL: 'C1' }, cwd }).transport.slack).toMatchObject({
      bot_token: 'x',
      app_token: 'xapp',
      channel: 'C1',
    });
    const orphan = problemsOf('', { SLACK_CHANNEL: 'C1' });
    expect(orphan.problems.map((p) => p.path)).toEqual(['transport.slack.bot_token']);
    // Every Matrix setting from the ecosystem's env names: no file needed.
    expect(
      parseConfigText('', { env: { MATRIX_HOMESERVER_URL: 'https://hs.example', MATRIX_ACCESS_TOKEN: 't', MATRIX_ROOM_ID: '!r:hs' }, cwd }).transport.matrix,
    ).toMatchObject({ homeserver_url: 'https://hs.example', room_id: '!r:hs' });
  });

  it('YAML syntax errors name the line and column', () => {
    const { error, problems } = problemsOf('server:\n  port: 80\n recall: [\n');
    expect(problems[0]?.path).toBe('(file)');
    expect(problems[0]?.rule).toMatch(/^YAML syntax error at line 3, column \d+: /);
    expect(error.format()).toContain('line 3');
  });

  it('a file that is not a mapping is one clear problem', () => {
    const { problems } = problemsOf('- a\n- b\n');
    expect(problems).toEqual([{ path: '(root)', value: ['a', 'b'], rule: expect.stringContaining('must be a mapping') }]);
  });

  it('reads the file from REPRISE_CONFIG and resolves paths against its folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'reprise-config-'));
    writeFileSync(join(dir, 'reprise.yaml'), 'catalog:\n  dir: kb\n  git:\n    url: https://example.com/kb.git\n    poll_interval: 1m\n');
    const cfg = loadConfig({ env: { REPRISE_CONFIG: 'reprise.yaml' }, cwd: dir });
    expect(cfg.catalog.dir).toBe(join(dir, 'kb'));
    expect(cfg.catalog.git).toEqual({ url: 'https://example.com/kb.git', branch: 'main', poll_interval: '1m', poll_interval_ms: 60_000, path: '' });
    const viaFlag = loadConfig({ file: join(dir, 'reprise.yaml'), env: {}, cwd: '/' });
    expect(viaFlag.catalog.dir).toBe(join(dir, 'kb'));
  });

  it('finds the file without --config: $REPRISE_CONFIG, else ./reprise.yaml, else none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'reprise-config-'));
    expect(configFile({ env: {}, cwd: dir })).toBeUndefined();
    expect(loadConfig({ env: {}, cwd: dir }).store.data_dir).toBe(join(dir, 'data'));
    writeFileSync(join(dir, 'reprise.yaml'), 'store:\n  data_dir: here-data\n');
    writeFileSync(join(dir, 'other.yaml'), 'store:\n  data_dir: other-data\n');
    expect(configFile({ env: {}, cwd: dir })).toBe(join(dir, 'reprise.yaml'));
    expect(loadConfig({ env: {}, cwd: dir }).store.data_dir).toBe(join(dir, 'here-data'));
    expect(loadConfig({ env: { REPRISE_CONFIG: 'other.yaml' }, cwd: dir }).store.data_dir).toBe(join(dir, 'other-data'));
    expect(loadConfig({ file: 'other.yaml', env: { REPRISE_CONFIG: 'reprise.yaml' }, cwd: dir }).store.data_dir).toBe(join(dir, 'other-data'));
    // An empty REPRISE_CONFIG is not set.
    expect(configFile({ env: { REPRISE_CONFIG: ' ' }, cwd: dir })).toBe(join(dir, 'reprise.yaml'));
  });

  it('a companion command validates only the sections it reads; one it does not read takes its defaults', () => {
    // Slack on without a channel (the channel is in the bot's env, not this shell's); a forge with no token.
    const text = [
      'store:',
      '  data_dir: /var/lib/reprise',
      'transport:',
      '  slack:',
      '    bot_token: xoxb-0000000000-0000000000000-abcdefghijklmnopqrstuvwx',
      '    signing_secret: 0123456789abcdef0123456789abcdef',
      'forge:',
      '  repo: acme/kb',
      '',
    ].join('\n');
    const full = problemsOf(text).problems.map((p) => p.path);
    expect(full).toEqual(expect.arrayContaining(['transport.slack.channel', 'forge.token', 'catalog.git.url']));
    const cfg = parseConfigText(text, { env: {}, cwd, sections: ['store', 'ledger', 'catalog'] });
    expect(cfg.store.data_dir).toBe('/var/lib/reprise');
    // What it does not read is the default, never half a section.
    expect(cfg.transport.slack.bot_token).toBeUndefined();
    expect(cfg.forge).toBeUndefined();
    // A problem in a section it reads still stops it, with the rest left out of the report.
    try {
      parseConfigText(`${text}ledger:\n  resolve_window: soon\n`, { env: {}, cwd, sections: ['store', 'ledger'] });
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems.map((p) => p.path)).toEqual(['ledger.resolve_window']);
    }
    // An unknown section is a typo that may matter to it: reported.
    expect(() => parseConfigText('stroe:\n  data_dir: x\n', { env: {}, cwd, sections: ['store'] })).toThrow(ConfigError);
  });

  it('REPRISE_CATALOG_GIT_URL turns catalog sync on without a config file; the clone dir resolves against the file', () => {
    const cfg = loadConfig({ env: { REPRISE_CATALOG_GIT_URL: 'https://example.com/kb.git', REPRISE_CATALOG_GIT_BRANCH: 'prod' }, cwd });
    expect(cfg.catalog.git).toMatchObject({ url: 'https://example.com/kb.git', branch: 'prod', poll_interval_ms: 300_000, path: '' });
    expect(cfg.catalog.git?.clone_dir).toBeUndefined();
    expect(loadConfig({ env: { REPRISE_CATALOG_GIT_BRANCH: 'prod' }, cwd }).catalog.git).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), 'reprise-config-'));
    writeFileSync(join(dir, 'reprise.yaml'), 'catalog:\n  git:\n    url: git@example.com:kb.git\n    clone_dir: clones/kb\n    poll_interval: 0s\n');
    expect(() => loadConfig({ file: join(dir, 'reprise.yaml'), env: {}, cwd })).toThrow(ConfigError);
    writeFileSync(join(dir, 'reprise.yaml'), 'catalog:\n  git:\n    url: git@example.com:kb.git\n    clone_dir: clones/kb\n');
    expect(loadConfig({ file: join(dir, 'reprise.yaml'), env: {}, cwd }).catalog.git?.clone_dir).toBe(join(dir, 'clones', 'kb'));
  });

  it('a missing file is a config error, not a crash', () => {
    expect(() => loadConfig({ file: '/nonexistent/reprise.yaml', env: {}, cwd })).toThrow(ConfigError);
    try {
      loadConfig({ file: '/nonexistent/reprise.yaml', env: {}, cwd });
    } catch (err) {
      expect((err as ConfigError).problems[0]?.rule).toBe('cannot be read (ENOENT)');
    }
  });

  it('maskSecrets hides every secret and keeps the rest', () => {
    const cfg = parseConfigText('server:\n  bearer_token: b-long-enough-token-value\n', {
      env: {
        SLACK_BOT_TOKEN: 'x',
        SLACK_APP_TOKEN: 'xapp',
        SLACK_CHANNEL: 'C1',
        MATRIX_HOMESERVER_URL: 'https://hs.example',
        MATRIX_ACCESS_TOKEN: 'm',
        MATRIX_ROOM_ID: '!r:hs',
      },
      cwd,
    });
    const masked = maskSecrets(cfg);
    expect(masked.server.bearer_token).toBe('***');
    expect(masked.transport.slack.bot_token).toBe('***');
    expect(masked.transport.matrix.access_token).toBe('***');
    expect(masked.transport.slack.app_token).toBe('***');
    expect(masked.transport.slack.channel).toBe('C1');
    expect(masked.transport.slack.signing_secret).toBeUndefined();
    expect(masked.server.port).toBe(8080);
    expect(cfg.server.bearer_token).toBe('b-long-enough-token-value');
  });

  it('maskSecrets hides a token in the catalog git URL', () => {
    const cfg = parseConfigText('', { env: { REPRISE_CATALOG_GIT_URL: 'https://x-access-token:ghp_secret@github.com/acme/kb.git' }, cwd });
    expect(maskSecrets(cfg).catalog.git?.url).toBe('https://***@github.com/acme/kb.git');
    expect(cfg.catalog.git?.url).toContain('ghp_secret');
  });

  it('defaultConfig equals an empty file apart from path resolution', () => {
    const d = defaultConfig();
    expect(d.catalog.dir).toBe('catalog');
    expect({ ...d, catalog: {}, store: {} }).toEqual({ ...parseConfigText('', { env: {}, cwd }), catalog: {}, store: {} });
  });
});

describe('trigger rules', () => {
  it('accept a severity or a list of them and keep label globs', () => {
    const cfg = parseConfigText(
      [
        'trigger:',
        '  match:',
        '    - severity: critical',
        '    - severity: [warning, info]',
        '      alertname: "Kube*"',
        '      labels: { team: "sre-*" }',
        '  ignore:',
        '    - namespace: "test-*"',
        '',
      ].join('\n'),
      { env: {}, cwd },
    );
    expect(cfg.trigger.match).toEqual([{ severity: ['critical'] }, { severity: ['warning', 'info'], alertname: 'Kube*', labels: { team: 'sre-*' } }]);
    expect(cfg.trigger.ignore).toEqual([{ namespace: 'test-*' }]);
  });

  it('reject non-string label values with a hint', () => {
    const { problems } = problemsOf('trigger:\n  match:\n    - labels: { code: 500 }\n');
    expect(problems).toEqual([{ path: 'trigger.match[0].labels.code', value: 500, rule: 'label values must be strings (quote them)', source: 'line 3' }]);
  });
});
