/**
 * Storm (issue 12): 10,000 alerts in 60 s across 500 triggers, open loop, against `reprise
 * serve` on loopback — on the embedded store and on Redis (a private `redis-server` with an
 * append-only file fsynced on every write, the durable setting). Serve runs as a team would
 * during a storm: the storm coalescer on, the default investigation rate limit (30/h) and
 * `investigate_after` (60 s), and a model — a minimal OpenAI-compatible endpoint in this
 * process (./local-model.ts) answering after a fixed latency. Every request must be answered;
 * every acknowledged alert must become exactly one ledger open and every storm thread one
 * finding — all counted by reading the store back after the bot caught up, never from the
 * bench's own bookkeeping. Reported beside it: acknowledgement latency, threads, findings by
 * status, model calls, catch-up time and peak resident memory.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStore } from '../src/adapters/keyv/keyv-store.js';
import { HEAD_KEY, readLedgerRecords } from '../src/core/ledger/ledger.js';
import { INBOX_CURSOR, INBOX_LOG } from '../src/core/replica/inbox-log.js';
import type { FindingStatus, LedgerEvent } from '../src/core/ledger-events.js';
import { fmtNum, formatTable } from './format-table.js';
import { startLocalModel, type ModelPurpose } from './local-model.js';
import { percentile } from './percentile.js';

export interface StormSeries {
  store: 'embedded' | 'redis';
  sent: number;
  /** Requests that got any HTTP answer (the rest: connection errors). */
  answered: number;
  acked: number;
  ackP50: number;
  ackP99: number;
  /** Everything below is counted by reading the ledger back once the bot caught up. */
  tally: StormTally;
  /** Answers the local model sent, by purpose (its own count, beside the ledger's `calls`). */
  modelServed: Record<ModelPurpose | 'refused', number>;
  /** From the last answer to the last ledger write (s): intake backlog, storm windows, investigations. */
  catchUpS: number;
  peakRssMb: number;
  /** Peak RSS of redis-server itself, for the Redis run. */
  redisPeakRssMb?: number;
}

export interface StormResult {
  alerts: number;
  seconds: number;
  triggers: number;
  /** Alertmanager groups (`group_by: [alertname, namespace]`): one per namespace. */
  namespaces: number;
  /** Latency of every local model answer (ms). */
  modelLatencyMs: number;
  /** `trigger.investigate_after` the bot ran with (ms). */
  investigateAfterMs: number;
  maxPerHour: number;
  series: StormSeries[];
  /** Why a store was not measured (redis-server missing). */
  skipped: string[];
}

export interface StormOptions {
  alerts: number;
  seconds: number;
  triggers: number;
  /** Namespaces the triggers are spread over (each an Alertmanager group); default 50. */
  namespaces?: number;
  /** Latency of the local model's answers; default 200 ms. */
  modelLatencyMs?: number;
  log: (line: string) => void;
}

/** What the ledger holds about the storm, read back from the store. */
export interface StormTally {
  /** Ledger opens of the storm's alerts, and how many fingerprints were opened twice. */
  opens: number;
  doubleOpens: number;
  /** Acknowledged alerts without an open (must be 0). */
  lostOpens: number;
  /** Opens that started a thread (a storm batch's lead) and opens coalesced into one. */
  threads: number;
  coalesced: number;
  /** Storm batches closed (`noise` flush events). */
  batchesClosed: number;
  /** Thread cards recorded for delivery (outbox posts) and delivered (root messages). */
  posts: number;
  delivered: number;
  /** Finding events by status (completed, skipped, cancelled, exhausted, failed, degraded). */
  findings: Partial<Record<FindingStatus, number>>;
  /** Threads with no finding at all (every thread's job must end in one: must be 0). */
  threadsWithoutFinding: number;
  /** Model calls and tokens the findings record. */
  modelCalls: number;
  tokens: number;
}

/**
 * Counts the storm from ledger events (pure; the bench feeds it the store's records). `acked`
 * are the fingerprints that got a 202; only fingerprints starting `storm-` count as the storm's.
 */
export function tallyStorm(events: Iterable<LedgerEvent>, acked: ReadonlySet<string>): StormTally {
  const opens = new Map<string, number>();
  const threadIds = new Set<string>();
  const withFinding = new Set<string>();
  const t: StormTally = {
    opens: 0,
    doubleOpens: 0,
    lostOpens: 0,
    threads: 0,
    coalesced: 0,
    batchesClosed: 0,
    posts: 0,
    delivered: 0,
    findings: {},
    threadsWithoutFinding: 0,
    modelCalls: 0,
    tokens: 0,
  };
  for (const e of events) {
    if (e.type === 'open' && e.fingerprint.startsWith('storm-')) {
      opens.set(e.fingerprint, (opens.get(e.fingerprint) ?? 0) + 1);
      if (e.threadOf === undefined) threadIds.add(e.id ?? e.fingerprint);
      else t.coalesced++;
    } else if (e.type === 'noise' && e.action === 'flush') t.batchesClosed++;
    else if (e.type === 'outbox' && e.op === 'post') t.posts++;
    else if (e.type === 'delivered' && e.root === true) t.delivered++;
    else if (e.type === 'finding') {
      t.findings[e.status] = (t.findings[e.status] ?? 0) + 1;
      withFinding.add(e.openId);
      t.modelCalls += e.calls;
      t.tokens += e.tokensIn + e.tokensOut;
    }
  }
  t.opens = opens.size;
  t.doubleOpens = [...opens.values()].filter((n) => n > 1).length;
  t.lostOpens = [...acked].filter((fp) => !opens.has(fp)).length;
  t.threads = threadIds.size;
  t.threadsWithoutFinding = [...threadIds].filter((id) => !withFinding.has(id)).length;
  return t;
}

/** The shipped build (`npm run bench` builds it first): what is measured is what runs in production. */
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
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

const BEARER = 'bench-storm-token';
/** The product's defaults, written out so the bench says what it ran with. */
const INVESTIGATE_AFTER_MS = 60_000;
const MAX_PER_HOUR = 30;

/**
 * Alert `i` as Alertmanager would send it: trigger `t = i mod triggers` is Deployment `api<t>`
 * in namespace `storm-<t mod namespaces>`, each alert its own pod (fingerprint `storm-<i>`), and
 * the route groups by `[alertname, namespace]`, so the `groupKey` names the namespace and one
 * group holds every Deployment of it — the key the storm coalescer batches on.
 */
export function stormPayload(i: number, triggers: number, namespaces: number): string {
  const t = i % triggers;
  const ns = `storm-${t % namespaces}`;
  // Pod suffix: 5 generated characters (always with a digit), so the pod reduces to its Deployment.
  const pod = `api${t}-7d9f8c6b5-x${i.toString(36).padStart(4, '0')}`;
  const labels = { alertname: 'KubePodCrashLooping', namespace: ns, pod, container: 'api', cluster: 'bench', severity: 'warning' };
  return JSON.stringify({
    version: '4',
    status: 'firing',
    receiver: 'reprise',
    groupKey: `{}:{alertname="KubePodCrashLooping", namespace="${ns}"}`,
    groupLabels: { alertname: 'KubePodCrashLooping', namespace: ns },
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
async function drive(port: number, alerts: number, seconds: number, triggers: number, namespaces: number): Promise<Load> {
  const load: Load = { answered: 0, acked: new Set(), acks: [], endedAt: 0 };
  const start = performance.now();
  const inflight = new Set<Promise<void>>();
  for (let i = 0; i < alerts; i++) {
    const wait = start + (i * seconds * 1000) / alerts - performance.now();
    if (wait > 0) await sleep(wait);
    const sentAt = performance.now();
    const p = fetch(`http://127.0.0.1:${port}/webhook/alertmanager`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BEARER}` },
      body: stormPayload(i, triggers, namespaces),
    })
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

async function countLedger(storeUrl: string | undefined, dataDir: string, acked: ReadonlySet<string>): Promise<StormTally> {
  const store = createStore(storeUrl, dataDir);
  try {
    const events: LedgerEvent[] = [];
    for await (const r of readLedgerRecords(store)) if ('event' in r) events.push(r.event);
    return tallyStorm(events, acked);
  } finally {
    await store.close();
  }
}

async function startRedis(dir: string): Promise<{ url: string; child: ChildProcess; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always'],
    { stdio: 'ignore' },
  );
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

interface Resolved {
  alerts: number;
  seconds: number;
  triggers: number;
  namespaces: number;
  modelLatencyMs: number;
  log: (line: string) => void;
}

/** The serve config: the local model, the storm coalescer and the default rate limit. */
function stormConfig(dataDir: string, redisUrl: string | undefined, modelUrl: string): string {
  return [
    'store:',
    `  data_dir: ${JSON.stringify(dataDir)}`,
    ...(redisUrl ? [`  url: ${JSON.stringify(redisUrl)}`] : []),
    'server:',
    '  host: 127.0.0.1',
    `  bearer_token: ${BEARER}`,
    'model:',
    `  base_url: ${JSON.stringify(modelUrl)}`,
    '  model: bench-local',
    'trigger:',
    `  investigate_after: ${INVESTIGATE_AFTER_MS / 1000}s`,
    `  max_investigations_per_hour: ${MAX_PER_HOUR}`,
    '  coalesce:',
    '    enabled: true',
    'log:',
    '  level: warn',
    '',
  ].join('\n');
}

async function runOne(kind: 'embedded' | 'redis', opts: Resolved): Promise<StormSeries> {
  const dir = mkdtempSync(join(tmpdir(), `reprise-storm-${kind}-`));
  const redis = kind === 'redis' ? await startRedis(dir) : undefined;
  const model = await startLocalModel({ latencyMs: opts.modelLatencyMs });
  const dataDir = join(dir, 'data');
  const config = join(dir, 'reprise.yaml');
  writeFileSync(config, stormConfig(dataDir, redis?.url, model.baseUrl));
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
    opts.log(
      `bench: storm on the ${kind} store — ${opts.alerts} alerts over ${opts.seconds} s across ${opts.triggers} triggers in ${opts.namespaces} groups, local model at ${opts.modelLatencyMs} ms`,
    );
    const load = await drive(port, opts.alerts, opts.seconds, opts.triggers, opts.namespaces);
    // Let the bot catch up, reading only the ledger head and the inbox backlog (a full count
    // each time would compete with the bot for the CPU): first the intake (on Redis the leader
    // works through the inbox after the 202s); then every investigation job scheduled by an
    // open is due at most `investigate_after` later; then wait until the head stops moving.
    const head = async (): Promise<{ seq: number; backlog: number }> => {
      const store = createStore(redis?.url, dataDir);
      try {
        const [seq, inboxHead, cursor] = await store.getMany<number>([HEAD_KEY, INBOX_LOG.headKey, INBOX_CURSOR]);
        return { seq: seq ?? 0, backlog: Math.max(0, (inboxHead ?? 0) - (cursor ?? 0)) };
      } finally {
        await store.close();
      }
    };
    let last = await head();
    let caughtUp = performance.now();
    let jobsDue = last.backlog === 0 ? performance.now() + INVESTIGATE_AFTER_MS + 2000 : Number.POSITIVE_INFINITY;
    for (let stable = 0; stable < 6 || performance.now() < jobsDue;) {
      await sleep(500);
      const now = await head();
      if (now.backlog === 0 && jobsDue === Number.POSITIVE_INFINITY) jobsDue = performance.now() + INVESTIGATE_AFTER_MS + 2000;
      if (now.seq === last.seq && now.backlog === last.backlog) stable++;
      else {
        stable = 0;
        last = now;
        caughtUp = performance.now();
      }
    }
    const catchUpS = Math.max(0, (caughtUp - load.endedAt) / 1000);
    const tally = await countLedger(redis?.url, dataDir, load.acked);
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
      tally,
      modelServed: { ...model.served },
      catchUpS,
      peakRssMb: mem.hwm,
      ...(redisMem ? { redisPeakRssMb: redisMem.hwm } : {}),
    };
    opts.log(
      `  storm ${kind}: ${series.answered}/${series.sent} answered, ${series.acked} acked (p99 ${fmtNum(series.ackP99)} ms), ${tally.opens} opens, ${tally.lostOpens} lost, ${tally.threads} threads, findings ${JSON.stringify(tally.findings)}, peak RSS ${series.peakRssMb.toFixed(0)} MB`,
    );
    return series;
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
    await model.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;
}

export async function runStormBench(opts: StormOptions): Promise<StormResult> {
  const r: Resolved = {
    alerts: opts.alerts,
    seconds: opts.seconds,
    triggers: opts.triggers,
    namespaces: opts.namespaces ?? 50,
    modelLatencyMs: opts.modelLatencyMs ?? 200,
    log: opts.log,
  };
  const series: StormSeries[] = [await runOne('embedded', r)];
  const skipped: string[] = [];
  if (hasRedisServer()) series.push(await runOne('redis', r));
  else skipped.push('redis: redis-server / redis-cli not installed (apt-get install redis-server)');
  return {
    alerts: r.alerts,
    seconds: r.seconds,
    triggers: r.triggers,
    namespaces: r.namespaces,
    modelLatencyMs: r.modelLatencyMs,
    investigateAfterMs: INVESTIGATE_AFTER_MS,
    maxPerHour: MAX_PER_HOUR,
    series,
    skipped,
  };
}

const OTHER_STATUSES = ['exhausted', 'degraded', 'failed'] as const satisfies readonly FindingStatus[];

export function renderStormBench(r: StormResult): string {
  const by = (k: 'embedded' | 'redis'): StormSeries | undefined => r.series.find((s) => s.store === k);
  const e = by('embedded');
  const d = by('redis');
  const row = (metric: string, f: (s: StormSeries) => string): string[] => [metric, e ? f(e) : '–', d ? f(d) : '–'];
  const n = (s: StormSeries, status: FindingStatus): number => s.tally.findings[status] ?? 0;
  const total = (s: StormSeries): number => Object.values(s.tally.findings).reduce((a, b) => a + (b ?? 0), 0);
  const rows = [
    row('requests answered', (s) => `${s.answered} / ${s.sent}`),
    row('acknowledged (202)', (s) => String(s.acked)),
    row('ack latency p50 / p99 (ms)', (s) => `${fmtNum(s.ackP50)} / ${fmtNum(s.ackP99)}`),
    row('ledger opens', (s) => String(s.tally.opens)),
    row('lost opens / opened twice', (s) => `${s.tally.lostOpens} / ${s.tally.doubleOpens}`),
    row('storm threads / alerts coalesced into them', (s) => `${s.tally.threads} / ${s.tally.coalesced}`),
    row('storm batches closed', (s) => String(s.tally.batchesClosed)),
    row('thread cards posted (outbox) / delivered', (s) => `${s.tally.posts} / ${s.tally.delivered}`),
    row('findings recorded / threads without one', (s) => `${total(s)} / ${s.tally.threadsWithoutFinding}`),
    row('investigations started (completed)', (s) => String(n(s, 'completed'))),
    row('skipped by the rate limit / cancelled', (s) => `${n(s, 'skipped')} / ${n(s, 'cancelled')}`),
    ...(r.series.some((s) => OTHER_STATUSES.some((st) => n(s, st) > 0))
      ? [row('exhausted / degraded / failed', (s) => OTHER_STATUSES.map((st) => n(s, st)).join(' / '))]
      : []),
    row(
      'model calls: local model served / ledger',
      (s) => `${s.modelServed.rerank + s.modelServed.investigate + s.modelServed.verify} / ${s.tally.modelCalls}`,
    ),
    row('  of them rerank / investigate / verify', (s) => `${s.modelServed.rerank} / ${s.modelServed.investigate} / ${s.modelServed.verify}`),
    row('tokens recorded (in + out)', (s) => s.tally.tokens.toLocaleString('en-US')),
    row('catch-up after the last request (s)', (s) => fmtNum(s.catchUpS)),
    row('peak RSS, reprise serve (MB)', (s) => s.peakRssMb.toFixed(0)),
    row('peak RSS, redis-server (MB)', (s) => (s.redisPeakRssMb === undefined ? '–' : s.redisPeakRssMb.toFixed(0))),
  ];
  const title = `Storm: ${r.alerts.toLocaleString('en-US')} alerts over ${r.seconds} s across ${r.triggers} triggers in ${r.namespaces} Alertmanager groups (open loop, loopback)`;
  const setup = `coalescer on, investigate_after ${r.investigateAfterMs / 1000} s, ${r.maxPerHour} investigations/h, local model answering in ${r.modelLatencyMs} ms`;
  return [
    title,
    setup,
    '',
    formatTable(['metric', 'embedded store', 'Redis (AOF, fsync always)'], rows),
    ...r.skipped.map((s) => `\nnot measured — ${s}`),
  ].join('\n');
}
