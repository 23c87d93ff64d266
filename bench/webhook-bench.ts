/**
 * Webhook → first chat message latency under an open-loop load of 100 requests/s, for the real
 * bot (HTTP ingress, recall, durable sqlite ledger write, outbox) with the console transport and
 * with the Slack transport (the real Bolt/Web API client against a minimal local Slack API),
 * beside a baseline node:http server that only reads, parses and prints each alert.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLED_CATALOG } from '../src/runtime/open-catalog.js';
import { startBot } from '../src/runtime/start-bot.js';
import { defaultConfig } from '../src/config/load-config.js';
import { silentLogger } from '../src/ports/logger.js';
import { percentile } from './percentile.js';

export interface WebhookSeries {
  sent: number;
  delivered: number;
  /** First console message after the request was sent (ms). */
  messageP50: number;
  messageP99: number;
  /** 2xx response after the request was sent (ms). */
  ackP50: number;
  ackP99: number;
}

export interface WebhookResult {
  rate: number;
  seconds: number;
  ours: WebhookSeries;
  /** The same bot posting to Slack: webhook → first `chat.postMessage` reaching the API. */
  slack: WebhookSeries;
  baseline: WebhookSeries;
}

function payload(i: number): string {
  const labels = { alertname: 'KubePodCrashLooping', namespace: `bench-${i}`, pod: `api-7d9f8c6b5-x${i}`, cluster: 'bench', severity: 'warning' };
  return JSON.stringify({
    version: '4',
    status: 'firing',
    receiver: 'reprise',
    groupLabels: {},
    commonLabels: labels,
    commonAnnotations: {},
    alerts: [
      {
        status: 'firing',
        labels,
        annotations: { summary: 'Pod is crash looping.', description: `Pod bench-${i}/api is in waiting state (reason: "CrashLoopBackOff").` },
        startsAt: new Date().toISOString(),
        fingerprint: `bench-${i}`,
      },
    ],
  });
}

/** Open loop: request i leaves at start + i/rate whatever earlier requests are doing. */
async function drive(port: number, rate: number, seconds: number, seen: Map<number, number>): Promise<WebhookSeries> {
  const total = rate * seconds;
  const sentAt = new Map<number, number>();
  const acks: number[] = [];
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    sentAt.set(i, t0);
    inflight.push(
      fetch(`http://127.0.0.1:${port}/webhook/alertmanager`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload(i) }).then(
        async (res) => {
          await res.arrayBuffer();
          if (res.ok) acks.push(performance.now() - t0);
        },
      ),
    );
  }
  await Promise.allSettled(inflight);
  const deadline = performance.now() + 10_000;
  while (seen.size < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const message = [...seen].flatMap(([i, at]) => (sentAt.has(i) ? [at - sentAt.get(i)!] : [])).sort((a, b) => a - b);
  acks.sort((a, b) => a - b);
  return {
    sent: total,
    delivered: message.length,
    messageP50: percentile(message, 50),
    messageP99: percentile(message, 99),
    ackP50: percentile(acks, 50),
    ackP99: percentile(acks, 99),
  };
}

/** Records when a console text first names `bench-<i>/`. */
function watcher(seen: Map<number, number>): (text: string) => void {
  return (text) => {
    const m = /bench-(\d+)\//.exec(text);
    if (m) {
      const i = Number(m[1]);
      if (!seen.has(i)) seen.set(i, performance.now());
    }
  };
}

async function baseline(rate: number, seconds: number): Promise<WebhookSeries> {
  const seen = new Map<number, number>();
  const print = watcher(seen);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { alerts: Array<{ labels: Record<string, string> }> };
      for (const a of body.alerts) print(`🔍 ${a.labels['alertname']} — ${a.labels['cluster']}/${a.labels['namespace']}/api`);
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    return await drive(port, rate, seconds, seen);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/**
 * Just enough of Slack's Web API for the bot to run: `auth.test`, `chat.postMessage` (each
 * answered with a fresh ts), `chat.update`, `chat.postEphemeral`. Every posted text goes to
 * `print`. Not a fake to test against (that is test/fakes/slack-fake.ts): a bench target.
 */
async function minimalSlackApi(print: (text: string) => void): Promise<{ url: string; close: () => Promise<void> }> {
  let ts = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = (req.url ?? '').replace(/^\/api\//, '').replace(/\?.*$/, '');
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = (req.headers['content-type'] ?? '').includes('json')
        ? (JSON.parse(raw) as Record<string, unknown>)
        : Object.fromEntries(new URLSearchParams(raw));
      let answer: Record<string, unknown> = { ok: true };
      if (method === 'auth.test') answer = { ok: true, user_id: 'U0BENCH', bot_id: 'B0BENCH', team_id: 'T0BENCH', user: 'reprise', team: 'bench' };
      else if (method === 'chat.postMessage') {
        print(`${String(body['text'])} ${typeof body['blocks'] === 'string' ? body['blocks'] : JSON.stringify(body['blocks'])}`);
        answer = { ok: true, channel: body['channel'], ts: `1700000000.${String(++ts).padStart(6, '0')}` };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/api/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

async function ours(rate: number, seconds: number, surface: 'console' | 'slack'): Promise<WebhookSeries> {
  const dir = mkdtempSync(join(tmpdir(), 'reprise-bench-'));
  const seen = new Map<number, number>();
  const config = defaultConfig();
  config.server.port = 0;
  config.server.host = '127.0.0.1';
  config.store.data_dir = dir;
  config.catalog.dir = BUNDLED_CATALOG;
  const slack = surface === 'slack' ? await minimalSlackApi(watcher(seen)) : undefined;
  if (slack)
    config.transport.slack = { ...config.transport.slack, bot_token: 'xoxb-bench', signing_secret: 'bench-secret', channel: 'C0BENCH', api_url: slack.url };
  const io = { stdout: slack ? () => {} : watcher(seen), stderr: () => {}, stdin: async () => '', env: {}, cwd: process.cwd() };
  const bot = await startBot(config, io, silentLogger);
  try {
    return await drive(bot.port, rate, seconds, seen);
  } finally {
    await bot.stop();
    await slack?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runWebhookBench(rate = 100, seconds = 10, log: (s: string) => void = () => {}): Promise<WebhookResult> {
  log(`bench: webhook latency, baseline server, ${rate} req/s for ${seconds} s`);
  const base = await baseline(rate, seconds);
  log(`bench: webhook latency, reprise serve (sqlite ledger, console transport), ${rate} req/s for ${seconds} s`);
  const mine = await ours(rate, seconds, 'console');
  log(`bench: webhook latency, reprise serve (sqlite ledger, Slack transport against a local API), ${rate} req/s for ${seconds} s`);
  const slack = await ours(rate, seconds, 'slack');
  return { rate, seconds, ours: mine, slack, baseline: base };
}
