/**
 * `reprise eval recurrence` (issue 31 item 4): replays the shipped incident histories (or your
 * own, `--histories FILE|DIR`) through the real bot path in this process, without a model, and
 * reports how often the later card shows the right "seen before" line, the instant recall of the
 * fix once its drafted entry is merged, and false "seen before" on unrelated alerts.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseHistories, recurrenceText, runRecurrence, type History } from '../runtime/recurrence-eval.js';
import { BUNDLED_CATALOG, loadSnapshot } from '../runtime/open-catalog.js';
import { recallOptions } from '../runtime/recall-options.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from '../runtime/cli-io.js';

const USAGE = 'reprise eval recurrence [--histories FILE|DIR] [--catalog DIR] [--json] [--config FILE]';
export const HISTORIES_DIR = fileURLToPath(new URL('../../eval/recurrence', import.meta.url));

/** Every `*.json` history file of a directory (or the one file), in name order. */
export async function loadHistories(path: string): Promise<History[]> {
  const files = (await stat(path)).isDirectory()
    ? (await readdir(path))
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => join(path, f))
    : [path];
  const out: History[] = [];
  for (const f of files) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(f, 'utf8'));
    } catch (err) {
      throw new Error(`${f}: not JSON (${err instanceof Error ? err.message : String(err)})`, { cause: err });
    }
    out.push(...parseHistories(json, f));
  }
  return out;
}

export const evalRecurrence: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      histories: { type: 'string', description: 'a histories file or a directory of them (default: the shipped eval/recurrence)', valueName: 'FILE|DIR' },
      catalog: { type: 'string', description: 'catalog the later alerts are recalled against (default: the bundled catalog)', valueName: 'DIR' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
      config: { type: 'string', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const loaded = loadCliConfig(values.config, io, { oneShot: true });
  if ('exit' in loaded) return loaded.exit;
  let histories: History[];
  try {
    histories = await loadHistories(resolve(io.cwd, values.histories ?? HISTORIES_DIR));
  } catch (err) {
    io.stderr(`reprise eval recurrence: ${err instanceof Error ? err.message : String(err)}\nusage: ${USAGE}\n`);
    return 2;
  }
  if (histories.length === 0) {
    io.stderr(`reprise eval recurrence: no histories found; pass --histories FILE|DIR with *.json histories\n`);
    return 2;
  }
  const { snapshot } = await loadSnapshot(values.catalog ? resolve(io.cwd, values.catalog) : BUNDLED_CATALOG);
  const report = await runRecurrence(histories, snapshot.entries, recallOptions(loaded.config));
  io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : recurrenceText(report));
  return report.errors.length > 0 ? 1 : 0;
};
