/**
 * `reprise doctor`: one line per dependency the configured bot needs — config, catalog, store,
 * Slack, Matrix, Mattermost, model, MCP servers, GitHub — each ✓, ✗ with how to fix it, or skipped when not
 * configured. Every network check is bounded by a short timeout; secrets are never printed.
 *
 * Over 450 lines on purpose: one short, independent check per dependency, in the order doctor
 * prints them, sharing its line format and timeouts; split by check they would be a dozen files
 * read only together.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { webApi } from '@slack/bolt';
import { embeddedStoreFile } from '../adapters/keyv/keyv-store.js';
import { ensurePrivateDir, looseModes } from '../adapters/keyv/private-files.js';
import { storeLockPath, tryLockStore } from '../adapters/keyv/store-lock.js';
import type { Config } from '../config/schema.js';
import { CatalogError } from '../core/catalog/load-catalog.js';
import { createRedactor } from '../core/redact.js';
import { lintCatalog, lintSummary } from '../core/catalog/lint-catalog.js';
import { assertNoUnfinishedImport, readStoreSchema, STORE_SCHEMA_VERSION } from '../core/ledger/store-schema.js';
import { systemClock } from '../ports/clock.js';
import { silentLogger } from '../ports/logger.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import { configFile } from '../config/load-config.js';
import { controlRequest } from '../runtime/control-client.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';
import { readServeOwner } from '../runtime/serve-owner.js';
import { describeStore, openStore } from '../runtime/open-store.js';

const USAGE = `reprise doctor [--config FILE] [--json] [--timeout SECONDS]

Checks what the configured bot depends on, one line each: config, catalog (lint, git sync),
store (writable, lock holder), file modes (the data dir 0700, its files 0600), Slack (auth.test, channel), Matrix (whoami, room), Mattermost (users/me, channel, WebSocket), model (a tiny
call), MCP servers (list tools), GitHub (repo access, push rights). ✓ ok, ✗ with the fix,
– skipped when not configured. Exit status 1 on any ✗, 2 on a usage or config error.
  --timeout SECONDS   limit of each network check (default 5)`;

export interface CheckResult {
  check: string;
  status: 'ok' | 'fail' | 'skip';
  detail: string;
  fix?: string;
}

const ok = (check: string, detail: string): CheckResult => ({ check, status: 'ok', detail });
const fail = (check: string, detail: string, fix: string): CheckResult => ({ check, status: 'fail', detail, fix });
const skip = (check: string, detail = 'not configured'): CheckResult => ({ check, status: 'skip', detail });

class TimeoutError extends Error {}

/** Rejects with a TimeoutError after `ms`; the work itself is abandoned, not awaited. */
function withTimeout<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what}: no answer within ${ms} ms`)), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, t]).finally(() => clearTimeout(timer));
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Removes anything that looks like a credential from text we print (URLs with userinfo, bearer tokens, known secrets). */
function redact(text: string, secrets: readonly (string | undefined)[]): string {
  return createRedactor(secrets).text(text);
}

async function checkCatalog(config: Config, io: CliIO): Promise<CheckResult> {
  if (config.catalog.git) return skip('catalog', `served from git (${redact(config.catalog.git.url, [])}); see catalog sync`);
  const dir = resolve(io.cwd, config.catalog.dir);
  try {
    const report = await lintCatalog(dir);
    const summary = `${dir}: ${lintSummary(report)}`;
    if (report.errors > 0) return fail('catalog', summary, `run \`reprise catalog lint ${dir}\` and fix the errors it lists`);
    if (report.entries === 0) return fail('catalog', summary, 'the folder holds no entries; point catalog.dir at the folder of runbook .md files');
    return ok('catalog', summary);
  } catch (err) {
    if (err instanceof CatalogError)
      return fail('catalog', message(err), 'set catalog.dir (relative to the config file) to the folder holding the catalog .md files');
    throw err;
  }
}

async function checkCatalogSync(config: Config, timeoutMs: number): Promise<CheckResult> {
  const git = config.catalog.git;
  if (!git) return skip('catalog sync');
  const owner = readServeOwner(config.store.data_dir);
  if (!owner) return skip('catalog sync', `no running bot on ${config.store.data_dir} to ask; \`reprise serve\` clones ${redact(git.url, [])} on start`);
  const reply = await controlRequest(owner.socket, 'GET', '/v1/status', undefined, timeoutMs);
  if (!reply.ok) {
    if (reply.reason === 'absent') return skip('catalog sync', `the bot that last ran here (pid ${owner.pid}) is not running`);
    return fail(
      'catalog sync',
      `cannot ask the running bot (pid ${owner.pid}): ${reply.message}`,
      reply.reason === 'denied' ? `run doctor as ${owner.user || "the bot's user"}` : 'check the bot is healthy (GET /readyz)',
    );
  }
  const body = reply.body as { result?: { readiness?: { checks?: Record<string, Record<string, unknown>> } } } & {
    readiness?: { checks?: Record<string, Record<string, unknown>> };
  };
  const readiness = body.result?.readiness ?? body.readiness;
  const cat = readiness?.checks?.['catalog'];
  if (!cat) return fail('catalog sync', 'the running bot reports no catalog state', 'upgrade the running bot, or restart it');
  const facts = Object.entries(cat)
    .filter(([k, v]) => k !== 'ok' && k !== 'reason' && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'))
    .map(([k, v]) => `${k}=${redact(String(v), [])}`)
    .join(' ');
  if (cat['ok'] !== true)
    return fail(
      'catalog sync',
      `${String(cat['reason'] ?? 'not indexed')} (${facts})`,
      `check catalog.git.url / branch and the credentials, then \`reprise catalog sync\``,
    );
  const failures = typeof cat['consecutiveFailures'] === 'number' ? cat['consecutiveFailures'] : 0;
  if (failures > 0) {
    const last = cat['lastError'] as { message?: unknown } | undefined;
    return fail(
      'catalog sync',
      `serving the last good index, but ${failures} fetch(es) failed in a row: ${redact(String(last?.message ?? 'unknown error'), [config.forge?.token])} (${facts})`,
      'check catalog.git.url / branch and the credentials, then `reprise catalog sync`',
    );
  }
  return ok('catalog sync', `running bot pid ${owner.pid}: ${facts}`);
}

/** The store's schema version, read without writing; a ✗ when this build cannot serve it. */
async function storeSchemaLine(config: Config): Promise<{ text: string } | { fail: string; fix: string }> {
  const file = embeddedStoreFile(config.store.url, config.store.data_dir);
  if (file === undefined || !existsSync(file)) return { text: `schema v${STORE_SCHEMA_VERSION} (new store)` };
  const store = openStore(config, 'read');
  try {
    await assertNoUnfinishedImport(store);
    const s = await readStoreSchema(store);
    if (s.empty) return { text: `schema v${STORE_SCHEMA_VERSION} (no ledger yet)` };
    return { text: s.pending.length === 0 ? `schema v${s.version}` : `schema v${s.version} (migrated to v${STORE_SCHEMA_VERSION} by the next serve)` };
  } catch (err) {
    return {
      fail: message(err),
      fix: /never finished/.test(message(err))
        ? 'empty the store and run `reprise ledger import` again'
        : 'run the reprise version that wrote this store (or newer), or restore a backup with `reprise ledger import`',
    };
  } finally {
    await store.close().catch(() => undefined);
  }
}

async function checkStore(config: Config): Promise<CheckResult> {
  const base = checkStoreFiles(config);
  if (base.status !== 'ok' || /^(rediss?|memory):/i.test(config.store.url ?? '')) return base;
  const schema = await storeSchemaLine(config);
  if ('fail' in schema) return fail('store', `${describeStore(config)}: ${schema.fail}`, schema.fix);
  return ok('store', `${base.detail}; ${schema.text}`);
}

function checkStoreFiles(config: Config): CheckResult {
  const where = describeStore(config);
  if (/^rediss?:/i.test(config.store.url ?? '')) return skip('store', `shared Redis store ${where} is not probed by doctor`);
  if (/^memory:/i.test(config.store.url ?? '')) return ok('store', 'memory:// (lives in the process; nothing to check)');
  const dir = resolve(config.store.data_dir);
  try {
    ensurePrivateDir(dir);
    const probe = join(dir, `.doctor-probe-${process.pid}`);
    writeFileSync(probe, 'ok', { mode: 0o600 });
    rmSync(probe, { force: true });
  } catch (err) {
    return fail(
      'store',
      `${where}: the data dir ${dir} is not writable (${message(err)})`,
      'fix its permissions or set store.data_dir / REPRISE_DATA_DIR to a writable folder',
    );
  }
  const lockPath = storeLockPath(config.store.url, config.store.data_dir);
  if (lockPath === undefined) return ok('store', `${where} writable`);
  let lock;
  try {
    lock = tryLockStore(lockPath);
  } catch (err) {
    return fail('store', `${where}: ${message(err)}`, 'fix the permissions of the data dir');
  }
  if (lock) {
    lock.release();
    return ok('store', `${where} writable; lock free (no bot running on it)`);
  }
  const owner = readServeOwner(config.store.data_dir);
  const who = owner
    ? `reprise serve (pid ${owner.pid}, user ${owner.user || '?'}, since ${owner.startedAt || '?'})`
    : 'another reprise process (no serve.json: not a running bot)';
  return ok('store', `${where} writable; lock held by ${who}`);
}

/**
 * Who else can read the store (SPEC §11): the data dir must be 0700 and every file in it (and the
 * embedded store's files, wherever they are) 0600. `serve` creates them so whatever the umask;
 * anything looser was made by hand, a copy or an older version.
 */
function checkModes(config: Config): CheckResult {
  const dir = resolve(config.store.data_dir);
  if (!existsSync(dir)) return ok('file modes', `${dir} does not exist yet; serve creates it 0700 with its files 0600`);
  const store = embeddedStoreFile(config.store.url, config.store.data_dir);
  const lock = storeLockPath(config.store.url, config.store.data_dir);
  const extra = [...(store ? [store, `${store}-wal`, `${store}-shm`] : []), ...(lock ? [lock] : [])].filter((f) => existsSync(f));
  const loose = looseModes(dir, extra);
  if (loose.length === 0) return ok('file modes', `${dir} and its files are readable by their owner only`);
  const shown = loose.slice(0, 8).map((l) => `${l.path} (${l.mode})`);
  const dirs = loose.filter((l) => l.fix.startsWith('chmod 700')).map((l) => l.path);
  const files = loose.filter((l) => l.fix.startsWith('chmod 600')).map((l) => l.path);
  const fix = [...(dirs.length > 0 ? [`chmod 700 ${dirs.join(' ')}`] : []), ...(files.length > 0 ? [`chmod 600 ${files.join(' ')}`] : [])].join(' && ');
  return fail(
    'file modes',
    `other users can read or write ${shown.join(', ')}${loose.length > shown.length ? ` and ${loose.length - shown.length} more` : ''}: the store holds alert text and notes`,
    fix,
  );
}

const SLACK_FIX: Record<string, string> = {
  invalid_auth: "the bot token is wrong or revoked: set transport.slack.bot_token (SLACK_BOT_TOKEN) to the app's xoxb- token",
  not_authed: 'no bot token reached Slack: set SLACK_BOT_TOKEN',
  account_inactive: 'the app was uninstalled or its token revoked: reinstall the app and update SLACK_BOT_TOKEN',
  token_revoked: 'the token was revoked: reinstall the app and update SLACK_BOT_TOKEN',
  channel_not_found: 'the channel id is wrong or the bot cannot see it: set SLACK_CHANNEL to the channel id (C…) and invite the bot',
  missing_scope: 'the app lacks a scope: add channels:read (groups:read for private channels) and reinstall',
};

async function checkSlack(config: Config, timeoutMs: number): Promise<CheckResult> {
  const s = config.transport.slack;
  if (!s.bot_token) return skip('slack');
  const client = new webApi.WebClient(s.bot_token, {
    ...(s.api_url ? { slackApiUrl: s.api_url } : {}),
    timeout: timeoutMs,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    logger: { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => 'error' as never, setName() {} },
  });
  const api = s.api_url ?? 'https://slack.com/api/';
  const explain = (err: unknown): { detail: string; fix: string } => {
    const code = (err as { data?: { error?: string } }).data?.error;
    if (code) return { detail: `Slack answered ${code}`, fix: SLACK_FIX[code] ?? `see https://api.slack.com/methods for "${code}"` };
    if (err instanceof TimeoutError)
      return { detail: message(err), fix: `check that ${api} is reachable from here (transport.slack.api_url / SLACK_API_URL, proxy, firewall)` };
    return { detail: `cannot reach ${api}: ${redact(message(err), [s.bot_token])}`, fix: 'check transport.slack.api_url (SLACK_API_URL) and the network' };
  };
  let who: string;
  try {
    const r = await withTimeout(timeoutMs, 'auth.test', client.auth.test());
    who = `${r.user ?? '?'} in ${r.team ?? '?'}`;
  } catch (err) {
    const e = explain(err);
    return fail('slack', `auth.test: ${e.detail}`, e.fix);
  }
  if (!s.channel) return ok('slack', `auth.test ok (${who}); no default channel set (routing rules or ?channel= choose it)`);
  try {
    const r = await withTimeout(timeoutMs, 'conversations.info', client.conversations.info({ channel: s.channel }));
    if (r.channel?.is_member === false)
      return fail('slack', `auth.test ok (${who}); not a member of ${s.channel}`, `invite the bot: /invite @${who.split(' ')[0]} in ${s.channel}`);
    return ok('slack', `auth.test ok (${who}); member of ${s.channel}`);
  } catch (err) {
    const e = explain(err);
    return fail('slack', `auth.test ok (${who}); conversations.info ${s.channel}: ${e.detail}`, e.fix);
  }
}

async function checkMatrix(config: Config, timeoutMs: number): Promise<CheckResult> {
  const m = config.transport.matrix;
  if (!m.homeserver_url || !m.access_token) return skip('matrix');
  const base = m.homeserver_url.replace(/\/+$/, '');
  const get = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${m.access_token}` }, signal: AbortSignal.timeout(timeoutMs) });
    let body: Record<string, unknown> = {};
    try {
      body = (await res.json()) as Record<string, unknown>;
    } catch {
      // not JSON: the status says enough
    }
    return { status: res.status, body };
  };
  let userId: string;
  try {
    const r = await get('/_matrix/client/v3/account/whoami');
    if (r.status === 401 || r.status === 403)
      return fail(
        'matrix',
        `whoami: ${String(r.body['errcode'] ?? r.status)}`,
        'the access token is wrong or expired: set transport.matrix.access_token (MATRIX_ACCESS_TOKEN)',
      );
    if (r.status !== 200 || typeof r.body['user_id'] !== 'string')
      return fail('matrix', `whoami: HTTP ${r.status}`, `check transport.matrix.homeserver_url (${base}) points at the homeserver's client API`);
    userId = r.body['user_id'];
  } catch (err) {
    return fail(
      'matrix',
      `cannot reach ${base}: ${redact(message(err), [m.access_token])}`,
      'check transport.matrix.homeserver_url (MATRIX_HOMESERVER_URL) and the network',
    );
  }
  const rooms = [...new Set([...(m.room_id ? [m.room_id] : []), ...m.rooms])];
  if (rooms.length === 0) return ok('matrix', `whoami ${userId}; no room set`);
  try {
    const r = await get('/_matrix/client/v3/joined_rooms');
    const joined = new Set(Array.isArray(r.body['joined_rooms']) ? (r.body['joined_rooms'] as unknown[]).map(String) : []);
    const missing = rooms.filter((id) => !joined.has(id));
    if (missing.length > 0)
      return fail(
        'matrix',
        `whoami ${userId}; not joined to ${missing.join(', ')}`,
        `invite ${userId} to ${missing.join(', ')} (the bot joins on invite), or fix transport.matrix.room_id / rooms`,
      );
    return ok('matrix', `whoami ${userId}; joined ${rooms.join(', ')}`);
  } catch (err) {
    return fail('matrix', `whoami ${userId}; joined_rooms: ${message(err)}`, 'check the homeserver is reachable');
  }
}

async function checkMattermostSurface(config: Config, timeoutMs: number): Promise<CheckResult> {
  const m = config.transport.mattermost;
  if (!m.url || !m.token || !m.channel) return skip('mattermost');
  const { checkMattermost } = await import('../adapters/mattermost/mattermost-doctor.js');
  const r = await checkMattermost({ url: m.url, token: m.token, channel: m.channel, timeoutMs });
  return r.status === 'ok' ? ok('mattermost', r.detail) : fail('mattermost', r.detail, r.fix ?? '');
}

async function checkModel(config: Config, timeoutMs: number): Promise<CheckResult> {
  const m = config.model;
  if (!m) return skip('model');
  const { createOpenAIModel } = await import('../adapters/openai/openai-model.js');
  const model = createOpenAIModel({ baseUrl: m.base_url, model: m.model, ...(m.api_key ? { apiKey: m.api_key } : {}), timeoutMs, maxRetries: 0 });
  try {
    await withTimeout(
      timeoutMs,
      'model call',
      model.chat({ messages: [{ role: 'user', content: 'Reply with the single word OK.' }], maxOutputTokens: 5, purpose: 'verify' }),
    );
    return ok('model', `${m.model} at ${redact(m.base_url, [])} answered`);
  } catch (err) {
    const status = (err as { status?: number }).status;
    const text = redact(message(err), [m.api_key]);
    if (status === 401 || status === 403)
      return fail('model', `${m.model}: ${text}`, 'the API key is wrong: set model.api_key (REPRISE_MODEL_API_KEY / OPENAI_API_KEY)');
    if (status === 404)
      return fail('model', `${m.model}: ${text}`, 'the model name or base URL is wrong: check model.model (REPRISE_MODEL) and model.base_url (…/v1)');
    return fail('model', `${m.model}: ${text}`, `check model.base_url (${redact(m.base_url, [])}) is reachable and serves Chat Completions`);
  }
}

async function checkMcp(config: Config, io: CliIO, timeoutMs: number): Promise<CheckResult[]> {
  const servers = config.tools.servers;
  if (servers.length === 0) return [skip('mcp')];
  const { connectMcpServer } = await import('../adapters/mcp/mcp-tool-provider.js');
  return Promise.all(
    servers.map(async (s) => {
      const name = `mcp ${s.name}`;
      const where = s.transport === 'http' ? redact(s.url ?? '', Object.values(s.headers)) : (s.command ?? '');
      try {
        const provider = await withTimeout(
          timeoutMs,
          'connect',
          connectMcpServer({
            name: s.name,
            access: s.access,
            transport: s.transport,
            ...(s.command ? { command: s.command } : {}),
            args: s.args,
            env: s.env,
            cwd: io.cwd,
            ...(s.url ? { url: s.url } : {}),
            headers: s.headers,
            connectTimeoutMs: timeoutMs,
          }),
        );
        try {
          const tools = await withTimeout(timeoutMs, 'tools/list', provider.listTools());
          return judgeMcpTools(name, `${s.transport} ${where}`, s.name, s.access, tools, config.tools.allow);
        } finally {
          await provider.close().catch(() => undefined);
        }
      } catch (err) {
        const text = redact(message(err), Object.values(s.headers));
        return fail(
          name,
          `${s.transport} ${where}: ${text}`,
          s.transport === 'http'
            ? 'check tools.servers[].url and its headers (auth), and that the server speaks Streamable HTTP'
            : 'check tools.servers[].command and args start an MCP server on stdio',
        );
      }
    }),
  );
}

/**
 * A reachable server is ✓ only if what `tools.allow` names from it would really be offered to
 * an investigation: each allowlisted tool exists, is not on a `write` server, and is not marked
 * `readOnlyHint: false` (both refused at run time, SPEC §7).
 */
export function judgeMcpTools(
  name: string,
  where: string,
  server: string,
  access: 'read' | 'write',
  tools: readonly { name: string; readOnlyHint?: boolean }[],
  allow: readonly string[],
): CheckResult {
  const prefix = `${server}__`;
  const wanted = allow.filter((t) => t.startsWith(prefix)).map((t) => t.slice(prefix.length));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const offers = `it offers: ${
    tools
      .map((t) => t.name)
      .slice(0, 20)
      .join(', ') || 'nothing'
  }${tools.length > 20 ? ', …' : ''}`;
  const missing = wanted.filter((t) => !byName.has(t));
  if (missing.length > 0) {
    return fail(
      name,
      `${where}: tools.allow names ${missing.map((t) => prefix + t).join(', ')}, which ${server} does not offer (${offers})`,
      `correct the names in tools.allow (as <server>__<tool>)`,
    );
  }
  if (access === 'write' && wanted.length > 0) {
    return fail(
      name,
      `${where}: declared access: write, so its tools on tools.allow (${wanted.map((t) => prefix + t).join(', ')}) are refused`,
      'point tools.servers[] at a read-only server and declare it access: read, or drop its tools from tools.allow',
    );
  }
  const writable = wanted.filter((t) => byName.get(t)?.readOnlyHint === false);
  if (writable.length > 0) {
    return fail(
      name,
      `${where}: ${writable.map((t) => prefix + t).join(', ')} ${writable.length === 1 ? 'is' : 'are'} not read-only (readOnlyHint: false) and will be refused`,
      'drop them from tools.allow, or run the server in its read-only mode',
    );
  }
  const allowed = wanted.length > 0 ? `; allowed: ${wanted.join(', ')}` : '; none on tools.allow yet';
  return ok(name, `${where}: ${tools.length} tools${allowed}`);
}

async function checkGitHub(config: Config, timeoutMs: number): Promise<CheckResult> {
  const f = config.forge;
  if (!f) return skip('github');
  const { forgeFromConfig } = await import('../runtime/curate-context.js');
  const secrets = [f.token, f.app_private_key];
  try {
    const forge = forgeFromConfig(config, silentLogger);
    if (!forge) return skip('github');
    const a = await withTimeout(timeoutMs, 'repository read', forge.access());
    if (!a.push)
      return fail(
        'github',
        `${a.repo}: readable, but these credentials cannot push`,
        'give the token (GITHUB_TOKEN) write access to contents, pull requests and issues of the repository, or install the GitHub App with those permissions',
      );
    return ok('github', `${a.repo}: read and push (default branch ${a.defaultBranch})`);
  } catch (err) {
    const status = (err as { status?: number }).status;
    const text = redact(message(err), secrets);
    if (status === 401) return fail('github', text, 'the token is wrong or expired: set forge.token (GITHUB_TOKEN)');
    if (status === 404)
      return fail(
        'github',
        text,
        `the repository ${f.repo} does not exist or the credentials cannot see it: check forge.repo (REPRISE_GITHUB_REPO) and the token's repository access`,
      );
    if (err instanceof TimeoutError) return fail('github', text, `check forge.api_url (${f.api_url}) is reachable`);
    return fail('github', text, `check forge.api_url (${f.api_url}), forge.repo and the credentials`);
  }
}

/**
 * Who is on call, asked of every configured route's source as a card would ask it (issue 32):
 * ok names each route's people, a route nobody can be named for fails with why. Chat ids are
 * not looked up here (the surfaces are not running); people without an id are named as text.
 */
async function checkOnCall(config: Config, timeoutMs: number): Promise<CheckResult> {
  const { buildOnCall } = await import('../runtime/build-oncall.js');
  const service = buildOnCall(config, { transports: [], clock: systemClock, logger: silentLogger });
  if (!service) return skip('oncall');
  const secrets = [config.pagerduty.token, config.oncall.grafana_token];
  const answers = await Promise.all(
    service.routeNames().map(async (route) => ({ route, answer: await withTimeout(timeoutMs, `on call for ${route}`, service.lookup({ route }, timeoutMs)) })),
  );
  const said = answers.map(({ route, answer }) =>
    answer.known ? `${route}: ${answer.people.map((p) => p.name).join(', ') || 'nobody'} (${answer.source})` : `${route}: unknown (${answer.reason})`,
  );
  const unknown = answers.filter((a) => !a.answer.known);
  if (unknown.length === 0) return ok('oncall', said.join('; '));
  return fail(
    'oncall',
    redact(said.join('; '), secrets),
    'check the on-call source of those routes: the rotation (oncall.rotation people and start), PagerDuty (pagerduty.token, the escalation policy) or Grafana OnCall (oncall.grafana_url, oncall.grafana_token, the schedule) — docs/oncall.md',
  );
}

const MARK = { ok: '✓', fail: '✗', skip: '–' } as const;

function line(r: CheckResult): string {
  if (r.status === 'skip') return `${MARK.skip} ${r.check}: skipped: ${r.detail}`;
  return `${MARK[r.status]} ${r.check}: ${r.detail}${r.fix ? ` — fix: ${r.fix}` : ''}`;
}

/** `reprise doctor [--config FILE] [--json]`. */
export const doctor: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      timeout: { type: 'string', description: 'give up after this long (e.g. 10s)', valueName: 'DURATION' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  if (parsed.positionals.length > 0) {
    io.stderr(`reprise doctor: unexpected argument ${JSON.stringify(parsed.positionals[0])}\nusage: ${USAGE}\n`);
    return 2;
  }
  const timeoutS = parsed.values.timeout === undefined ? 5 : Number(parsed.values.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) {
    io.stderr(`reprise doctor: --timeout must be a positive number of seconds, got ${JSON.stringify(parsed.values.timeout)}\n`);
    return 2;
  }
  const timeoutMs = Math.round(timeoutS * 1000);
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) {
    io.stdout(`${MARK.fail} config: does not load (problems above) — fix: correct the keys named above; \`reprise config defaults\` prints every key\n`);
    return loaded.exit;
  }
  const config = loaded.config;
  const source = configFile({ file: parsed.values.config, env: io.env, cwd: io.cwd });
  const results: CheckResult[] = [ok('config', source ? `${source} loads and validates` : 'no config file: defaults plus environment')];
  const guard = async (name: string, run: () => Promise<CheckResult | CheckResult[]>): Promise<CheckResult[]> => {
    try {
      const r = await run();
      return Array.isArray(r) ? r : [r];
    } catch (err) {
      return [fail(name, `the check itself failed: ${redact(message(err), [])}`, 'report this with the line above')];
    }
  };
  const parts = await Promise.all([
    guard('catalog', () => checkCatalog(config, io)),
    guard('catalog sync', () => checkCatalogSync(config, timeoutMs)),
    guard('store', async () => checkStore(config)),
    guard('file modes', async () => checkModes(config)),
    guard('slack', () => checkSlack(config, timeoutMs)),
    guard('matrix', () => checkMatrix(config, timeoutMs)),
    guard('mattermost', () => checkMattermostSurface(config, timeoutMs)),
    guard('model', () => checkModel(config, timeoutMs)),
    guard('mcp', () => checkMcp(config, io, timeoutMs)),
    guard('github', () => checkGitHub(config, timeoutMs)),
    guard('oncall', () => checkOnCall(config, timeoutMs)),
  ]);
  results.push(...parts.flat());
  const failed = results.filter((r) => r.status === 'fail').length;
  if (parsed.values.json) io.stdout(`${JSON.stringify({ ok: failed === 0, checks: results }, null, 2)}\n`);
  else io.stdout(`${results.map(line).join('\n')}\n${failed === 0 ? 'all checks passed' : `${failed} ${failed === 1 ? 'check' : 'checks'} failed`}\n`);
  return failed === 0 ? 0 : 1;
};
