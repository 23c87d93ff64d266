import { processIO, type CliCommand } from './cli/io.js';

const USAGE = `reprise — on-call memory for Slack, Matrix and the console

Usage: reprise <command> [options]

Commands:
  serve [--config FILE] [--port N]        run the bot (webhooks on :8080, console transport by default)
  recall --catalog DIR (--alert FILE|-) [--store URL] [--json]
                                          what recall answers for an Alertmanager payload, with the gate trace
  search --catalog DIR [--k N] [--json] TEXT…   ranked catalog entries for a text query
  catalog lint DIR [--json] [--format github]   check a catalog; exit 1 on errors
  catalog sync [--json]                   make the running bot fetch the catalog from git now
  feedback <triggerKey> up|down|clear [--user U]
  feedback <triggerKey> silence <duration> [--user U]
                                          record 👍/👎/🔕 (through the running bot's control socket)
  note <triggerKey> <text…> [--user U]    an operator note on the trigger's thread, filed to the KB forge
  ledger events [--trigger KEY] [--since TIME] [--json]
                                          every recorded event, one per line
  ledger verify                           replay the log and check the stored aggregates
  ledger export [--out FILE]              a backup of the ledger as JSON lines (safe while the bot runs)
  ledger import FILE                      restore an export into an empty store, checked line by line, then verified
  curate [--apply] [--json]               grooming sweeps over the knowledge PRs (dry run unless --apply)
  curate log [--json] [--verify]          the sweeps' audit log
  demo                                    play the learning loop on the bundled catalog, narrated
  eval recall --catalog DIR --cases FILE [--out FILE] [--json] [--report DIR]
  investigate (--alert FILE|- | --text "...") [--json] [--catalog DIR] [--config FILE]
                                          run one model investigation with the configured tools
  eval investigate [--scenarios DIR] [--runs N] [--k K] [--json]   replay recorded investigation scenarios
  config defaults | config check [--config FILE]
  doctor [--config FILE] [--json]         check config, catalog, store, Slack, Matrix, model, MCP, GitHub; exit 1 on any ✗
  mcp [--catalog DIR] [--config FILE] [--http [HOST:]PORT]
                                          serve the catalog to other agents as a read-only MCP server (stdio, or HTTP)

Environment: REPRISE_CONFIG, REPRISE_DATA_DIR (default ./data), REPRISE_TRANSCRIPT, PORT,
  REPRISE_MODEL_BASE_URL, REPRISE_MODEL, OPENAI_API_KEY (a model without a config file),
  REPRISE_MCP_TOKEN (bearer token of \`reprise mcp --http\`).
Every command answers --help.
`;

/** Commands load lazily so `reprise catalog lint` never pays for the chat SDKs. */
const COMMANDS: Record<string, () => Promise<CliCommand>> = {
  serve: async () => (await import('./cli/serve.js')).serve,
  recall: async () => (await import('./cli/recall.js')).recallCommand,
  search: async () => (await import('./cli/search.js')).search,
  feedback: async () => (await import('./cli/feedback.js')).feedback,
  note: async () => (await import('./cli/note.js')).note,
  demo: async () => (await import('./cli/demo.js')).demo,
  config: async () => (await import('./cli/config.js')).config,
  eval: async () => (await import('./cli/eval.js')).evalCommand,
  ledger: async () => (await import('./cli/ledger.js')).ledgerCommand,
  investigate: async () => (await import('./cli/investigate.js')).investigateCommand,
  curate: async () => (await import('./cli/curate.js')).curateCommand,
  doctor: async () => (await import('./cli/doctor.js')).doctor,
  mcp: async () => (await import('./cli/mcp.js')).mcpCommand,
};

const CATALOG_USAGE = `usage: reprise catalog lint DIR [--json] [--format github]
       reprise catalog sync [--config FILE] [--json]
`;

/**
 * node:sqlite (the embedded ledger store) is stable enough for us but still flagged
 * experimental in Node 22; its one-line warning on every start only confuses operators.
 * Every other warning is still printed.
 */
function quietSqliteWarning(): void {
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    if (w.name === 'ExperimentalWarning' && /SQLite/i.test(w.message)) return;
    process.stderr.write(`${w.name}: ${w.message}\n`);
  });
}

/** Node 22 brings node:sqlite (the embedded store); older runtimes fail obscurely deep inside. */
const MIN_NODE_MAJOR = 22;

async function main(argv: string[]): Promise<number> {
  const io = processIO();
  const major = Number(process.versions.node.split('.')[0]);
  if (!(major >= MIN_NODE_MAJOR)) {
    io.stderr(`reprise: Reprise needs Node.js >= ${MIN_NODE_MAJOR} (found v${process.versions.node}). Install Node 22 or newer and run it again.\n`);
    return 1;
  }
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === 'help' || cmd === '--help' || cmd === '-h') {
    io.stdout(USAGE);
    return cmd ? 0 : 2;
  }
  if (cmd === '--version') {
    io.stdout('reprise 0.1.0\n');
    return 0;
  }
  if (cmd === 'catalog') {
    const [sub, ...args] = rest;
    if (sub === 'lint') return (await import('./cli/catalog-lint.js')).catalogLint(args, io);
    if (sub === 'sync') return (await import('./cli/catalog-sync.js')).catalogSync(args, io);
    if (sub === '--help' || sub === '-h' || sub === 'help') {
      io.stdout(CATALOG_USAGE);
      return 0;
    }
    io.stderr(`reprise catalog: unknown subcommand ${sub ?? '(none)'}; try \`reprise catalog lint DIR\`\n`);
    return 2;
  }
  const load = COMMANDS[cmd];
  if (!load) {
    io.stderr(`reprise: unknown command "${cmd}"\n\n${USAGE}`);
    return 2;
  }
  return (await load())(rest, io);
}

quietSqliteWarning();
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`reprise: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
