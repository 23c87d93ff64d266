import { resolve } from 'node:path';
import { CatalogError, loadCatalog } from '../core/catalog/load-catalog.js';
import { FlexTextIndex } from '../adapters/flexsearch/text-index.js';
import { queryWords, rankTextQuery } from '../core/search/text-query.js';
import { servedCatalogFolder } from '../runtime/served-catalog.js';
import { parseCli } from './args.js';
import { loadCliConfig, RECALL_SECTIONS } from './cli-config.js';
import type { CliCommand } from '../runtime/cli-io.js';

const USAGE = `reprise search [--catalog DIR] [--config FILE] [--k N] [--json] TEXT…

Ranks catalog entries for text as a person types it: entries that cover an alert the text
names, or are about a resource it names (\`logs-02\`, \`shop/checkout-api\`), first; then the rest
by a typo-tolerant, prefix-matching search (FlexSearch: \`filesys\`, \`crashloop\`, \`chekout\`).
Alert recall does not rank this way: its gates keep the exact BM25 index. DIR defaults to the catalog the bot serves (its git clone when catalog.git is set, else
catalog.dir, else the bundled one); N defaults to 10 (at most 100).
`;

/** `reprise search --catalog DIR [--k N] [--json] TEXT…` — ranked entries with BM25 scores. */
export const search: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      catalog: { type: 'string', description: 'catalog directory (default: the configured or bundled catalog)', valueName: 'DIR' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      k: { type: 'string', description: 'how many results', valueName: 'N' },
      json: { type: 'boolean', description: 'print JSON instead of text' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  const k = values.k === undefined ? 10 : Number(values.k);
  if (!Number.isInteger(k) || k < 1 || k > 100) {
    io.stderr(`reprise search: --k must be a whole number from 1 to 100, got "${values.k}"\n\nusage: ${USAGE}`);
    return 2;
  }
  const text = positionals.join(' ').trim();
  const tokens = queryWords(text);
  if (tokens.length === 0) {
    io.stderr(`reprise search: ${text === '' ? 'missing the query text' : `no searchable words in "${text}"`}\n\nusage: ${USAGE}`);
    return 2;
  }
  const config = loadCliConfig(values.config, io, { sections: RECALL_SECTIONS });
  if ('exit' in config) return config.exit;
  const served = servedCatalogFolder(config.config, values.catalog === undefined ? undefined : resolve(io.cwd, values.catalog));
  if (typeof served === 'string') {
    io.stderr(`reprise search: ${served}\n\nusage: ${USAGE}`);
    return 2;
  }
  const dir = served.dir;

  let loaded;
  try {
    loaded = await loadCatalog(dir);
  } catch (err) {
    if (err instanceof CatalogError) {
      io.stderr(`reprise search: catalog ${dir} is missing or not a directory; pass --catalog DIR\n\nusage: ${USAGE}`);
      return 2;
    }
    throw err;
  }
  const errors = loaded.problems.filter((p) => p.severity === 'error').length;
  if (errors > 0) io.stderr(`reprise search: ${errors} broken entr${errors === 1 ? 'y was' : 'ies were'} skipped; run \`reprise catalog lint ${dir}\`\n`);

  const hits = rankTextQuery(text, loaded.entries, new FlexTextIndex(loaded.entries), k);
  if (values.json) {
    const out = hits.map((h) => ({
      id: h.entry.id,
      score: Number(h.score.toFixed(4)),
      exact: h.exact,
      title: h.entry.title,
      type: h.entry.type,
      status: h.entry.status,
    }));
    io.stdout(`${JSON.stringify({ query: text, tokens, results: out }, null, 2)}\n`);
    return 0;
  }
  if (hits.length === 0) {
    io.stdout(`no entry matches "${text}" (terms: ${tokens.join(' ')})\n`);
    return 0;
  }
  const width = Math.max(...hits.map((h) => h.entry.id.length));
  hits.forEach((h, i) => {
    const status = h.entry.status === 'active' ? '' : ` [${h.entry.status}]`;
    const exact = h.exact.length > 0 ? ` [names the ${h.exact.join(' and the ')}]` : '';
    io.stdout(`${String(i + 1).padStart(2)}. ${h.score.toFixed(3).padStart(7)}  ${h.entry.id.padEnd(width)}  ${h.entry.title}${status}${exact}\n`);
  });
  return 0;
};
