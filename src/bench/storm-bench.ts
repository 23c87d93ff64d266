/**
 * Storm (issue 12): 10,000 alerts in 60 s across 500 triggers, open loop, against `reprise
 * serve` on loopback — on the embedded store and on Redis (a private `redis-server` with an
 * append-only file fsynced on every write, the durable setting). Every request must be
 * answered; every acknowledged alert must become exactly one ledger open (counted by reading
 * the store after the bot caught up). Reported beside it: acknowledgement latency, threads
 * posted, investigations (none without a model) and peak resident memory.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStore } from '../adapters/keyv/keyv-store.js';
import { HEAD_KEY, readLedgerRecords } from '../core/ledger/ledger.js';
import { INBOX_CURSOR, INBOX_LOG } from '../core/replica/inbox.js';
import { fmtNum, formatTable } from './format-table.js';
import { percentile } from './percentile.js';

export interface StormSeries {
  store: 'embedded' | 'redis';
  sent: number;
  /** Requests that got any HTTP answer (the rest: connection errors). */
  answered: number;
  acked: number;
  ackP50: number;
  ackP99: number;
  /** Ledger opens of the storm's alerts once the bot caught up. */
  opens: number;
  /** Acknowledged alerts without an open (must be 0), and alerts opened twice (must be 0). */
  lostOpens: number;
  doubleOpens: number;
  /** Thread cards recorded for delivery (outbox posts) and delivered. */
  threads: number;
  delivered: number;
  /** Investigations started (finding events): 0 without a model. */
  investigations: number;
  /** From the last answer to the last ledger write (s): on Redis, the leader working through the inbox. */
  catchUpS: number;
  peakRssMb: number;
  /** Peak RSS of redis-server itself, for the Redis run. */
  redisPeakRssMb?: number;
}

export interface StormResult {
  alerts: number;
  seconds: number;
  triggers: number;
  series: StormSeries[];
  /** Why a store was not measured (redis-server missing). */
  skipped: string[];
}

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function rssOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/** Alert `i`: its own fingerprint, trigger `i mod triggers` (one workload per trigger). */
function payload(i: number, triggers: number): string {
  const t = i % triggers;
  const labels = { alertname: 'KubePodCrashLooping', namespace: `storm-${t}`, pod: `api${t}-7d9f8c6b5-s${i}`, container: 'api', cluster: 'bench', severity: 'warning' };
  return JSON.stringify({
    version: '4',
    status: 'firing',
    receiver: 'reprise',
    groupKey: `{}:{namespace="storm-${t}"}`,
    groupLabels: { namespace: `storm-${t}` },
    commonLabels: labels,
    commonAnnotations: {},
    alerts: [{ status: 'firing', labels, annotations: { summary: 'Pod is crash looping.' }, startsAt: new Date().toISOString(), fingerprint: `storm-${i}` }],
  });
}

interface Load {
  answered: number;
  acked: Set<string>;
  acks: number[];
  endedAt: number;
}

/** Open loop: request i leaves at start + i × seconds / alerts, whatever earlier ones are doing. */
async function drive(port: number, alerts: number, seconds: number, triggers: number): Promise<Load> {
  const load: Load = { answered: 0, acked: new Set(), acks: [], endedAt: 0 };
  const start = performance.now();
  const inflight = new Set<Promise<void>>();
  for (let i = 0; i < alerts; i++) {
    const wait = start + (i * seconds * 1000) / alerts - performance.now();
    if (wait > 0) await sleep(wait);
    const sentAt = performance.now();
    const p = fetch(`http://127.0.0.1:${port}/webhook/alertmanager`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload(i, triggers) })
      .then(async (res) => {
        await res.arrayBuffer();
        load.answered++;
        if (res.status === 202) {
          load.acked.add(`storm-${i}`);
          load.acks.push(performance.now() - sentAt);
        }
      })
      .catch(() => undefined)
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  load.endedAt = performance.now();
  return load;
}

interface Counts {
  opens: Map<string, number>;
  threads: number;
  delivered: number;
  investigations: number;
}

async function countLedger(storeUrl: string | undefined, dataDir: string): Promise<Counts> {
  const store = createStore(storeUrl, dataDir);
  const c: Counts = { opens: new Map(), threads: 0, delivered: 0, investigations: 0 };
  try {
    for await (const r of readLedgerRecords(store)) {
      if (!('event' in r)) continue;
      const e = r.event;
      if (e.type === 'open' && e.fingerprint.startsWith('storm-')) c.opens.set(e.fingerprint, (c.opens.get(e.fingerprint) ?? 0) + 1);
      else if (e.type === 'outbox' && e.op === 'post') c.threads++;
      else if (e.type === 'delivered') c.delivered++;
      else if (e.type === 'finding') c.investigations++;
    }
  } finally {
    await store.close();
  }
  return c;
}

async function startRedis(dir: string): Promise<{ url: string; child: ChildProcess; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always'], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    try {
      if (execFileSync('redis-cli', ['-p', String(port), 'PING'], { encoding: 'utf8' }).trim() === 'PONG') break;
    } catch {
      // not up yet
    }
    await sleep(50);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    child,
    stop: async () => {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

async function runOne(kind: 'embedded' | 'redis', opts: { alerts: number; seconds: number; triggers: number; log: (line: string) => void }): Promise<StormSeries> {
  const dir = mkdtempSync(join(tmpdir(), `reprise-storm-${kind}-`));
  const redis = kind === 'redis' ? await startRedis(dir) : undefined;
  const dataDir = join(dir, 'data');
  const config = join(dir, 'reprise.yaml');
  writeFileSync(config, `store:\n  data_dir: ${JSON.stringify(dataDir)}\n${redis ? `  url: ${JSON.stringify(redis.url)}\n` : ''}server:\n  host: 127.0.0.1\nlog:\n  level: warn\n`);
  const child = spawn(process.execPath, [MAIN, 'serve', '--config', config, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error('storm bench: could not spawn reprise serve');
  let stderr = '';
  child.stdout.resume();
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    let port: number | undefined;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && port === undefined) {
      if (child.exitCode !== null) throw new Error(`reprise serve exited with ${child.exitCode}: ${stderr.slice(-2000)}`);
      port = Number(/listening on http:\/\/[^\s:"]+:(\d+)/.exec(stderr)?.[1]) || undefined;
      await sleep(50);
    }
    if (port === undefined) throw new Error(`reprise serve did not report its port: ${stderr.slice(-2000)}`);
    opts.log(`bench: storm on the ${kind} store — ${opts.alerts} alerts over ${opts.seconds} s across ${opts.triggers} triggers`);
    const load = await drive(port, opts.alerts, opts.seconds, opts.triggers);
    // Let the bot catch up (on Redis the leader works through the inbox after the 202s): wait
    // until the ledger head stops moving, reading only the head (a full count each time would
    // compete with the bot for the CPU), then count once.
    const head = async (): Promise<number> => {
      const store = createStore(redis?.url, dataDir);
      try {
        const [seq, inboxHead, cursor] = await store.getMany<number>([HEAD_KEY, INBOX_LOG.headKey, INBOX_CURSOR]);
        return (seq ?? 0) + Math.max(0, (inboxHead ?? 0) - (cursor ?? 0)) * 1e9;
      } finally {
        await store.close();
      }
    };
    let last = await head();
    let caughtUp = performance.now();
    for (let stable = 0; stable < 6; ) {
      await sleep(500);
      const now = await head();
      if (now === last) stable++;
      else {
        stable = 0;
        last = now;
        caughtUp = performance.now();
      }
    }
    const catchUpS = Math.max(0, (caughtUp - load.endedAt) / 1000);
    const counts = await countLedger(redis?.url, dataDir);
    const mem = rssOf(pid);
    const redisMem = redis?.child.pid !== undefined ? rssOf(redis.child.pid) : undefined;
    const acks = [...load.acks].sort((a, b) => a - b);
    const series: StormSeries = {
      store: kind,
      sent: opts.alerts,
      answered: load.answered,
      acked: load.acked.size,
      ackP50: percentile(acks, 50),
      ackP99: percentile(acks, 99),
      opens: counts.opens.size,
      lostOpens: [...load.acked].filter((fp) => !counts.opens.has(fp)).length,
      doubleOpens: [...counts.opens.values()].filter((n) => n > 1).length,
      threads: counts.threads,
      delivered: counts.delivered,
      investigations: counts.investigations,
      catchUpS,
      peakRssMb: mem.hwm,
      ...(redisMem ? { redisPeakRssMb: redisMem.hwm } : {}),
    };
    opts.log(`  storm ${kind}: ${series.answered}/${series.sent} answered, ${series.acked} acked (p99 ${fmtNum(series.ackP99)} ms), ${series.opens} opens, ${series.lostOpens} lost, peak RSS ${series.peakRssMb.toFixed(0)} MB`);
    return series;
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;
}

export async function runStormBench(opts: { alerts: number; seconds: number; triggers: number; log: (line: string) => void }): Promise<StormResult> {
  const series: StormSeries[] = [await runOne('embedded', opts)];
  const skipped: string[] = [];
  if (hasRedisServer()) series.push(await runOne('redis', opts));
  else skipped.push('redis: redis-server / redis-cli not installed (apt-get install redis-server)');
  return { alerts: opts.alerts, seconds: opts.seconds, triggers: opts.triggers, series, skipped };
}

export function renderStormBench(r: StormResult): string {
  const by = (k: 'embedded' | 'redis'): StormSeries | undefined => r.series.find((s) => s.store === k);
  const e = by('embedded');
  const d = by('redis');
  const row = (metric: string, f: (s: StormSeries) => string): string[] => [metric, e ? f(e) : '–', d ? f(d) : '–'];
  const rows = [
    row('requests answered', (s) => `${s.answered} / ${s.sent}`),
    row('acknowledged (202)', (s) => String(s.acked)),
    row('ack latency p50 / p99 (ms)', (s) => `${fmtNum(s.ackP50)} / ${fmtNum(s.ackP99)}`),
    row('ledger opens', (s) => String(s.opens)),
    row('lost opens / opened twice', (s) => `${s.lostOpens} / ${s.doubleOpens}`),
    row('threads posted (outbox) / delivered', (s) => `${s.threads} / ${s.delivered}`),
    row('investigations started', (s) => `${s.investigations} (no model configured)`),
    row('catch-up after the last request (s)', (s) => fmtNum(s.catchUpS)),
    row('peak RSS, reprise serve (MB)', (s) => s.peakRssMb.toFixed(0)),
    row('peak RSS, redis-server (MB)', (s) => (s.redisPeakRssMb === undefined ? '–' : s.redisPeakRssMb.toFixed(0))),
  ];
  const title = `Storm: ${r.alerts.toLocaleString('en-US')} alerts over ${r.seconds} s across ${r.triggers} triggers (open loop, loopback)`;
  return [title, '', formatTable(['metric', 'embedded store', 'Redis (AOF, fsync always)'], rows), ...r.skipped.map((s) => `\nnot measured — ${s}`)].join('\n');
}
