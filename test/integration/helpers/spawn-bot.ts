/**
 * Runs the real CLI for integration tests: a `serve` that is waited on until it logs its port,
 * and one-shot commands with their exit status and output. By default both run in the test's
 * own process (the CLI's entry on captured buffers, see cli-in-process.ts): the same config
 * loading, `startBot`, HTTP port, control socket, transcript and log lines, without a cold node
 * start. `process: true` runs `node dist/main.js …` as a child instead, for what only a process
 * boundary shows: a crash (`kill()`), signals, another process holding the store lock, the
 * pid, the exit status and stdio of the built artifact. Every bot and child is tracked so a
 * test's afterEach ends whatever it left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TranscriptLine } from '../../../src/adapters/console/transcript-file.js';
import { GiveUp, waitFor } from '../../helpers/wait-for.js';
import { runInProcess } from '../../helpers/cli-in-process.js';

/** @deprecated Import `waitFor` from test/helpers/wait-for.ts (kept for branches not yet merged). */
export { waitFor } from '../../helpers/wait-for.js';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const MAIN_JS = join(REPO_ROOT, 'dist', 'main.js');

/** Generous: two busy cores shared with other suites, a cold node start and a catalog index. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

const live = new Set<ChildProcess>();
const tmpDirs: string[] = [];
/** Whatever else {@link cleanup} must end first (bots running in this process). */
const enders = new Set<() => Promise<void>>();

/** Has {@link cleanup} call `end` (before the temp folders go); returns a function that unregisters it. */
export function onCleanup(end: () => Promise<void>): () => void {
  enders.add(end);
  return () => enders.delete(end);
}

/** Fails fast with the fix when the build output is missing (vitest alone does not build). */
export function assertBuilt(): void {
  if (!existsSync(MAIN_JS)) throw new Error(`${MAIN_JS} is missing: run \`npm run build\` (npm test does) before the integration tests`);
}

/** A fresh temp folder, removed by {@link cleanup}. */
export function makeTmpDir(prefix = 'reprise-it-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tmpDirs.push(dir);
  return dir;
}

/**
 * The parent's environment without anything that would configure the bot behind the test's
 * back (a developer's REPRISE_CONFIG, PORT, tokens), plus `extra`.
 */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('REPRISE_') || k === 'PORT' || k === 'OPENAI_API_KEY' || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function exitOf(child: ChildProcess): Promise<ExitInfo> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** One parsed pino line from the bot's stderr. */
export type LogLine = Record<string, unknown> & { level?: number; msg?: string };

export interface BotProcess {
  /**
   * The child process; only with `spawnBot({ process: true })` (in process, reading it throws
   * with that fix).
   */
  child: ChildProcess;
  /** The pid the bot runs as (announced in serve.json and by the CLI): the test's own in process. */
  pid: number;
  /** Whether `serve` is still running (it has not exited or been stopped). */
  alive(): boolean;
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  dataDir: string;
  transcript: string;
  stdout(): string;
  stderr(): string;
  /** The JSON log lines written so far (non-JSON stderr lines are left out). */
  logs(): LogLine[];
  /** Polls the logs until one matches. */
  waitForLog(match: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Transcript lines written so far (empty when the file does not exist yet). */
  transcriptLines(): TranscriptLine[];
  /**
   * Polls the transcript until `match` holds for the lines written so far: delivery follows the
   * webhook's 202 through the outbox, a moment later.
   */
  waitForTranscript(match: (lines: TranscriptLine[]) => boolean, timeoutMs?: number): Promise<TranscriptLine[]>;
  /**
   * Resolves, with the ledger's seq, once the bot has nothing left to deliver: `/readyz` reports
   * no pending outbox item and the same ledger seq on two looks in a row. What a test checks
   * after it ("nothing more was posted") is then conclusive: every message the bot recorded has
   * been sent or given up. Work still running outside the ledger (an investigation waiting on its
   * model) is not covered: wait for its own signal.
   */
  settled(timeoutMs?: number): Promise<number>;
  /** `/readyz` as JSON, whatever its status (503 while not ready carries the same checks). */
  readyz(): Promise<ReadyzBody>;
  /** SIGTERM, then SIGKILL if it has not exited after a while; resolves with how it ended. */
  stop(): Promise<ExitInfo>;
  /** SIGKILL, no grace: a crash. Only with `spawnBot({ process: true })`; in process it throws with that fix. */
  kill(): Promise<ExitInfo>;
  exited: Promise<ExitInfo>;
}

/** What `/readyz` answers (src/http/readiness.ts), as far as the tests read it. */
export interface ReadyzBody {
  ready: boolean;
  reasons: string[];
  checks: {
    ledger: { seq: number; skippedRecords: number };
    outbox: { pending: number; retrying: number; surfaces: string[] };
    replica: { role: string };
  } & Record<string, Record<string, unknown>>;
}

/** `/readyz` of the bot at `url`. */
export async function readyz(url: string): Promise<ReadyzBody> {
  return (await (await fetch(`${url}/readyz`)).json()) as ReadyzBody;
}

/** See {@link BotProcess.settled}: polls `/readyz` at `url`. */
export async function settled(url: string, timeoutMs?: number): Promise<number> {
  let prev: number | undefined;
  return waitFor(
    async () => {
      const r = await readyz(url);
      const seq = r.checks.ledger.seq;
      const same = r.checks.outbox.pending === 0 && seq === prev;
      prev = r.checks.outbox.pending === 0 ? seq : undefined;
      return same ? seq : undefined;
    },
    { what: `the bot at ${url} to settle (/readyz: no outbox item pending, the ledger seq unchanged)`, ...(timeoutMs ? { timeoutMs } : {}) },
  );
}

export interface SpawnBotOptions {
  dataDir: string;
  /** Transcript file; default `<dataDir>/t.jsonl`. */
  transcript?: string;
  /** Extra env (wins over the defaults set here). */
  env?: Record<string, string | undefined>;
  /** Extra `serve` arguments, e.g. `['--config', file]`. */
  args?: string[];
  cwd?: string;
  /**
   * Run `node dist/main.js serve` as a child process (needs `npm run build`) instead of in this
   * process. Only where a process boundary is under test: a crash (`kill()`), a signal
   * (`child.kill('SIGSTOP')`), the store lock held by another process, serve's own exit status or
   * stdio. Everything else runs in process: faster, and the source under test without a build.
   */
  process?: boolean;
}

/**
 * Reads a JSON-lines transcript; a missing file is no lines. The bot may be appending while
 * this reads: only complete lines (ended by a newline) count, a half-written last one waits.
 */
export function readTranscript(file: string): TranscriptLine[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as TranscriptLine);
}

/** What every bot handle reads the same way, spawned or in process: its log lines, its transcript, /readyz. */
export function observers(
  url: string,
  transcript: string,
  logs: () => LogLine[],
): Pick<BotProcess, 'logs' | 'waitForLog' | 'transcriptLines' | 'waitForTranscript' | 'settled' | 'readyz'> {
  return {
    logs,
    waitForLog: (match, timeoutMs) => waitFor(() => logs().find(match), { what: `a log line matching ${String(match)}`, ...(timeoutMs ? { timeoutMs } : {}) }),
    transcriptLines: () => readTranscript(transcript),
    waitForTranscript: (match, timeoutMs) =>
      waitFor(
        () => {
          const lines = readTranscript(transcript);
          return match(lines) ? lines : undefined;
        },
        { what: `transcript lines matching ${String(match)}`, ...(timeoutMs ? { timeoutMs } : {}) },
      ),
    settled: (timeoutMs) => settled(url, timeoutMs),
    readyz: () => readyz(url),
  };
}

function parseLogs(text: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as LogLine);
    } catch {
      // a line still being written
    }
  }
  return out;
}

const isListening = (l: LogLine): boolean => typeof l.msg === 'string' && l.msg.startsWith('listening on http') && typeof l.port === 'number';

/** The parts of {@link BotProcess} that read what the bot wrote or ask its HTTP port. */
function observe(
  port: number,
  opts: SpawnBotOptions,
  transcript: string,
  out: () => string,
  err: () => string,
): Pick<
  BotProcess,
  'port' | 'url' | 'dataDir' | 'transcript' | 'stdout' | 'stderr' | 'logs' | 'waitForLog' | 'transcriptLines' | 'waitForTranscript' | 'settled' | 'readyz'
> {
  const url = `http://127.0.0.1:${port}`;
  return {
    port,
    url,
    dataDir: opts.dataDir,
    transcript,
    stdout: out,
    stderr: err,
    ...observers(url, transcript, () => parseLogs(err())),
  };
}

/** What the bot's env is: the defaults here (its data dir, transcript, info logs), then `opts.env`. */
function serveEnv(opts: SpawnBotOptions, transcript: string): NodeJS.ProcessEnv {
  return childEnv({ REPRISE_DATA_DIR: opts.dataDir, REPRISE_TRANSCRIPT: transcript, REPRISE_LOG_LEVEL: 'info', ...opts.env });
}

const SERVE_ARGS = ['serve', '--port', '0', '--host', '127.0.0.1'];

/**
 * Starts `reprise serve --port 0 --host 127.0.0.1 [args]` and resolves once it logged
 * `listening on http://…:PORT` (after the ledger opened and the serve lock was written): in
 * this process, or as `node dist/main.js` with `process: true` (see {@link SpawnBotOptions.process}).
 * @throws when serve exits first or does not listen in time, with its stderr.
 */
export async function spawnBot(opts: SpawnBotOptions): Promise<BotProcess> {
  return opts.process ? spawnChild(opts) : serveInProcess(opts);
}

/** Fails a test reading what only a child process has, with the fix. */
function needsProcess(what: string): never {
  throw new Error(`${what} needs a process of its own: start this bot with spawnBot({ ..., process: true })`);
}

async function serveInProcess(opts: SpawnBotOptions): Promise<BotProcess> {
  const transcript = opts.transcript ?? join(opts.dataDir, 't.jsonl');
  const run = runInProcess([...SERVE_ARGS, ...(opts.args ?? [])], { env: serveEnv(opts, transcript), cwd: opts.cwd ?? REPO_ROOT });
  let gone: ExitInfo | undefined;
  const exited = run.status.then((code) => (gone = { code, signal: null }));
  let port: number;
  try {
    port = await waitFor(
      () => {
        if (gone) throw new GiveUp(`serve exited (${gone.code}) before listening:\n${run.stderr()}`);
        const l = parseLogs(run.stderr()).find(isListening);
        return l ? (l.port as number) : undefined;
      },
      { what: 'the "listening on" log line', timeoutMs: START_TIMEOUT_MS },
    );
  } catch (e) {
    // Still starting after the deadline: stop it once it listens, whatever the test does next.
    if (!gone)
      void waitFor(() => gone !== undefined || run.requestStop(), { what: 'serve to take a stop', timeoutMs: START_TIMEOUT_MS }).catch(() => undefined);
    throw new Error(`${(e as Error).message}\nstderr so far:\n${run.stderr()}`, { cause: e });
  }
  let stopping: Promise<ExitInfo> | undefined;
  // What SIGTERM does to serve: it stops the bot (drains the outbox, closes the store) and exits 0.
  const stop = (): Promise<ExitInfo> =>
    (stopping ??= (async () => {
      if (gone) return gone;
      // serve waits for its stop right after it logged "listening on": a moment, not a window.
      await waitFor(() => gone !== undefined || run.requestStop(), { what: 'serve to wait for its stop' });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`serve did not stop within ${STOP_TIMEOUT_MS} ms of its stop:\n${run.stderr()}`)), STOP_TIMEOUT_MS);
      });
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    })());
  const unregister = onCleanup(async () => void (await stop()));
  return {
    get child(): ChildProcess {
      return needsProcess('bot.child');
    },
    pid: process.pid,
    alive: () => gone === undefined,
    ...observe(port, opts, transcript, run.stdout, run.stderr),
    exited,
    stop: async () => {
      unregister();
      return stop();
    },
    kill: async () => needsProcess('bot.kill() (a crash)'),
  };
}

async function spawnChild(opts: SpawnBotOptions): Promise<BotProcess> {
  assertBuilt();
  const transcript = opts.transcript ?? join(opts.dataDir, 't.jsonl');
  const child = spawn(process.execPath, [MAIN_JS, ...SERVE_ARGS, ...(opts.args ?? [])], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: serveEnv(opts, transcript),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = exitOf(child).then((e) => {
    live.delete(child);
    return e;
  });
  let gone: ExitInfo | undefined;
  void exited.then((e) => (gone = e));

  let port: number;
  try {
    port = await waitFor(
      () => {
        if (gone) throw new GiveUp(`serve exited (${gone.code ?? gone.signal}) before listening:\n${err}`);
        const l = parseLogs(err).find(isListening);
        return l ? (l.port as number) : undefined;
      },
      { what: 'the "listening on" log line', timeoutMs: START_TIMEOUT_MS },
    );
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`${(e as Error).message}\nstderr so far:\n${err}`, { cause: e });
  }

  const bot: BotProcess = {
    child,
    pid: child.pid!,
    alive: () => gone === undefined,
    ...observe(
      port,
      opts,
      transcript,
      () => out,
      () => err,
    ),
    exited,
    stop: async () => {
      if (gone) return gone;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const e = await exited;
      clearTimeout(timer);
      return e;
    },
    kill: async () => {
      if (gone) return gone;
      child.kill('SIGKILL');
      return exited;
    },
  };
  return bot;
}

export interface CliResult extends ExitInfo {
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Written to the child's stdin, then closed. */
  input?: string;
  timeoutMs?: number;
  /**
   * Run `node dist/main.js <args>` as a child process (needs `npm run build`) instead of calling
   * the CLI's entry in this process. Only where the process is under test: what the built
   * artifact's exit code and stdio are, a signal, a lock held by another process.
   */
  process?: boolean;
}

const CLI_TIMEOUT_MS = 20_000;

/**
 * Runs `reprise <args>` to completion, in this process or (`process: true`) as
 * `node dist/main.js <args>`; a run that overruns is stopped (a child killed) and reported.
 */
export function runCli(args: string[], opts: RunCliOptions = {}): Promise<CliResult> {
  return opts.process ? runChild(args, opts) : runCliInProcess(args, opts);
}

async function runCliInProcess(args: string[], opts: RunCliOptions): Promise<CliResult> {
  const run = runInProcess(args, { env: childEnv(opts.env), cwd: opts.cwd ?? REPO_ROOT, ...(opts.input === undefined ? {} : { input: opts.input }) });
  const timeoutMs = opts.timeoutMs ?? CLI_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const overran = new Promise<'overran'>((resolve) => (timer = setTimeout(() => resolve('overran'), timeoutMs)));
  // Whatever is still running when the test ends is asked to stop, and waited for (a while).
  const end = onCleanup(async () => {
    run.requestStop();
    let late: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_, reject) => {
      late = setTimeout(() => reject(new Error(`reprise ${args.join(' ')} did not end within ${STOP_TIMEOUT_MS} ms of its stop`)), STOP_TIMEOUT_MS);
    });
    await Promise.race([run.status, gaveUp]).finally(() => clearTimeout(late));
  });
  const code = await Promise.race([run.status, overran]).finally(() => clearTimeout(timer));
  if (code === 'overran') {
    // A command still serving (serve, mcp --http) is asked to stop now; cleanup waits for it.
    run.requestStop();
    throw new Error(`reprise ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`);
  }
  end();
  return { code, signal: null, stdout: run.stdout(), stderr: run.stderr() };
}

function runChild(args: string[], opts: RunCliOptions): Promise<CliResult> {
  assertBuilt();
  const child = spawn(process.execPath, [MAIN_JS, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: childEnv(opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin!.on('error', () => {}); // a command that never reads stdin may close it first
  child.stdin!.end(opts.input ?? '');
  const timeoutMs = opts.timeoutMs ?? CLI_TIMEOUT_MS;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  return exitOf(child).then(async (e) => {
    clearTimeout(timer);
    live.delete(child);
    // 'exit' can fire before the pipes drained.
    await Promise.all([once(child.stdout!), once(child.stderr!)]);
    if (timedOut) throw new Error(`reprise ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    return { ...e, stdout, stderr };
  });
}

function once(stream: NodeJS.ReadableStream & { readableEnded?: boolean; destroyed?: boolean }): Promise<void> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('close', resolve);
    stream.once('end', resolve);
  });
}

/** Stops every bot still running in this process, kills every child (SIGKILL) and removes the temp folders. For afterEach/afterAll. */
export async function cleanup(): Promise<void> {
  const failed: unknown[] = [];
  for (const end of [...enders]) {
    enders.delete(end);
    await end().catch((err: unknown) => failed.push(err));
  }
  const waits = [...live].map((c) => {
    const done = exitOf(c);
    c.kill('SIGKILL');
    return done;
  });
  await Promise.all(waits);
  live.clear();
  for (const d of tmpDirs.splice(0)) rmSync(d, { recursive: true, force: true });
  // A bot in this process that would not stop is a leak into every later test: said, not hidden.
  if (failed.length > 0) throw new AggregateError(failed, `cleanup: ${failed.map((e) => (e instanceof Error ? e.message : String(e))).join('; ')}`);
}
