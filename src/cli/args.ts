import { Command, CommanderError, Option } from 'commander';
import type { parseArgs } from 'node:util';
import type { CliIO } from '../runtime/cli-io.js';

/** One option of a command: its type, an optional one-letter alias, and the line `--help` prints. */
export interface CliOption {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** What `--help` says the option does. */
  description: string;
  /** The value's name in `--help` (`--out <FILE>`); `value` when not given. */
  valueName?: string;
}

export type CliOptions = Record<string, CliOption>;

/** What a command reads back: the same shape node:util parseArgs gives, typed from the options. */
export type ParsedCli<T extends CliOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>>;

/** True when the arguments ask for help (`--help` / `-h` anywhere before a `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/**
 * The one argument parser every command uses: commander, strict (a typo must not silently
 * change what a command does). `--help` / `-h` prints the command's synopsis (`usage`) and the
 * options with their descriptions, generated, to stdout and exits 0. A usage error prints the
 * problem and the synopsis to stderr and exits 2.
 */
export function parseCli<T extends CliOptions>(argv: string[], options: T, usage: string, io: CliIO): ParsedCli<T> | { readonly exit: number } {
  const synopsis = usage.trimEnd();
  const cmd = new Command()
    .exitOverride()
    .allowExcessArguments(true)
    .argument('[arguments...]')
    .helpOption('-h, --help', 'show this help')
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) })
    .configureHelp({ commandUsage: () => synopsis, styleTitle: (t) => t.toLowerCase(), visibleArguments: () => [], helpWidth: 100 });
  // Commander names an option by its camelCased long name; the command reads it by ours.
  const names = new Map<string, string>();
  for (const [name, o] of Object.entries(options)) {
    const flags = `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` <${o.valueName ?? 'value'}>` : ''}`;
    const opt = new Option(flags, o.description);
    if (o.multiple) opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    cmd.addOption(opt);
    names.set(opt.attributeName(), name);
  }
  try {
    cmd.parse(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help') return { exit: 0 };
    io.stderr(`usage: ${synopsis}\n`);
    return { exit: 2 };
  }
  const values: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(cmd.opts())) if (v !== undefined) values[names.get(key) ?? key] = v;
  return { values, positionals: [...cmd.args] } as unknown as ParsedCli<T>;
}
