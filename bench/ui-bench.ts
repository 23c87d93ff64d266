/**
 * The memory view's pages on a big memory (issue 23 item 3): `reprise serve` (the built
 * dist/main.js) over a 10,000-entry catalog and a 1,000,000-event ledger (bench/ui-ledger.ts),
 * each /ui page fetched over HTTP from 127.0.0.1 one request at a time, against the same page
 * of a bot over a near-empty store (one entry, the one open that recalled it: the smallest
 * store whose entry and incident pages exist). p50 / p99 per page, the ratio of the p99s, and
 * ✓/✗ against the 100 ms p99 target. Figures only; no test times anything.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStore } from '../src/adapters/keyv/keyv-store.js';
import { Ledger } from '../src/core/ledger/ledger.js';
import { writeCatalogFiles } from './catalog-files.js';
import { fmtNum, formatTable } from './format-table.js';
import { percentile } from './percentile.js';
import { generateCatalog } from './synthetic-catalog.js';
import { writeUiStore, type UiLedgerFacts } from './ui-ledger.js';

/** The issue's target for every page at 10k entries / 1M events. */
export const UI_P99_TARGET_MS = 100;

export interface UiPageResult {
  page: string;
  /** Bytes of the big store's page (the small one's beside it). */
  bytes: number;
  smallBytes: number;
  /** `cpuMs`: the bot's CPU time per request. */
  big: { p50: number; p99: number; cpuMs: number; n: number; status: number };
  small: { p50: number; p99: number; cpuMs: number; n: number; status: number };
}

export interface UiBenchResult {
  entries: number;
  events: number;
  facts: UiLedgerFacts;
  /** Spawn to /readyz of the big bot (it starts from the snapshot). */
  readyMs: number;
  requests: number;
  pages: UiPageResult[];
}

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Served {
  url: string;
  pid: number;
  readyMs: number;
  stop(): Promise<void>;
}

/** CPU time (user + system) a process has used, ms (Linux /proc; clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** `reprise serve` on an ephemeral port of 127.0.0.1, ready (/readyz 200). */
async function serve(catalogDir: string, dataDir: string, configDir: string): Promise<Served> {
  const config = join(configDir, 'reprise.yaml');
  writeFileSync(config, `catalog:\n  dir: ${JSON.stringify(catalogDir)}\nstore:\n  data_dir: ${JSON.stringify(dataDir)}\nserver:\n  host: 127.0.0.1\n`);
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, 'serve', '--config', config, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr = (stderr + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  };
  try {
    const deadline = Date.now() + 300_000;
    let port: number | undefined;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`reprise serve exited with ${child.exitCode}: ${stderr.slice(-2000)}`);
      port ??= Number(/listening on http:\/\/[^\s:"]+:(\d+)/.exec(stderr)?.[1]) || undefined;
      if (
        port !== undefined &&
        (await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        ))
      ) {
        return { url: `http://127.0.0.1:${port}`, pid: child.pid!, readyMs: performance.now() - started, stop };
      }
      await sleep(50);
    }
    throw new Error(`reprise serve was not ready in time: ${stderr.slice(-2000)}`);
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * `n` sequential GETs of `path` after `warmup` untimed ones: ms per request (headers and body
 * read), and the bot's CPU per request (steadier than wall time on a shared machine).
 */
async function timeGets(
  bot: Served,
  path: string,
  warmup: number,
  n: number,
): Promise<{ p50: number; p99: number; cpuMs: number; n: number; status: number; bytes: number }> {
  const url = bot.url;
  let status = 0;
  let bytes = 0;
  for (let i = 0; i < warmup; i++) {
    const r = await fetch(`${url}${path}`);
    bytes = (await r.arrayBuffer()).byteLength;
    status = r.status;
  }
  const ms = new Float64Array(n);
  const cpu0 = cpuMsOf(bot.pid);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(`${url}${path}`);
    await r.arrayBuffer();
    ms[i] = performance.now() - t0;
    status = r.status;
  }
  const cpuMs = (cpuMsOf(bot.pid) - cpu0) / n;
  ms.sort();
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), cpuMs, n, status, bytes };
}

/** The near-empty store: one catalog entry and the one open that recalled it. */
async function writeSmallStore(catalogDir: string, dataDir: string): Promise<{ entry: string; openId: string }> {
  const [entry] = generateCatalog(1).entries;
  if (!entry) throw new Error('ui bench: no entry generated');
  writeCatalogFiles(catalogDir, [entry]);
  mkdirSync(dataDir, { recursive: true });
  const store = createStore(undefined, dataDir);
  const ledger = await Ledger.open(store);
  const at = new Date(Date.now() - 3_600_000).toISOString();
  await ledger.append({
    type: 'open',
    id: 'small-1',
    fingerprint: 'fp-small',
    triggerKey: 'alert0|ns0|deployment|wl0|prod',
    kind: 'recall',
    entry: entry.id,
    answerKind: entry.type === 'Playbook' ? 'runbook' : 'incident',
    dupFingerprint: 'dup0',
    verdict: 'action_suggested',
    resolvable: true,
    source: 'alertmanager',
    alert: { alertname: 'Alert0', title: 'Alert0 on wl0' },
    at,
  });
  await ledger.close();
  await store.close();
  return { entry: entry.id, openId: 'small-1' };
}

export async function runUiBench(opts: { entries: number; events: number; requests: number; log: (line: string) => void }): Promise<UiBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'reprise-ui-bench-'));
  const running: Served[] = [];
  try {
    opts.log(`bench: ui — writing a ${opts.entries.toLocaleString('en-US')}-entry catalog and a ${opts.events.toLocaleString('en-US')}-event ledger`);
    const t0 = performance.now();
    const facts = await writeUiStore(join(dir, 'catalog'), join(dir, 'data'), {
      entries: opts.entries,
      shape: { events: opts.events, triggers: 15_000, days: 90, end: new Date(), users: 200, idTailEvents: 32_000 },
      log: opts.log,
    });
    opts.log(
      `bench: ui — written in ${((performance.now() - t0) / 1000).toFixed(1)} s (events ${(facts.writeMs / 1000).toFixed(1)} s, replay + snapshot ${(facts.snapshotMs / 1000).toFixed(1)} s, ${facts.skipped} skipped)`,
    );
    const small = await writeSmallStore(join(dir, 'small-catalog'), join(dir, 'small-data'));
    const big = await serve(join(dir, 'catalog'), join(dir, 'data'), dir);
    running.push(big);
    mkdirSync(join(dir, 'small'));
    const tiny = await serve(join(dir, 'small-catalog'), join(dir, 'small-data'), join(dir, 'small'));
    running.push(tiny);
    opts.log(`bench: ui — big bot ready in ${(big.readyMs / 1000).toFixed(1)} s`);
    const enc = (id: string): string => id.split('/').map(encodeURIComponent).join('/');
    const pages: Array<[string, string, string]> = [
      ['overview', '/ui', '/ui'],
      ['overview 90 d', '/ui?days=90', '/ui?days=90'],
      ['knowledge', '/ui/knowledge', '/ui/knowledge'],
      ['knowledge last page', '/ui/knowledge?page=200', '/ui/knowledge?page=200'],
      ['knowledge ?q=', '/ui/knowledge?q=timeout', '/ui/knowledge?q=timeout'],
      ['knowledge ?flag=', '/ui/knowledge?flag=never-recalled', '/ui/knowledge?flag=never-recalled'],
      ['entry', `/ui/knowledge/${enc(facts.hottestEntry)}`, `/ui/knowledge/${enc(small.entry)}`],
      ['incidents', '/ui/incidents', '/ui/incidents'],
      ['incidents ?kind=', '/ui/incidents?kind=degraded', '/ui/incidents?kind=degraded'],
      ['incident', `/ui/incidents/${facts.newestOpen}`, `/ui/incidents/${small.openId}`],
      ['gaps', '/ui/gaps', '/ui/gaps'],
    ];
    const results: UiPageResult[] = [];
    for (const [name, bigPath, smallPath] of pages) {
      const warmup = Math.max(5, Math.floor(opts.requests / 10));
      const b = await timeGets(big, bigPath, warmup, opts.requests);
      const s = await timeGets(tiny, smallPath, warmup, opts.requests);
      opts.log(
        `  ui: ${name.padEnd(20)} p99 ${b.p99.toFixed(1)} ms, CPU ${b.cpuMs.toFixed(2)} ms/req (near-empty ${s.p99.toFixed(1)} ms, ${s.cpuMs.toFixed(2)}), HTTP ${b.status}`,
      );
      results.push({
        page: `${name} (${bigPath.length > 40 ? `${bigPath.slice(0, 40)}…` : bigPath})`,
        bytes: b.bytes,
        smallBytes: s.bytes,
        big: { p50: b.p50, p99: b.p99, cpuMs: b.cpuMs, n: b.n, status: b.status },
        small: { p50: s.p50, p99: s.p99, cpuMs: s.cpuMs, n: s.n, status: s.status },
      });
    }
    return { entries: opts.entries, events: facts.events, facts, readyMs: big.readyMs, requests: opts.requests, pages: results };
  } finally {
    for (const s of running) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function renderUiBench(r: UiBenchResult): string {
  const rows = r.pages.map((p) => {
    const ok = p.big.status === 200 && p.big.p99 <= UI_P99_TARGET_MS;
    return [
      p.page,
      String(p.big.status),
      fmtNum(p.big.p50),
      fmtNum(p.big.p99),
      fmtNum(p.big.cpuMs),
      fmtNum(p.small.p50),
      fmtNum(p.small.p99),
      p.small.p99 > 0 ? `×${fmtNum(p.big.p99 / p.small.p99)}` : '–',
      `${Math.round(p.bytes / 1024)} KB`,
      `${ok ? '✓' : '✗'} ≤ ${UI_P99_TARGET_MS} ms`,
    ];
  });
  return [
    `memory view (/ui) over HTTP: ${r.entries.toLocaleString('en-US')} entries, ${r.events.toLocaleString('en-US')} events (${r.facts.opens.toLocaleString('en-US')} opens) vs a near-empty store (1 entry, 1 open); ${r.requests} sequential GETs per page; bot ready in ${(r.readyMs / 1000).toFixed(1)} s; store written in ${((r.facts.writeMs + r.facts.snapshotMs) / 1000).toFixed(1)} s (replay + snapshot ${(r.facts.snapshotMs / 1000).toFixed(1)} s)`,
    formatTable(['page', 'HTTP', 'p50 ms', 'p99 ms', 'CPU ms/req', 'empty p50', 'empty p99', 'p99 ratio', 'size', 'target'], rows),
  ].join('\n');
}
