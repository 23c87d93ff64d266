import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CliIO } from './io.js';

export class UsageError extends Error {}

/** True when the arguments ask for help (`--help` / `-h` anywhere before a `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/**
 * The one argument parser every command uses: node:util parseArgs, strict (a typo must not
 * silently change what a command does), plus `--help` / `-h`, which prints `usage` to stdout
 * and exits 0. A usage error prints the problem and the usage to stderr and exits 2.
 */
export function parseCli<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, usage: string, io: CliIO) {
  if (wantsHelp(argv)) {
    io.stdout(`usage: ${usage.trimEnd()}\n`);
    return { exit: 0 } as const;
  }
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    io.stderr(`${err instanceof Error ? err.message : String(err)}\nusage: ${usage.trimEnd()}\n`);
    return { exit: 2 } as const;
  }
}
