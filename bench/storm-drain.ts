/**
 * Draining a storm's backlog (issue 30 item 5, "RSS bounded while a 10k-group storm drains"):
 * `groups` Alertmanager groups, each its own incident and thread, are taken by `reprise serve`
 * while Slack (the stand-in of test/fakes on loopback) refuses every post, so the whole storm
 * waits in the outbox; serve is stopped and started again on that store with Slack back, and
 * drains it. Measured: the restarted serve's peak resident memory (VmHWM) from spawn until the
 * outbox is empty, beside the same serve over an empty store in the same run, the outbox
 * window it ran with, the drain time, and what the stand-in counted: cards posted, and items
 * shown twice (must be 0).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSlackFake, type PostedMessage, type SlackFake } from '../test/fakes/slack-fake.js';
import { fmtNum, formatTable } from './format-table.js';

export interface DrainResult {
  groups: number;
  /** The outbox window serve ran with, as /readyz reports it (undefined: a build without one, everything pending in memory). */
  window: number | undefined;
  /** Outbox items pending when the restarted serve was ready. */
  pendingAtStart: number;
  drainS: number;
  /** The restarted serve's resident memory when it was ready, the backlog loaded and nothing drained yet. */
  readyRssMb: number;
  peakRssMb: number;
  /** The same serve over an empty store: ready, then idle 2 s. */
  emptyPeakRssMb: number;
  /** Cards on the stand-in (thread roots), and outbox ids shown more than once (cards and replies). */
  cards: number;
  shownTwice: number;
}

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const CHANNEL = 'C0STORM';

/** `fetch`, tried again twice on a connection error (a keep-alive socket the busy server closed as it was reused). */
async function fetchAgain(url: string, init?: RequestInit): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      if (attempt >= 2) throw err;
      await sleep(200);
    }
  }
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
}
const hwmOf = (pid: number): number => statusMb(pid, 'VmHWM');

/** Group `g`: its own namespace (`group_by: [namespace]`), one crash-looping pod. */
export function drainPayload(g: number): string {
  const labels = { alertname: 'KubePodCrashLooping', namespace: `drain-${g}`, pod: `api-7d9f8c6b5-x${g.toString(36).padStart(4, '0')}`, severity: 'warning' };
  return JSON.stringify({
    version: '4',
    status: 'firing',
    receiver: 'reprise',
    groupKey: `{}:{namespace="drain-${g}"}`,
    groupLabels: { namespace: labels.namespace },
    commonLabels: labels,
    commonAnnotations: {},
    alerts: [{ status: 'firing', labels, annotations: { summary: 'Pod is crash looping.' }, startsAt: new Date().toISOString(), fingerprint: `drain-${g}` }],
  });
}

interface Serve {
  pid: number;
  port: number;
  pending(): Promise<{ pending: number; window?: { size: number; held: number } }>;
  /** The end of its stderr and how it exited (for an error). */
  why(): string;
  stop(): Promise<void>;
}

async function startServe(config: string, slack: SlackFake): Promise<Serve> {
  const env = {
    ...process.env,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: slack.signingSecret,
    SLACK_CHANNEL: CHANNEL,
    SLACK_API_URL: slack.apiUrl,
  };
  const child = spawn(process.execPath, [MAIN, 'serve', '--config', config, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  if (child.pid === undefined) throw new Error('drain bench: could not spawn reprise serve');
  let stderr = '';
  child.stdout.resume();
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(killer);
  };
  let port: number | undefined;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`reprise serve exited with ${child.exitCode}: ${stderr.slice(-2000)}`);
    port ??= Number(/listening on http:\/\/[^\s:"]+:(\d+)/.exec(stderr)?.[1]) || undefined;
    if (
      port !== undefined &&
      (await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      break;
    await sleep(50);
  }
  if (port === undefined) {
    await stop();
    throw new Error(`reprise serve did not get ready: ${stderr.slice(-2000)}`);
  }
  const url = `http://127.0.0.1:${port}`;
  const pending = async (): ReturnType<Serve['pending']> => {
    const body = (await (await fetchAgain(`${url}/readyz`)).json()) as { checks?: { outbox?: { pending?: number; window?: { size: number; held: number } } } };
    const o = body.checks?.outbox;
    return { pending: o?.pending ?? Number.NaN, ...(o?.window ? { window: o.window } : {}) };
  };
  const why = (): string => `serve exit ${child.exitCode ?? 'running'} ${child.signalCode ?? ''}; stderr ends: ${stderr.slice(-3000)}`;
  return { pid: child.pid, port, pending, why, stop };
}

async function sendAll(port: number, groups: number, concurrency: number): Promise<number> {
  let next = 0;
  let accepted = 0;
  const worker = async (): Promise<void> => {
    while (next < groups) {
      // Tried again on a connection error: the same group again is the same incident (deduplicated by fingerprint).
      const res = await fetchAgain(`http://127.0.0.1:${port}/webhook/alertmanager`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: drainPayload(next++),
      });
      await res.arrayBuffer();
      if (res.status === 202) accepted++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return accepted;
}

const outboxIdOf = (m: PostedMessage): string | undefined => (m.metadata as { event_payload?: { outbox_id?: string } } | undefined)?.event_payload?.outbox_id;

export async function runDrainBench(opts: { groups: number; log: (line: string) => void }): Promise<DrainResult> {
  const dir = mkdtempSync(join(tmpdir(), 'reprise-drain-'));
  const slack = await startSlackFake();
  /** Every serve started, stopped on the way out whatever happened. */
  const started: Serve[] = [];
  const serveOn = async (config: string): Promise<Serve> => {
    const s = await startServe(config, slack);
    started.push(s);
    return s;
  };
  try {
    const configFor = (name: string): string => {
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, `store:\n  data_dir: ${JSON.stringify(join(dir, name))}\nserver:\n  host: 127.0.0.1\nlog:\n  level: error\n`);
      return file;
    };
    const empty = await serveOn(configFor('empty'));
    await sleep(2000);
    const emptyPeakRssMb = hwmOf(empty.pid);
    await empty.stop();

    // The storm arrives while Slack refuses every post: all of it waits in the outbox.
    slack.setBehaviour({ failures: [{ method: 'chat.postMessage', status: 503, times: Number.POSITIVE_INFINITY }] });
    const storm = configFor('storm');
    const intake = await serveOn(storm);
    opts.log(`bench: drain — ${opts.groups} groups while Slack refuses posts`);
    const accepted = await sendAll(intake.port, opts.groups, 8).catch((err: unknown): never => {
      throw new Error(`drain bench: webhooks failed (${err instanceof Error ? String(err.cause ?? err.message) : String(err)}); ${intake.why()}`);
    });
    if (accepted !== opts.groups) throw new Error(`drain bench: ${accepted} of ${opts.groups} groups acknowledged`);
    await intake.stop();

    slack.setBehaviour({ failures: [] });
    slack.messages.length = 0;
    slack.requests.length = 0;
    const t0 = performance.now();
    const serve = await serveOn(storm);
    const readyRssMb = statusMb(serve.pid, 'VmRSS');
    const atStart = await serve.pending();
    const pendingAtStart = atStart.pending;
    let window = atStart.window?.size;
    opts.log(`bench: drain — restarted with ${pendingAtStart} pending (window ${window ?? 'none'}); Slack is back`);
    let left = pendingAtStart;
    for (let i = 0; !(left <= 0); i++) {
      await sleep(250);
      const now = await serve.pending();
      left = now.pending;
      window ??= now.window?.size;
      if (i % 40 === 0)
        opts.log(`  drain: ${left} pending, ${now.window?.held ?? left} held, ${slack.messages.length} messages, peak RSS ${hwmOf(serve.pid).toFixed(0)} MB`);
    }
    const drainS = (performance.now() - t0) / 1000;
    const peakRssMb = hwmOf(serve.pid);
    await serve.stop();
    const ids = slack.messages.map(outboxIdOf);
    const seen = new Map<string, number>();
    for (const id of ids) if (id !== undefined) seen.set(id, (seen.get(id) ?? 0) + 1);
    const r: DrainResult = {
      groups: opts.groups,
      window,
      pendingAtStart,
      drainS,
      readyRssMb,
      peakRssMb,
      emptyPeakRssMb,
      cards: slack.messages.filter((m) => m.thread_ts === undefined).length,
      shownTwice: [...seen.values()].filter((n) => n > 1).length,
    };
    opts.log(`  drain: ${r.cards} cards in ${fmtNum(drainS)} s, peak RSS ${peakRssMb.toFixed(0)} MB (empty store ${emptyPeakRssMb.toFixed(0)} MB)`);
    return r;
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function renderDrainBench(r: DrainResult): string {
  const rows = [
    ['outbox items pending at restart', String(r.pendingAtStart), '0'],
    ['outbox window (items in memory)', r.window === undefined ? 'none (all pending)' : String(r.window), '–'],
    ['RSS when ready, nothing drained yet (MB)', r.readyRssMb.toFixed(0), '–'],
    ['peak RSS while it drains (MB, VmHWM)', r.peakRssMb.toFixed(0), r.emptyPeakRssMb.toFixed(0)],
    ['peak while it drains / when ready', `×${fmtNum(r.peakRssMb / r.readyRssMb)}`, '–'],
    ['drain time (s)', fmtNum(r.drainS), '–'],
    ['cards posted / items shown twice', `${r.cards} / ${r.shownTwice}`, '–'],
  ];
  return [
    `Storm drain: ${r.groups.toLocaleString('en-US')} Alertmanager groups recorded while Slack refused posts, drained by a restarted serve (Slack stand-in on loopback)`,
    '',
    formatTable(['metric', 'storm backlog', 'empty store'], rows),
  ].join('\n');
}
