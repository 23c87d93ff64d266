/**
 * `npm run build --silent && node bench/slow-senders.ts [--quick] [--json]`
 *
 * Issue 20 item 5, measured on the real `reprise serve` (dist/main.js): 200 senders from 200
 * loopback addresses each announce a 1 MiB body on a route that must read it before it can
 * check its signature (`/slack/events`, `/webhook/pagerduty`) and trickle it (16 KiB every
 * 100 ms, reconnecting whenever they are cut off), while one signed PagerDuty webhook is sent
 * every 200 ms. For each route, with the verify pool as configured by default and with it
 * effectively off (slots and caps raised out of reach): the bot's resident memory idle and at
 * its peak (VmHWM), how many signed webhooks were served (202) and their latency, and how the
 * slow senders were answered. Runs only Node built-ins and the built CLI, so it needs no build
 * step of its own (Node 22 strips the types).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MAIN = join(ROOT, 'dist', 'main.js');
const PD_SECRET = 'bench-pagerduty-secret-0123456789';
const SLACK_SECRET = 'bench-slack-signing-secret-0123456789';
const SENDERS = 200;
const BODY = 1 << 20;
const CHUNK = 16 * 1024;
const CHUNK_EVERY_MS = 100;
const SIGNED_EVERY_MS = 200;

const quick = process.argv.includes('--quick');
const asJson = process.argv.includes('--json');
const ATTACK_MS = quick ? 6_000 : 15_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Scenario {
  route: '/slack/events' | '/webhook/pagerduty';
  pool: 'default (64 slots)' | 'off';
}

interface Result extends Scenario {
  idleRssMb: number;
  peakRssMb: number;
  signedSent: number;
  signedServed: number;
  signedP50Ms: number;
  signedP99Ms: number;
  slowAnswers: Record<string, number>;
  slowConnections: number;
}

function rssOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function startServe(dir: string, poolOff: boolean): Promise<{ child: ChildProcess; port: number }> {
  const off = poolOff ? '  verify_pool_slots: 1000000\n  max_pending_per_peer: 1000000\n  max_pending_webhooks: 1000000\n' : '';
  const config = join(dir, 'reprise.yaml');
  writeFileSync(
    config,
    `server:\n  port: 0\n  host: 127.0.0.1\n  pagerduty_secret: ${PD_SECRET}\n${off}store:\n  data_dir: ${join(dir, 'data')}\n` +
      `transport:\n  console: off\n  slack:\n    bot_token: xoxb-bench\n    signing_secret: ${SLACK_SECRET}\n    channel: C0BENCH\n    api_url: http://127.0.0.1:9/api/\nlog:\n  level: warn\n`,
  );
  const child = spawn(process.execPath, [MAIN, 'serve', '--config', config], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, REPRISE_LOG_LEVEL: 'info' },
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  for (let i = 0; i < 300; i++) {
    const m = /"port":(\d+)[^\n]*listening on/.exec(err);
    if (m) return { child, port: Number(m[1]) };
    if (child.exitCode !== null) throw new Error(`serve exited: ${err}`);
    await sleep(100);
  }
  throw new Error(`serve did not start: ${err}`);
}

/** A sender that announces 1 MiB and trickles it; reconnects when cut off, until `stop`. */
function slowSender(port: number, route: string, address: string, answers: Record<string, number>, connections: { n: number }, stopped: () => boolean): void {
  const open = (): void => {
    if (stopped()) return;
    connections.n++;
    const socket: Socket = connect({ port, host: '127.0.0.1', localAddress: address });
    let head = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      if (head === '') {
        head = /^HTTP\/1\.1 (\d{3})/.exec(d)?.[1] ?? 'other';
        answers[head] = (answers[head] ?? 0) + 1;
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      setTimeout(open, 50);
    });
    const ts = String(Math.floor(Date.now() / 1000));
    const auth =
      route === '/slack/events'
        ? `x-slack-request-timestamp: ${ts}\r\nx-slack-signature: v0=${'c'.repeat(64)}\r\n`
        : `x-pagerduty-signature: v1=${'a'.repeat(64)}\r\n`;
    socket.write(`POST ${route} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\ncontent-length: ${BODY}\r\n${auth}\r\n`);
    let sent = 0;
    const chunk = Buffer.alloc(CHUNK, 0x61);
    timer = setInterval(() => {
      if (stopped() || socket.destroyed || sent >= BODY) return clearInterval(timer);
      sent += CHUNK;
      socket.write(chunk);
    }, CHUNK_EVERY_MS);
  };
  open();
}

async function signedWebhook(port: number, n: number): Promise<{ status: number; ms: number }> {
  const body = JSON.stringify({
    event: {
      id: `EV-BENCH-${n}-${Date.now()}`,
      event_type: 'incident.triggered',
      occurred_at: new Date().toISOString(),
      data: { id: `PBENCH${n}`, title: 'checkout-api down', created_at: new Date().toISOString(), urgency: 'high' },
    },
  });
  const sig = `v1=${createHmac('sha256', PD_SECRET).update(body).digest('hex')}`;
  const t = performance.now();
  try {
    const res = await fetch(`http://127.0.0.1:${port}/webhook/pagerduty`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-pagerduty-signature': sig },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - t };
  } catch {
    return { status: 0, ms: performance.now() - t };
  }
}

async function run(s: Scenario): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'reprise-slow-bench-'));
  const { child, port } = await startServe(dir, s.pool === 'off');
  try {
    await sleep(1500);
    const idle = rssOf(child.pid!).rss;
    let stop = false;
    const answers: Record<string, number> = {};
    const connections = { n: 0 };
    for (let i = 0; i < SENDERS; i++) slowSender(port, s.route, `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`, answers, connections, () => stop);
    const signed: Array<Promise<{ status: number; ms: number }>> = [];
    const end = Date.now() + ATTACK_MS;
    for (let n = 0; Date.now() < end; n++) {
      signed.push(signedWebhook(port, n));
      await sleep(SIGNED_EVERY_MS);
    }
    const results = await Promise.all(signed);
    const peak = rssOf(child.pid!).hwm;
    stop = true;
    const served = results.filter((r) => r.status === 202);
    return {
      ...s,
      idleRssMb: Math.round(idle),
      peakRssMb: Math.round(peak),
      signedSent: results.length,
      signedServed: served.length,
      signedP50Ms: Math.round(
        pct(
          served.map((r) => r.ms),
          50,
        ),
      ),
      signedP99Ms: Math.round(
        pct(
          served.map((r) => r.ms),
          99,
        ),
      ),
      slowAnswers: answers,
      slowConnections: connections.n,
    };
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

const scenarios: Scenario[] = [
  { route: '/slack/events', pool: 'default (64 slots)' },
  { route: '/slack/events', pool: 'off' },
  { route: '/webhook/pagerduty', pool: 'default (64 slots)' },
  { route: '/webhook/pagerduty', pool: 'off' },
];
const out: Result[] = [];
for (const s of scenarios) {
  process.stderr.write(`slow senders on ${s.route}, verify pool ${s.pool}…\n`);
  out.push(await run(s));
}
if (asJson) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
else {
  process.stdout.write(
    `\n${SENDERS} slow senders (1 MiB announced, ${CHUNK / 1024} KiB every ${CHUNK_EVERY_MS} ms, reconnecting) for ${ATTACK_MS / 1000} s; a signed PagerDuty webhook every ${SIGNED_EVERY_MS} ms\n\n` +
      '| route attacked | verify pool | RSS idle MB | RSS peak MB | signed served | signed p50 ms | signed p99 ms | slow senders answered |\n|---|---|---|---|---|---|---|---|\n',
  );
  for (const r of out) {
    const answered = Object.entries(r.slowAnswers)
      .map(([k, v]) => `${k}×${v}`)
      .join(' ');
    process.stdout.write(
      `| ${r.route} | ${r.pool} | ${r.idleRssMb} | ${r.peakRssMb} | ${r.signedServed}/${r.signedSent} | ${r.signedP50Ms} | ${r.signedP99Ms} | ${answered || '—'} (${r.slowConnections} connections) |\n`,
    );
  }
}
