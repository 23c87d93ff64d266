/**
 * The real `startBot` in the test's own process (issue 30 item 4): the same config loading as
 * `reprise serve` (the env given, the config file, `--port 0 --host 127.0.0.1`), the same HTTP
 * port, control socket, transcript and log lines, without a cold node start per test. Reads like
 * {@link BotProcess} so a test can switch between the two; what has no meaning in-process — the
 * child, a SIGKILL — is left out. Tests of a process boundary (crash, signals, the lock, the CLI
 * surface) spawn instead.
 */
import { join } from 'node:path';
import type { TranscriptLine } from '../../../src/adapters/console/transcript-file.js';
import { loadCliConfig } from '../../../src/cli/cli-config.js';
import type { CliIO } from '../../../src/runtime/cli-io.js';
import { createLogger } from '../../../src/runtime/create-logger.js';
import { startBot, type RunningBot } from '../../../src/runtime/start-bot.js';
import { childEnv, observers, onCleanup, REPO_ROOT, type BotProcess, type ExitInfo, type LogLine, type SpawnBotOptions } from './spawn-bot.js';

export interface InProcessBot extends Omit<BotProcess, 'child' | 'kill' | 'alive'> {
  /** What `startBot` returned: the loop's inbox, the ledger, the outbox. */
  running: RunningBot;
}

function parseLines(lines: readonly string[]): LogLine[] {
  const out: LogLine[] = [];
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as LogLine);
    } catch {
      // not a log line
    }
  }
  return out;
}

/** `reprise serve --port 0 --host 127.0.0.1 [args]` in this process; resolves once it listens. */
export async function startInProcess(opts: SpawnBotOptions): Promise<InProcessBot> {
  const transcript = opts.transcript ?? join(opts.dataDir, 't.jsonl');
  const env = childEnv({ REPRISE_DATA_DIR: opts.dataDir, REPRISE_TRANSCRIPT: transcript, REPRISE_LOG_LEVEL: 'info', ...opts.env });
  let out = '';
  let err = '';
  const io: CliIO = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    stdin: async () => '',
    env,
    cwd: opts.cwd ?? REPO_ROOT,
  };
  const args = opts.args ?? [];
  const at = args.indexOf('--config');
  const loaded = loadCliConfig(at >= 0 ? args[at + 1] : undefined, io);
  if ('exit' in loaded) throw new Error(`the config did not load (exit ${loaded.exit}):\n${err}`);
  const { config } = loaded;
  config.server.port = 0;
  config.server.host = '127.0.0.1';
  const logLines: string[] = [];
  let partial = '';
  const logger = createLogger({
    level: config.log.level,
    env,
    destination: {
      write: (chunk: string) => {
        partial += chunk;
        const lines = partial.split('\n');
        partial = lines.pop() ?? '';
        logLines.push(...lines);
      },
    },
  });
  const running = await startBot(config, io, logger);
  let ended!: (e: ExitInfo) => void;
  const exited = new Promise<ExitInfo>((resolve) => (ended = resolve));
  let stopped: Promise<ExitInfo> | undefined;
  // A clean stop is what SIGTERM does to `serve`: exit 0.
  const stop = (): Promise<ExitInfo> => {
    stopped ??= running.stop().then(() => {
      const e = { code: 0, signal: null };
      ended(e);
      return e;
    });
    return stopped;
  };
  const unregister = onCleanup(async () => void (await stop()));
  const url = `http://127.0.0.1:${running.port}`;
  return {
    running,
    pid: process.pid,
    port: running.port,
    url,
    dataDir: opts.dataDir,
    transcript,
    stdout: () => out,
    stderr: () => `${err}${logLines.join('\n')}`,
    ...observers(url, transcript, () => parseLines(logLines)),
    exited,
    stop: async () => {
      unregister();
      return stop();
    },
  };
}

export type { TranscriptLine };
