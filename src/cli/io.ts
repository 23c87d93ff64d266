import { terminalSafe } from '../core/render/escape-text.js';

/** What a CLI command may touch besides its arguments; tests pass buffers. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads all of standard input (for `-`). */
  stdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
  cwd: string;
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
  };
}
