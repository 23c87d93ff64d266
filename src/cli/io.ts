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
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    env: process.env,
    cwd: process.cwd(),
  };
}
