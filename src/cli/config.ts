/**
 * `reprise config defaults | reference | check | show`: print the annotated defaults or the
 * Markdown reference, validate a config, or print the resolved config with secrets masked.
 */
import { stringify } from 'yaml';
import { CONFIG_EXIT_CODE, ConfigError } from '../config/config-error.js';
import { renderDefaultsYaml } from '../config/defaults-yaml.js';
import { renderConfigReference } from '../config/reference-md.js';
import { configFile, loadConfig, maskSecrets } from '../config/load-config.js';
import { parseCli } from './args.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';

const USAGE = `usage: reprise config <command>

  defaults                 print every key with its default and doc (a starting config file)
  reference                print the configuration reference as Markdown (docs/configuration.md)
  check [--config FILE]    validate FILE (else $REPRISE_CONFIG, else ./reprise.yaml) plus env overrides; exit 2 if invalid
  show  [--config FILE]    print the resolved config, secrets masked
`;

/** Exit status for a command line that does not parse. */
const USAGE_EXIT = 2;

const CONFIG_OPTION = {
  config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
} as const;

/** The subcommand's usage: its line of USAGE first, then the whole list. */
const subUsage = (sub: string): string => `reprise config ${sub}\n\n${USAGE.replace(/^usage: /, '')}`;

export const config: CliCommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'defaults':
    case 'reference': {
      const parsed = parseCli(rest, {}, subUsage(sub), io);
      if ('exit' in parsed) return parsed.exit;
      if (parsed.positionals.length > 0) return usage(io, `unexpected argument: ${parsed.positionals[0]}`);
      io.stdout(sub === 'defaults' ? renderDefaultsYaml() : renderConfigReference());
      return 0;
    }
    case 'check':
    case 'show': {
      const parsed = parseCli(rest, CONFIG_OPTION, subUsage(`${sub} [--config FILE]`), io);
      if ('exit' in parsed) return parsed.exit;
      if (parsed.positionals.length > 0) return usage(io, `unexpected argument: ${parsed.positionals[0]}`);
      if (parsed.values.config === '') return usage(io, '--config needs a file');
      return withConfig(io, parsed.values.config, (cfg, file) => {
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
    then(cfg, configFile({ file, env: io.env, cwd: io.cwd }));
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(err.format());
      return CONFIG_EXIT_CODE;
    }
    throw err;
  }
}

function usage(io: CliIO, problem: string): number {
  io.stderr(`reprise config: ${problem}\n\n${USAGE}`);
  return USAGE_EXIT;
}
