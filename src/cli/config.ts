/**
 * `reprise config defaults | reference | check | show`: print the annotated defaults or the
 * Markdown reference, validate a config, or print the resolved config with secrets masked.
 */
import { stringify } from 'yaml';
import { CONFIG_EXIT_CODE, ConfigError } from '../config/config-error.js';
import { renderDefaultsYaml } from '../config/defaults-yaml.js';
import { renderConfigReference } from '../config/reference-md.js';
import { loadConfig, maskSecrets } from '../config/load-config.js';
import { wantsHelp } from './args.js';
import type { CliCommand, CliIO } from './io.js';

const USAGE = `usage: reprise config <command>

  defaults                 print every key with its default and doc (a starting config file)
  reference                print the configuration reference as Markdown (docs/configuration.md)
  check [--config FILE]    validate FILE (or $REPRISE_CONFIG) plus env overrides; exit 2 if invalid
  show  [--config FILE]    print the resolved config, secrets masked
`;

/** Exit status for a command line that does not parse. */
const USAGE_EXIT = 2;

export const config: CliCommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub !== undefined && wantsHelp(rest)) {
    io.stdout(USAGE);
    return 0;
  }
  switch (sub) {
    case 'defaults':
      if (rest.length > 0) return usage(io, `unexpected argument: ${rest[0]}`);
      io.stdout(renderDefaultsYaml());
      return 0;
    case 'reference':
      if (rest.length > 0) return usage(io, `unexpected argument: ${rest[0]}`);
      io.stdout(renderConfigReference());
      return 0;
    case 'check':
    case 'show': {
      const parsed = parseConfigFlag(rest);
      if ('error' in parsed) return usage(io, parsed.error);
      return withConfig(io, parsed.file, (cfg, file) => {
        io.stdout(sub === 'check' ? `config OK${file ? ` (${file})` : ' (defaults + env)'}\n` : stringify(maskSecrets(cfg)));
      });
    }
    case 'help':
    case '--help':
    case '-h':
      io.stdout(USAGE);
      return 0;
    case undefined:
      return usage(io, 'missing command');
    default:
      return usage(io, `unknown command: ${sub}`);
  }
};

function withConfig(io: CliIO, file: string | undefined, then: (cfg: ReturnType<typeof loadConfig>, file: string | undefined) => void): number {
  try {
    const cfg = loadConfig({ file, env: io.env, cwd: io.cwd });
    then(cfg, file ?? (io.env.REPRISE_CONFIG || undefined));
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(err.format());
      return CONFIG_EXIT_CODE;
    }
    throw err;
  }
}

/** `--config FILE` or `--config=FILE`; nothing else is accepted. */
export function parseConfigFlag(args: readonly string[]): { file?: string } | { error: string } {
  let file: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--config' || a === '-c') {
      const next = args[i + 1];
      if (next === undefined || next === '') return { error: `${a} needs a file` };
      file = next;
      i++;
    } else if (a.startsWith('--config=')) {
      file = a.slice('--config='.length);
      if (file === '') return { error: '--config needs a file' };
    } else {
      return { error: `unexpected argument: ${a}` };
    }
  }
  return file === undefined ? {} : { file };
}

function usage(io: CliIO, problem: string): number {
  io.stderr(`reprise config: ${problem}\n\n${USAGE}`);
  return USAGE_EXIT;
}
