/**
 * `reprise <args>` in the test's own process (issue 30 item 4): the CLI's one entry
 * (`runReprise`, what `node dist/main.js` calls) on a {@link CliIO} of buffers — the env and
 * working directory given, stdin as given, standard output and error captured (through the
 * same terminal filter `processIO` applies), the root logger's JSON lines written to the same
 * buffer as standard error (as they interleave on fd 2), and the stop `serve` waits for asked by
 * the harness instead of a signal. No cold node start and no build: the source under test runs.
 */
import type { CliIO } from '../../src/runtime/cli-io.js';
import { runReprise } from '../../src/cli/run-reprise.js';
import { terminalSafe } from '../../src/core/render/escape-text.js';

export interface CapturedRun {
  /** Resolves with the command's exit status (a thrown error is status 1, as on the process). */
  status: Promise<number>;
  stdout(): string;
  stderr(): string;
  /**
   * Asks a command that runs until stopped (`serve`, `mcp --http`) to end, as SIGTERM does;
   * false when it is not waiting for a stop (not yet, or it already ended).
   */
  requestStop(signal?: string): boolean;
}

/** Starts `reprise <args>` in this process; see {@link CapturedRun}. */
export function runInProcess(args: readonly string[], opts: { env: NodeJS.ProcessEnv; cwd: string; input?: string }): CapturedRun {
  let out = '';
  let err = '';
  const stoppers = new Set<(signal: string) => void>();
  const io: CliIO = {
    stdout: (t) => void (out += terminalSafe(t)),
    stderr: (t) => void (err += terminalSafe(t)),
    stdin: async () => opts.input ?? '',
    env: opts.env,
    cwd: opts.cwd,
    log: { write: (line) => void (err += line) },
    onStop: (stop) => {
      stoppers.add(stop);
      return () => void stoppers.delete(stop);
    },
  };
  const status = runReprise(args, io).finally(() => stoppers.clear());
  return {
    status,
    stdout: () => out,
    stderr: () => err,
    requestStop: (signal = 'SIGTERM') => {
      if (stoppers.size === 0) return false;
      const all = [...stoppers];
      stoppers.clear();
      for (const stop of all) stop(signal);
      return true;
    },
  };
}
