import { terminalSafe } from '../core/render/escape-text.js';

/** What a CLI command may touch besides its arguments; tests pass buffers. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads all of standard input (for `-`). */
  stdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /**
   * Where the root logger's JSON lines go; default standard error. A test running a command in
   * its own process passes the buffer its `stderr` writes to, so the two interleave as on fd 2.
   */
  log?: { write(line: string): void };
  /**
   * Calls `stop` once the command is asked to end, for commands that run until then (`serve`,
   * `mcp --http`); returns a function that stops listening. Default {@link onProcessStop}; a
   * test running the command in its own process asks it itself.
   */
  onStop?: (stop: (signal: string) => void) => () => void;
}

/** The first SIGINT or SIGTERM this process receives calls `stop`. */
export function onProcessStop(stop: (signal: string) => void): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    off();
    stop(signal);
  };
  const off = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return off;
}

/** Every command: parse its own argv, do the work, return the exit status. */
export type CliCommand = (argv: string[], io: CliIO) => Promise<number>;

export function processIO(): CliIO {
  return {
    // Whatever a command prints may carry alert text, notes or model output: nothing reaches the
    // terminal that could reorder or hide it (bidi overrides, escapes, invisible characters).
    stdout: (t) => void process.stdout.write(terminalSafe(t)),
    stderr: (t) => void process.stderr.write(terminalSafe(t)),
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    env: process.env,
    cwd: process.cwd(),
    onStop: onProcessStop,
  };
}
