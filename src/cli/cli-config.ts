import { ConfigError, CONFIG_EXIT_CODE } from '../config/config-error.js';
import { loadConfig } from '../config/load-config.js';
import type { Config } from '../config/schema.js';
import type { CliIO } from './io.js';

/**
 * Loads the config every command shares: `--config FILE`, else `REPRISE_CONFIG`, else defaults
 * plus env. An invalid config prints every problem and yields exit status 2.
 */
export function loadCliConfig(flag: string | undefined, io: CliIO, opts: { oneShot?: boolean } = {}): { config: Config } | { exit: number } {
  const file = flag ?? io.env['REPRISE_CONFIG'];
  try {
    return { config: loadConfig({ ...(file ? { file } : {}), env: io.env, cwd: io.cwd, ...(opts.oneShot ? { oneShot: true } : {}) }) };
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(`${err.format()}\n`);
      return { exit: CONFIG_EXIT_CODE };
    }
    throw err;
  }
}
