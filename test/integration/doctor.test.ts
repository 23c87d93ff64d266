/**
 * `reprise doctor` against the real-protocol fakes: each check reports ✓, ✗ with a fix, or
 * skipped, and the exit status follows. The command runs in-process with buffered io.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tryLockStore, storeLockPath } from '../../src/adapters/keyv/store-lock.js';
import { startControlServer } from '../../src/http/control-server.js';
import { silentLogger } from '../../src/ports/logger.js';
import { controlSocketPath } from '../../src/runtime/serve-owner.js';
import { doctor } from '../../src/cli/doctor.js';
import type { CliIO } from '../../src/runtime/cli-io.js';
import { writeServeOwner } from '../../src/runtime/serve-owner.js';
import { startK8sHttpServer } from '../fakes/mcp-k8s-server.js';
import { startMatrixFake } from '../fakes/matrix-homeserver.js';
import { startGitHubFake, type GitHubFake } from '../fakes/github-fake.js';
import { startPagerDutyFake } from '../fakes/pagerduty-fake.js';
import { startOpenAIFake, type OpenAIFake } from '../fakes/openai-fake.js';
import { startSlackFake, type SlackFake } from '../fakes/slack-fake.js';
import { cleanup, makeTmpDir, REPO_ROOT } from './helpers/spawn-bot.js';

function bufferIO(env: NodeJS.ProcessEnv, cwd: string): CliIO & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { stdout: (t) => void (out += t), stderr: (t) => void (err += t), stdin: async () => '', env, cwd, out: () => out, err: () => err };
}

const lineOf = (out: string, check: string): string => out.split('\n').find((l) => l.slice(2).startsWith(`${check}:`)) ?? `(no ${check} line in:\n${out})`;

let tmp: string;
let slack: SlackFake;
let github: GitHubFake;
let openai: OpenAIFake;

beforeAll(async () => {
  tmp = makeTmpDir('reprise-doctor-');
  [slack, github, openai] = await Promise.all([
    startSlackFake(),
    startGitHubFake({ repo: 'acme/kb', token: 'gh-secret-token' }),
    startOpenAIFake(() => ({ content: 'OK' })),
  ]);
});
afterAll(async () => {
  await Promise.all([slack?.close(), github?.close(), openai?.close()]);
  cleanup();
});

/** A config file in its own folder, with the bundled catalog and a data dir of its own. */
function configFile(name: string, yaml: string, catalogExtra = ''): { file: string; dataDir: string } {
  const dataDir = join(tmp, `${name}-data`);
  const file = join(tmp, `${name}.yaml`);
  writeFileSync(file, `catalog:\n  dir: ${join(REPO_ROOT, 'catalog')}\n${catalogExtra}store:\n  data_dir: ${dataDir}\n${yaml}`);
  return { file, dataDir };
}

describe('reprise doctor', () => {
  it('all defaults: config, catalog and store pass, the rest is skipped, exit 0', async () => {
    const io = bufferIO({ REPRISE_DATA_DIR: join(tmp, 'defaults-data') }, REPO_ROOT);
    const code = await doctor([], io);
    const out = io.out();
    expect(code, out + io.err()).toBe(0);
    expect(lineOf(out, 'config')).toMatch(/^✓ config: /);
    expect(lineOf(out, 'catalog')).toMatch(/^✓ catalog: .*entries loaded, 0 errors/);
    expect(lineOf(out, 'store')).toMatch(/^✓ store: .*writable; lock free \(no bot running on it\); schema v2 \(new store\)$/);
    for (const c of ['catalog sync', 'slack', 'matrix', 'model', 'mcp', 'github', 'oncall']) expect(lineOf(out, c)).toBe(`– ${c}: skipped: not configured`);
  });

  it('on call: ✓ names who each route has now; a PagerDuty route that cannot answer is ✗ with why and the fix, the token never printed', async () => {
    const token = 'pd-doctor-secret-0123456789';
    const pd = await startPagerDutyFake({
      token,
      oncalls: { PPOL1: [{ escalation_level: 1, user: { id: 'PU1', name: 'Pat Primary', email: 'pat@example.org' }, end: null }] },
    });
    try {
      const rotation = 'oncall:\n  rotation: { people: [ann], start: "2026-01-05" }\n  people: [{ name: ann, email: ann@example.org }]\n';
      const good = configFile(
        'oncall-good',
        `${rotation}  routes:\n    - { name: payments, match: { namespace: "payments*" }, pagerduty: { escalation_policy: PPOL1 } }\n`,
      );
      const env = { REPRISE_PAGERDUTY_TOKEN: token, REPRISE_PAGERDUTY_FROM: 'bot@example.org', REPRISE_PAGERDUTY_API_URL: pd.apiUrl };
      const io = bufferIO(env, REPO_ROOT);
      const code = await doctor(['--config', good.file], io);
      expect(code, io.out() + io.err()).toBe(0);
      expect(lineOf(io.out(), 'oncall')).toBe('✓ oncall: payments: Pat Primary (pagerduty); default: ann (rotation)');
      const bad = configFile('oncall-bad', `oncall:\n  pagerduty: { escalation_policy: PPOL1 }\n`);
      const io2 = bufferIO({ ...env, REPRISE_PAGERDUTY_TOKEN: 'wrong-token-0123456789' }, REPO_ROOT);
      expect(await doctor(['--config', bad.file], io2)).toBe(1);
      const line = lineOf(io2.out(), 'oncall');
      expect(line).toMatch(/^✗ oncall: default: unknown \(.+\) — fix: .*pagerduty\.token/);
      expect(io2.out()).not.toContain('wrong-token-0123456789');
    } finally {
      await pd.close();
    }
  });

  it('an invalid config is a ✗ and exit 2', async () => {
    const file = join(tmp, 'bad.yaml');
    writeFileSync(file, 'store:\n  snapshot_every: -3\n');
    const io = bufferIO({}, tmp);
    expect(await doctor(['--config', file], io)).toBe(2);
    expect(io.out()).toMatch(/^✗ config: /);
    expect(io.err()).toMatch(/snapshot_every/);
  });

  it('Slack with a bad token: ✗ naming invalid_auth and the fix, exit 1, the token never printed', async () => {
    const { file } = configFile(
      'slack-bad',
      `transport:\n  slack:\n    bot_token: xoxb-wrong-secret\n    signing_secret: slack-signing-secret\n    api_url: ${slack.apiUrl}\n    channel: C0ALERTS\n`,
    );
    const io = bufferIO({}, tmp);
    const code = await doctor(['--config', file], io);
    expect(code).toBe(1);
    const line = lineOf(io.out(), 'slack');
    expect(line).toMatch(/^✗ slack: auth\.test: Slack answered invalid_auth — fix: .*SLACK_BOT_TOKEN/);
    expect(io.out()).not.toContain('xoxb-wrong-secret');
    expect(slack.calls('auth.test').length).toBeGreaterThan(0);
  });

  it('Slack with the right token: ✓ auth.test and channel membership; a channel the bot is not in is ✗', async () => {
    const { file } = configFile(
      'slack-ok',
      `transport:\n  slack:\n    bot_token: ${slack.botToken}\n    signing_secret: slack-signing-secret\n    api_url: ${slack.apiUrl}\n    channel: C0ALERTS\n`,
    );
    const io = bufferIO({}, tmp);
    expect(await doctor(['--config', file], io), io.out()).toBe(0);
    expect(lineOf(io.out(), 'slack')).toMatch(/^✓ slack: auth\.test ok .*member of C0ALERTS/);

    slack.setBehaviour({ notMemberOf: ['C0ALERTS'] });
    const io2 = bufferIO({}, tmp);
    expect(await doctor(['--config', file], io2)).toBe(1);
    expect(lineOf(io2.out(), 'slack')).toMatch(/^✗ slack: .*not a member of C0ALERTS — fix: invite the bot/);
    slack.setBehaviour({ notMemberOf: [] });
  });

  it('GitHub without push rights: ✗ with the fix; with them ✓', async () => {
    const { file } = configFile(
      'github',
      `forge:\n  repo: acme/kb\n  token: gh-secret-token\n  api_url: ${github.url}\n`,
      `  git:\n    url: ${join(tmp, 'no-such-remote.git')}\n`,
    );
    github.setPermissions({ pull: true, push: false });
    const io = bufferIO({}, tmp);
    expect(await doctor(['--config', file], io), io.out() + io.err()).toBe(1);
    expect(lineOf(io.out(), 'github')).toMatch(/^✗ github: acme\/kb: readable, but these credentials cannot push — fix: give the token/);
    expect(io.out()).not.toContain('gh-secret-token');

    github.setPermissions({ pull: true, push: true });
    const io2 = bufferIO({}, tmp);
    await doctor(['--config', file], io2);
    expect(lineOf(io2.out(), 'github')).toMatch(/^✓ github: acme\/kb: read and push/);
  });

  it('the model: ✓ after a tiny call to the OpenAI fake; unreachable is ✗', async () => {
    const before = openai.requests.length;
    const { file } = configFile(
      'model',
      `server:\n  bearer_token: webhook-secret-for-doctor\nmodel:\n  base_url: ${openai.baseUrl}\n  model: gpt-test\n  api_key: sk-model-secret\n`,
    );
    const io = bufferIO({}, tmp);
    expect(await doctor(['--config', file, '--json'], io), io.out()).toBe(0);
    const report = JSON.parse(io.out()) as { ok: boolean; checks: Array<{ check: string; status: string }> };
    expect(report.checks.find((c) => c.check === 'model')?.status).toBe('ok');
    expect(openai.requests.length).toBe(before + 1);
    expect(io.out()).not.toContain('sk-model-secret');

    const { file: down } = configFile(
      'model-down',
      `server:\n  bearer_token: webhook-secret-for-doctor\nmodel:\n  base_url: http://127.0.0.1:1/v1\n  model: gpt-test\n`,
    );
    const io2 = bufferIO({}, tmp);
    expect(await doctor(['--config', down, '--timeout', '2'], io2)).toBe(1);
    expect(lineOf(io2.out(), 'model')).toMatch(/^✗ model: gpt-test: .* — fix: check model\.base_url/);
  });

  it('Matrix: ✓ whoami and a joined room; a bad token and a room not joined are ✗', async () => {
    const matrix = await startMatrixFake({ botToken: 'mx-secret-token', rooms: [{ id: '!ops:fake.test' }, { id: '!other:fake.test', join: false }] });
    try {
      const cfg = (token: string, room: string) =>
        `transport:\n  matrix:\n    homeserver_url: ${matrix.url}\n    access_token: ${token}\n    room_id: "${room}"\n`;
      const good = bufferIO({}, tmp);
      expect(await doctor(['--config', configFile('mx-ok', cfg('mx-secret-token', '!ops:fake.test')).file], good), good.out() + good.err()).toBe(0);
      expect(lineOf(good.out(), 'matrix')).toMatch(
        new RegExp(`^✓ matrix: whoami ${matrix.botUserId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; joined !ops:fake.test`),
      );

      const bad = bufferIO({}, tmp);
      expect(await doctor(['--config', configFile('mx-bad', cfg('mx-wrong-token', '!ops:fake.test')).file], bad)).toBe(1);
      expect(lineOf(bad.out(), 'matrix')).toMatch(/^✗ matrix: whoami: .* — fix: the access token is wrong/);
      expect(bad.out()).not.toContain('mx-wrong-token');

      const out = bufferIO({}, tmp);
      expect(await doctor(['--config', configFile('mx-room', cfg('mx-secret-token', '!other:fake.test')).file], out)).toBe(1);
      expect(lineOf(out.out(), 'matrix')).toMatch(/^✗ matrix: .*not joined to !other:fake\.test — fix: invite/);
    } finally {
      await matrix.close();
    }
  });

  it('store: says the schema version, and is ✗ on a store written by a newer reprise', async () => {
    const { createStore } = await import('../../src/adapters/keyv/keyv-store.js');
    const { STORE_SCHEMA_KEY } = await import('../../src/core/ledger/store-schema.js');
    const { file, dataDir } = configFile('schema', '');
    const store = createStore(undefined, dataDir);
    await store.set(STORE_SCHEMA_KEY, { version: 1 });
    await store.close();
    const io = bufferIO({}, tmp);
    expect(await doctor(['--config', file], io)).toBe(0);
    expect(lineOf(io.out(), 'store')).toMatch(/^✓ store: .*; schema v2/);

    const newer = createStore(undefined, dataDir);
    await newer.set(STORE_SCHEMA_KEY, { version: 99 });
    await newer.close();
    const io2 = bufferIO({}, tmp);
    expect(await doctor(['--config', file], io2)).toBe(1);
    expect(lineOf(io2.out(), 'store')).toMatch(
      /^✗ store: .*schema version 99, written by a newer reprise.* — fix: run the reprise version that wrote this store/,
    );
  });

  it('MCP servers: ✓ with the tool count over HTTP; an unreachable one is ✗', async () => {
    const mcp = await startK8sHttpServer({ pods: {}, events: {}, logs: {} });
    try {
      const cfg = `tools:\n  servers:\n    - name: k8s\n      access: read\n      transport: http\n      url: ${mcp.url}\n    - name: gone\n      access: read\n      transport: http\n      url: http://127.0.0.1:1/mcp\n`;
      const io = bufferIO({}, tmp);
      expect(await doctor(['--config', configFile('mcp', cfg).file, '--timeout', '3'], io), io.out()).toBe(1);
      expect(lineOf(io.out(), 'mcp k8s')).toMatch(/^✓ mcp k8s: http .*: [1-9]\d* tools/);
      expect(lineOf(io.out(), 'mcp gone')).toMatch(/^✗ mcp gone: http .* — fix: check tools\.servers/);
    } finally {
      await mcp.close();
    }
  });

  it('MCP servers: ✗ when tools.allow names a tool the server lacks, a non-read-only tool, or a write server', async () => {
    const mcp = await startK8sHttpServer({ pods: {}, events: {}, logs: {} });
    try {
      const server = (access: string) => `tools:\n  servers:\n    - name: k8s\n      access: ${access}\n      transport: http\n      url: ${mcp.url}\n`;
      const run = async (label: string, cfg: string) => {
        const io = bufferIO({}, tmp);
        const code = await doctor(['--config', configFile(label, cfg).file, '--timeout', '3'], io);
        return { code, line: lineOf(io.out(), 'mcp k8s'), out: io.out() };
      };
      const good = await run('mcp-good', `${server('read')}  allow: [k8s__pod_status, k8s__events, kb_search]\n`);
      expect(good.line, good.out).toMatch(/^✓ mcp k8s: http .*: \d+ tools; allowed: pod_status, events$/);

      const typo = await run('mcp-typo', `${server('read')}  allow: [k8s__pod_stats]\n`);
      expect(typo.code).toBe(1);
      expect(typo.line).toMatch(
        /^✗ mcp k8s: .*tools\.allow names k8s__pod_stats, which k8s does not offer \(it offers: pod_status, events, logs.*\) — fix: correct the names/,
      );

      const destructive = await run('mcp-write-tool', `${server('read')}  allow: [k8s__pod_status, k8s__delete_pod]\n`);
      expect(destructive.code).toBe(1);
      expect(destructive.line).toMatch(/^✗ mcp k8s: .*k8s__delete_pod is not read-only \(readOnlyHint: false\) and will be refused/);

      const writeServer = await run('mcp-write-server', `${server('write')}  allow: [k8s__pod_status]\n`);
      expect(writeServer.code).toBe(1);
      expect(writeServer.line).toMatch(/^✗ mcp k8s: .*declared access: write, so its tools on tools\.allow \(k8s__pod_status\) are refused/);
    } finally {
      await mcp.close();
    }
  });

  it('catalog sync: asks the running bot through its control socket; failing fetches are ✗', async () => {
    const { file, dataDir } = configFile('sync', '', `  git:\n    url: https://user:git-secret@example.test/acme/kb.git\n`);
    let catalog: Record<string, unknown> = { ok: true, head: 'abc1234', entries: 45, consecutiveFailures: 0 };
    mkdirSync(dataDir, { recursive: true });
    const socket = controlSocketPath(dataDir);
    const control = await startControlServer(
      socket,
      { feedback: async () => ({}), status: async () => ({ pid: 1, readiness: { ready: true, reasons: [], checks: { catalog } } }) },
      silentLogger,
    );
    try {
      writeServeOwner(dataDir, { pid: process.pid, socket, port: 8080, host: '127.0.0.1', user: 'oncall', startedAt: 'now' });
      const io = bufferIO({}, tmp);
      await doctor(['--config', file], io);
      expect(lineOf(io.out(), 'catalog sync')).toMatch(/^✓ catalog sync: running bot pid \d+: .*head=abc1234/);
      expect(io.out()).not.toContain('git-secret');

      catalog = {
        ok: true,
        head: 'abc1234',
        consecutiveFailures: 3,
        lastError: { message: 'authentication failed for https://user:git-secret@example.test/acme/kb.git' },
      };
      const io2 = bufferIO({}, tmp);
      expect(await doctor(['--config', file], io2)).toBe(1);
      expect(lineOf(io2.out(), 'catalog sync')).toMatch(
        /^✗ catalog sync: serving the last good index, but 3 fetch\(es\) failed in a row: authentication failed .* — fix: check catalog\.git\.url/,
      );
      expect(io2.out()).not.toContain('git-secret');
    } finally {
      await control.close();
    }
  });

  it('a store locked by another process: says who holds it', async () => {
    const { file, dataDir } = configFile('locked', '');
    const io0 = bufferIO({}, tmp);
    expect(await doctor(['--config', file], io0)).toBe(0); // creates the data dir
    const lock = tryLockStore(storeLockPath(undefined, dataDir)!);
    expect(lock).toBeDefined();
    try {
      writeServeOwner(dataDir, {
        pid: 424242,
        socket: join(dataDir, 'no.sock'),
        port: 8080,
        host: '127.0.0.1',
        user: 'oncall',
        startedAt: '2026-12-01T06:00:00Z',
      });
      const io = bufferIO({}, tmp);
      await doctor(['--config', file], io);
      expect(lineOf(io.out(), 'store')).toMatch(/lock held by reprise serve \(pid 424242, user oncall, since 2026-12-01T06:00:00Z\)/);
    } finally {
      lock?.release();
    }
  });
});
