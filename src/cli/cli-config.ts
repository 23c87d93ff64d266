import { ConfigError, CONFIG_EXIT_CODE } from '../config/config-error.js';
import { loadConfig, type ConfigSection } from '../config/load-config.js';
import type { Config } from '../config/schema.js';
import type { CliIO } from '../runtime/cli-io.js';

/** The sections a companion command that reads the store beside a running bot needs. */
export const STORE_SECTIONS: readonly ConfigSection[] = ['store', 'ledger', 'log'];
/** … and one that also reads the catalog the bot serves and answers as recall does. */
export const RECALL_SECTIONS: readonly ConfigSection[] = [...STORE_SECTIONS, 'catalog', 'recall', 'identity', 'links', 'server'];

/**
 * Loads the config every command shares: `--config FILE`, else `REPRISE_CONFIG`, else
 * `./reprise.yaml`, else defaults plus env. An invalid config prints every problem and yields
 * exit status 2. `sections`: a companion command validates only what it reads (see
 * LoadConfigOptions.sections); `oneShot`: a command that serves nothing.
 */
export function loadCliConfig(
  flag: string | undefined,
  io: CliIO,
  opts: { oneShot?: boolean; sections?: readonly ConfigSection[] } = {},
): { config: Config } | { exit: number } {
  try {
    return {
      config: loadConfig({
        ...(flag ? { file: flag } : {}),
        env: io.env,
        cwd: io.cwd,
        ...(opts.oneShot ? { oneShot: true } : {}),
        ...(opts.sections ? { sections: opts.sections } : {}),
      }),
    };
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(`${err.format()}\n`);
      return { exit: CONFIG_EXIT_CODE };
    }
    throw err;
  }
}
