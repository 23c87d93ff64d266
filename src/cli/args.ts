import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

/**
 * node:util parseArgs with errors turned into a UsageError whose message says what to type.
 * Unknown flags are errors: a typo must not silently change what a command does.
 */
export function parseCli<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)}\nusage: ${usage}`);
  }
}
