/**
 * Start-up time and resident memory of the whole bot (issue 30 item 5): `reprise serve`,
 * spawned through its CLI (the built dist/main.js) with a generated catalog and a data dir
 * holding a pre-written ledger with the snapshot a running bot leaves; ready (spawn → /readyz
 * 200), idle and after webhooks. Started twice: the first start parses and indexes the catalog
 * (and saves the index), the restart reads the saved index and the ledger snapshot back — what
 * every later start costs, the figure the target is about. Beside them, in the same run, the
 * same serve over an empty catalog and an empty data dir: the embedded defaults' own cost.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStore, KeyvStore } from '../src/adapters/keyv/keyv-store.js';
import { eventKey, HEAD_KEY, Ledger } from '../src/core/ledger/ledger.js';
import { writeCatalogFiles } from './catalog-files.js';
import { fmtCount, fmtNum, formatTable } from './format-table.js';
import { DEFAULT_EVENT_SHAPE, generateEvents } from './synthetic-events.js';
import { generateCatalog } from './synthetic-catalog.js';
import { generateAlerts } from './synthetic-queries.js';

export interface ServeMemory {
  /** Spawn to /readyz answering 200 (ms). */
  readyMs: number;
  idleRssMb: number;
  afterRssMb: number;
  /** Peak resident memory over the process's life (VmHWM). */
  peakRssMb: number;
  accepted: number;
}

export interface ServeResult {
  entries: number;
  events: number;
  webhooks: number;
  /** The first start over the catalog and ledger: the catalog is parsed, indexed and its index saved. */
  firstStart: ServeMemory;
  /** The restart over the same data dir: the saved index and the ledger snapshot read back. */
  ours: ServeMemory;
  /** The same serve and webhooks over an empty catalog and an empty data dir (the embedded defaults). */
  emptyStore: ServeMemory;
}

/** The figures: ready within 2 s over 10k entries and 1M events; idle RSS within 120 MB on the embedded defaults. */
export const SERVE_READY_TARGET_MS = 2000;
export const IDLE_RSS_TARGET_MB = 120;

/** The shipped build (`npm run bench` builds it first): what is measured is what runs in production. */
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** VmRSS and VmHWM of a process, MB (Linux /proc). */
function rssOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** A ledger of `events` generated events in `dataDir`'s default store, with the snapshot a running bot leaves. */
async function writeLedger(dataDir: string, events: number): Promise<void> {
  const log = generateEvents({ ...DEFAULT_EVENT_SHAPE, events });
  const store = createStore(undefined, dataDir);
  for (let i = 0; i < log.length; i += 1000) {
    const batch = log.slice(i, i + 1000).map((value, j) => ({ key: eventKey(i + j + 1), value }));
    if (store instanceof KeyvStore) await store.keyv.setMany(batch);
    else for (const { key, value } of batch) await store.set(key, value);
  }
  await store.set(HEAD_KEY, log.length);
  // Opening replays the events and records the store's schema, as the bot that wrote them
  // would have; closing writes the snapshot serve will start from.
  await (await Ledger.open(store, { migrate: true })).close();
  await store.close();
}

/** POST each alert to /webhook/alertmanager, `concurrency` at a time; returns how many were accepted. */
async function sendWebhooks(port: number, payloads: readonly string[], concurrency: number): Promise<number> {
  let next = 0;
  let accepted = 0;
  const worker = async (): Promise<void> => {
    while (next < payloads.length) {
      const body = payloads[next++]!;
      const res = await fetch(`http://127.0.0.1:${port}/webhook/alertmanager`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.arrayBuffer();
      if (res.ok) accepted++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return accepted;
}

async function measureServe(configPath: string, payloads: readonly string[], log: (line: string) => void, name: string): Promise<ServeMemory> {
  // REPRISE_BENCH_CPU_PROF=DIR: each serve writes a V8 CPU profile there (serve-<name>.cpuprofile) at exit.
  const profDir = process.env['REPRISE_BENCH_CPU_PROF'];
  const prof = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=serve-${name.replace(/\W+/g, '-')}.cpuprofile`] : [];
  const started = performance.now();
  const child = spawn(process.execPath, [...prof, MAIN, 'serve', '--config', configPath, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error('serve bench: could not spawn reprise serve');
  let stderr = '';
  child.stdout.resume(); // the console transport's threads: not needed, only drained
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    let port: number | undefined;
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`reprise serve exited with ${child.exitCode}: ${stderr.slice(-2000)}`);
      port ??= Number(/listening on http:\/\/[^\s:"]+:(\d+)/.exec(stderr)?.[1]) || undefined;
      if (port !== undefined) {
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready) break;
      }
      await sleep(50);
    }
    if (port === undefined) throw new Error(`reprise serve did not report its port in time: ${stderr.slice(-2000)}`);
    const readyMs = performance.now() - started;
    await sleep(2000);
    const idle = rssOf(pid);
    const accepted = await sendWebhooks(port, payloads, 8).catch((err: unknown): never => {
      const why = err instanceof Error && err.cause instanceof Error ? `${err.message} (${err.cause.message})` : String(err);
      throw new Error(`serve bench: webhooks to reprise serve failed: ${why}; its stderr ends: ${stderr.slice(-2000)}`);
    });
    await sleep(2000);
    const after = rssOf(pid);
    log(
      `  serve (${name}): ready in ${(readyMs / 1000).toFixed(1)} s, RSS idle ${idle.rss.toFixed(0)} MB, after ${accepted} webhooks ${after.rss.toFixed(0)} MB (peak ${after.hwm.toFixed(0)} MB)`,
    );
    return { readyMs, idleRssMb: idle.rss, afterRssMb: after.rss, peakRssMb: after.hwm, accepted };
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  }
}

export async function runServeBench(opts: { entries: number; events: number; webhooks: number; log: (line: string) => void }): Promise<ServeResult> {
  const dir = mkdtempSync(join(tmpdir(), 'reprise-serve-bench-'));
  try {
    const catalog = generateCatalog(opts.entries);
    const catalogDir = join(dir, 'catalog');
    const emptyDir = join(dir, 'empty');
    mkdirSync(emptyDir);
    writeCatalogFiles(catalogDir, catalog.entries);
    opts.log(`bench: serve memory — wrote ${opts.entries} catalog entries; writing a ${opts.events}-event ledger`);
    const payloads = generateAlerts(catalog, opts.webhooks, 21).map((alert) =>
      JSON.stringify({
        version: '4',
        status: 'firing',
        receiver: 'reprise',
        groupLabels: {},
        commonLabels: alert.labels,
        commonAnnotations: {},
        alerts: [alert],
      }),
    );
    const ledger = join(dir, 'ledger');
    const t0 = performance.now();
    await writeLedger(ledger, opts.events);
    opts.log(`bench: serve — ledger written and snapshotted in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const configFor = (name: string, catalogPath: string, dataDir: string): string => {
      const config = join(dir, `${name}.yaml`);
      writeFileSync(config, `catalog:\n  dir: ${JSON.stringify(catalogPath)}\nstore:\n  data_dir: ${JSON.stringify(dataDir)}\nserver:\n  host: 127.0.0.1\n`);
      return config;
    };
    const dataDir = join(dir, 'data-catalog');
    cpSync(ledger, dataDir, { recursive: true });
    const full = configFor('catalog', catalogDir, dataDir);
    opts.log('bench: serve — first start over the catalog and ledger (indexes the catalog, saves the index)');
    const firstStart = await measureServe(full, [], opts.log, 'first start');
    opts.log('bench: serve — restart over the same data dir (saved index, ledger snapshot)');
    const ours = await measureServe(full, payloads, opts.log, 'restart');
    opts.log('bench: serve — empty catalog, empty data dir');
    const emptyData = join(dir, 'data-empty');
    mkdirSync(emptyData);
    const emptyStore = await measureServe(configFor('empty', emptyDir, emptyData), payloads, opts.log, 'empty store');
    return { entries: opts.entries, events: opts.events, webhooks: opts.webhooks, firstStart, ours, emptyStore };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ratio = (ours: number, base: number): string => (base > 0 ? `×${fmtNum(ours / base)} of the empty store` : '–');
const meets = (value: number, target: number, unit: string): string => `≤ ${fmtNum(target)} ${unit}: ${value <= target ? 'met' : 'NOT met'}`;

/** The serve rows: metric, size, ours, the empty-store baseline, ours ÷ baseline, target. */
export function serveRows(s: ServeResult): string[][] {
  const size = `${fmtCount(s.entries)} + ${fmtCount(s.events)} ev`;
  const base = (v: number): string => `${fmtNum(v)} (empty store)`;
  return [
    [
      'reprise serve ready (s), restart',
      size,
      fmtNum(s.ours.readyMs / 1000),
      base(s.emptyStore.readyMs / 1000),
      ratio(s.ours.readyMs, s.emptyStore.readyMs),
      meets(s.ours.readyMs / 1000, SERVE_READY_TARGET_MS / 1000, 's'),
    ],
    [
      'reprise serve ready (s), first start (indexes)',
      size,
      fmtNum(s.firstStart.readyMs / 1000),
      base(s.emptyStore.readyMs / 1000),
      ratio(s.firstStart.readyMs, s.emptyStore.readyMs),
      '',
    ],
    [
      'reprise serve RSS MB, idle (embedded defaults)',
      'empty',
      fmtNum(s.emptyStore.idleRssMb),
      '–',
      '–',
      meets(s.emptyStore.idleRssMb, IDLE_RSS_TARGET_MB, 'MB'),
    ],
    ['reprise serve RSS MB, idle (restart)', size, fmtNum(s.ours.idleRssMb), base(s.emptyStore.idleRssMb), ratio(s.ours.idleRssMb, s.emptyStore.idleRssMb), ''],
    [
      `reprise serve RSS MB, after ${s.webhooks} webhooks`,
      size,
      `${fmtNum(s.ours.afterRssMb)} (${s.ours.accepted} accepted)`,
      base(s.emptyStore.afterRssMb),
      ratio(s.ours.afterRssMb, s.emptyStore.afterRssMb),
      '',
    ],
    [
      'reprise serve peak RSS MB (VmHWM)',
      size,
      `${fmtNum(s.ours.peakRssMb)} restart, ${fmtNum(s.firstStart.peakRssMb)} first start`,
      base(s.emptyStore.peakRssMb),
      ratio(s.ours.peakRssMb, s.emptyStore.peakRssMb),
      '',
    ],
  ];
}

/** `REPRISE_BENCH_ONLY=serve`: the serve rows alone. */
export function renderServeBench(r: ServeResult): string {
  return [
    formatTable(['metric', 'size', 'ours', 'baseline', 'ours vs baseline', 'target'], serveRows(r)),
    '',
    `- The built CLI (node dist/main.js serve --port 0) over ${fmtCount(r.entries)} generated entries and ${fmtCount(r.events)} ledger events with the snapshot a running bot leaves; ready = spawn to /readyz 200; VmRSS 2 s after ready and 2 s after ${r.webhooks} webhooks (8 in flight). Baseline: the same serve over an empty catalog and an empty data dir, in the same run.`,
  ].join('\n');
}
