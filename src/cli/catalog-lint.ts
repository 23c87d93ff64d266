import { resolve } from 'node:path';
import { CatalogError } from '../core/catalog/load-catalog.js';
import { formatLintGithub, formatLintHuman, lintCatalog } from '../core/catalog/lint-catalog.js';
import { parseCli } from './args.js';
import type { CliCommand } from '../runtime/cli-io.js';

const USAGE = `reprise catalog lint DIR [--json] [--format github]

Checks every entry of the catalog in DIR. Exit status: 0 no errors, 1 errors, 2 usage error.`;

/** `reprise catalog lint DIR [--json] [--format github]` — the catalog repo's merge gate. */
export const catalogLint: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      json: { type: 'boolean', description: 'print {entries, errors, warnings, problems} as JSON' },
      format: { type: 'string', description: 'github: print GitHub Actions annotations (::error file=…,line=…::…)', valueName: 'FORMAT' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  const format = values.format ?? (values.json ? 'json' : 'human');
  if (!['human', 'json', 'github'].includes(format) || (values.json && values.format !== undefined && values.format !== 'json')) {
    io.stderr(`reprise catalog lint: --format must be github (or use --json), got "${values.format ?? ''}"\n\nusage: ${USAGE}`);
    return 2;
  }
  const [dir, ...extra] = positionals;
  if (dir === undefined || extra.length > 0) {
    io.stderr(`reprise catalog lint: ${dir === undefined ? 'missing the catalog directory' : `unexpected argument "${extra[0]}"`}\n\nusage: ${USAGE}`);
    return 2;
  }

  let report;
  try {
    report = await lintCatalog(resolve(io.cwd, dir));
  } catch (err) {
    if (err instanceof CatalogError) {
      io.stderr(`reprise catalog lint: ${err.message.replace(resolve(io.cwd, dir), dir)}; pass the folder holding the catalog's .md files\n\nusage: ${USAGE}`);
      return 2;
    }
    throw err;
  }
  if (format === 'json') io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else if (format === 'github') io.stdout(formatLintGithub(report, dir));
  else io.stdout(formatLintHuman(report, dir));
  return report.errors > 0 ? 1 : 0;
};
