import { Command } from 'commander';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';

/** Every command: how it is called and what it does (the top-level `--help` is generated from these); each loads lazily so `reprise catalog lint` never pays for the chat SDKs. */
const COMMANDS: ReadonlyArray<{ name: string; synopsis: string; summary: string; load: () => Promise<CliCommand> }> = [
  {
    name: 'serve',
    synopsis: '[--config FILE] [--port N]',
    summary: 'run the bot (webhooks on :8080, console transport by default)',
    load: async () => (await import('./serve.js')).serve,
  },
  {
    name: 'recall',
    synopsis: '(--alert FILE|-) [--catalog DIR] [--store URL|DIR] [--json]',
    summary: 'what recall answers for an Alertmanager payload (from the catalog and store the bot serves), with the gate trace',
    load: async () => (await import('./recall.js')).recallCommand,
  },
  {
    name: 'search',
    synopsis: '[--catalog DIR] [--k N] [--json] TEXT…',
    summary: 'ranked catalog entries for a text query',
    load: async () => (await import('./search.js')).search,
  },
  {
    name: 'catalog',
    synopsis: 'lint DIR [--json] [--format github] | sync [--json]',
    summary: 'check a catalog (exit 1 on errors); make the running bot fetch the catalog from git now',
    load: async () => catalogCommand,
  },
  {
    name: 'feedback',
    synopsis: '<trigger…> up|down|clear|silence <duration> [--user U]',
    summary: "record 👍/👎/🔕 (through the running bot's control socket)",
    load: async () => (await import('./feedback.js')).feedback,
  },
  {
    name: 'note',
    synopsis: '<trigger> <text…> [--user U]',
    summary: "an operator note on the trigger's thread, filed to the KB forge",
    load: async () => (await import('./note.js')).note,
  },
  {
    name: 'fixed',
    synopsis: '<trigger> <text…> [--user U]',
    summary: "what fixed it, on the trigger's thread: drafted as an Incident entry PR on the KB forge",
    load: async () => (await import('./fixed.js')).fixed,
  },
  {
    name: 'ack',
    synopsis: '<trigger…> [--user U]',
    summary: "say you are on the trigger's incident (👀); PagerDuty too when configured",
    load: async () => (await import('./ack.js')).ack,
  },
  {
    name: 'postmortem',
    synopsis: '<trigger…> [--user U]',
    summary: "a postmortem draft of the trigger's newest incident: a PR under postmortems/ on the KB forge, else printed",
    load: async () => (await import('./postmortem.js')).postmortem,
  },
  {
    name: 'oncall',
    synopsis: '[ROUTE] [--config FILE] [--json]',
    summary: 'who is on call now for an on-call route, and until when (rotation, PagerDuty or Grafana OnCall)',
    load: async () => (await import('./oncall.js')).oncall,
  },
  {
    name: 'import',
    synopsis: 'postmortems <DIR|GIT-URL> | pagerduty [--since 90d] [--service ID]… [--dry-run] [--json] [--batch N]',
    summary: "a team's existing postmortems, or PagerDuty's resolved incidents' fixes, as entry drafts, deduplicated and filed as PRs",
    load: async () => (await import('./import.js')).importCommand,
  },
  {
    name: 'incident',
    synopsis: 'show <trigger…> [--json] [--store URL|DIR]',
    summary: "the newest episode's timeline: fired, posted, acknowledged, votes, notes, silences, resolved",
    load: async () => (await import('./incident.js')).incident,
  },
  {
    name: 'ledger',
    synopsis: 'events|verify|export|import …',
    summary: 'every recorded event; replay and check; a JSON-lines backup; restore one into an empty store',
    load: async () => (await import('./ledger.js')).ledgerCommand,
  },
  {
    name: 'curate',
    synopsis: '[--apply] [--json] | log [--json] [--verify]',
    summary: 'grooming sweeps over the knowledge PRs (dry run unless --apply); their audit log',
    load: async () => (await import('./curate.js')).curateCommand,
  },
  {
    name: 'demo',
    synopsis: '',
    summary: 'play the learning loop on the bundled catalog, narrated',
    load: async () => (await import('./demo.js')).demo,
  },
  {
    name: 'eval',
    synopsis: 'recall --catalog DIR --cases FILE … | investigate [--scenarios DIR] …',
    summary: 'measure recall on eval cases; replay recorded investigation scenarios',
    load: async () => (await import('./eval.js')).evalCommand,
  },
  {
    name: 'investigate',
    synopsis: '(--alert FILE|- | --text "...") [--json] [--catalog DIR] [--config FILE]',
    summary: 'run one model investigation with the configured tools',
    load: async () => (await import('./investigate.js')).investigateCommand,
  },
  {
    name: 'config',
    synopsis: 'defaults | check | show | reference [--config FILE]',
    summary: 'the configuration: defaults, a check, the effective values, the reference',
    load: async () => (await import('./config.js')).config,
  },
  {
    name: 'doctor',
    synopsis: '[--config FILE] [--json]',
    summary: 'check config, catalog, store, Slack, Matrix, model, MCP, GitHub; exit 1 on any ✗',
    load: async () => (await import('./doctor.js')).doctor,
  },
  {
    name: 'ui',
    synopsis: 'sessions [--json] | sessions revoke <id>|--all [--config FILE]',
    summary: "the memory view's signed-in sessions: list them, revoke one or all",
    load: async () => (await import('./ui.js')).uiCommand,
  },
  {
    name: 'mcp',
    synopsis: '[--catalog DIR] [--config FILE] [--http [HOST:]PORT]',
    summary: 'serve the catalog to other agents as a read-only MCP server (stdio, or HTTP)',
    load: async () => (await import('./mcp.js')).mcpCommand,
  },
];

const ENVIRONMENT = `
Config: --config FILE, else $REPRISE_CONFIG, else ./reprise.yaml, else defaults plus environment.
A <trigger> is its key, a unique part of it or a few of its words (logs-02, checkout-api crashloop).
Environment: REPRISE_CONFIG, REPRISE_DATA_DIR (default ./data), REPRISE_TRANSCRIPT, PORT,
  REPRISE_MODEL_BASE_URL, REPRISE_MODEL, OPENAI_API_KEY (a model without a config file),
  REPRISE_MCP_TOKEN (bearer token of \`reprise mcp --http\`).
Every command answers --help.
`;

/** The top-level program, for its generated help: each command parses its own arguments. */
function program(io: CliIO): Command {
  const p = new Command('reprise')
    .description('on-call memory for Slack, Matrix and the console')
    .usage('<command> [options]')
    .helpOption('-h, --help', 'show this help')
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) })
    .configureHelp({ styleTitle: (t) => t.toLowerCase(), helpWidth: 110 })
    .addHelpText('after', ENVIRONMENT);
  for (const c of COMMANDS) p.command(c.name).usage(c.synopsis).description(c.summary);
  p.helpCommand(false);
  return p;
}

const CATALOG_USAGE = `usage: reprise catalog lint DIR [--json] [--format github]
       reprise catalog sync [--config FILE] [--json]
`;

/** `reprise catalog lint|sync`: each subcommand in its own file. */
const catalogCommand: CliCommand = async (rest, io) => {
  const [sub, ...args] = rest;
  if (sub === 'lint') return (await import('./catalog-lint.js')).catalogLint(args, io);
  if (sub === 'sync') return (await import('./catalog-sync.js')).catalogSync(args, io);
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout(CATALOG_USAGE);
    return 0;
  }
  io.stderr(`reprise catalog: unknown subcommand ${sub ?? '(none)'}; try \`reprise catalog lint DIR\`\n`);
  return 2;
};

/** Node 22 brings node:sqlite (the embedded store); older runtimes fail obscurely deep inside. */
const MIN_NODE_MAJOR = 22;

/**
 * The whole CLI: `reprise <command> …` on `io`, resolving with the exit status. `src/main.ts`
 * calls it on the process; tests call it in their own process with buffers. A command that
 * throws is reported on `io.stderr` (`reprise: <message>`) with status 1, never thrown on.
 */
export async function runReprise(argv: readonly string[], io: CliIO): Promise<number> {
  try {
    return await dispatch([...argv], io);
  } catch (err) {
    io.stderr(`reprise: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

async function dispatch(argv: string[], io: CliIO): Promise<number> {
  const major = Number(process.versions.node.split('.')[0]);
  if (!(major >= MIN_NODE_MAJOR)) {
    io.stderr(`reprise: Reprise needs Node.js >= ${MIN_NODE_MAJOR} (found v${process.versions.node}). Install Node 22 or newer and run it again.\n`);
    return 1;
  }
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === 'help' || cmd === '--help' || cmd === '-h') {
    io.stdout(program(io).helpInformation());
    io.stdout(ENVIRONMENT);
    return cmd ? 0 : 2;
  }
  if (cmd === '--version') {
    io.stdout('reprise 0.1.0\n');
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === cmd);
  if (!command) {
    io.stderr(`reprise: unknown command "${cmd}"\n\n${program(io).helpInformation()}`);
    return 2;
  }
  return (await command.load())(rest, io);
}
