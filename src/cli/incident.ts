import { incidentTimeline, timelineLine, timelineSummary } from '../core/bot/incident-timeline.js';
import { closeMatches } from '../core/close-matches.js';
import { silentLogger } from '../ports/logger.js';
import { openReadOnlyLedger } from '../runtime/read-only-ledger.js';
import { parseCli } from './args.js';
import { loadCliConfig } from './cli-config.js';
import type { CliCommand } from './io.js';

const USAGE = `reprise incident show <triggerKey> [--json] [--config FILE]

The timeline of the trigger's newest episode, from the ledger: fired, posted, acknowledged,
votes, notes, silences, finding, resolved, and how long it took to acknowledge and to resolve.
Reads the store beside a running bot (never writes).`;

/** `reprise incident show <trigger>`. */
export const incident: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      json: { type: 'boolean', description: 'the timeline as JSON' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const [sub, triggerKey, ...rest] = parsed.positionals;
  if (sub !== 'show' || !triggerKey || rest.length > 0) {
    io.stderr(`usage: ${USAGE}\n`);
    return 2;
  }
  const loaded = loadCliConfig(parsed.values.config, io);
  if ('exit' in loaded) return loaded.exit;
  const ledger = openReadOnlyLedger(loaded.config, silentLogger);
  try {
    await ledger.refresh();
    const t = incidentTimeline(ledger.read, triggerKey);
    if (t.items.length === 0) {
      const near = closeMatches(triggerKey, ledger.read.triggerKeys(), 3);
      io.stderr(
        `reprise incident: no incident thread for trigger ${JSON.stringify(triggerKey)}${near.length > 0 ? `; did you mean ${near.map((k) => JSON.stringify(k)).join(' or ')}?` : ''}\n`,
      );
      return 2;
    }
    if (parsed.values.json) {
      io.stdout(`${JSON.stringify(t, null, 2)}\n`);
      return 0;
    }
    io.stdout(`${t.triggerKey} — ${t.state ?? '?'}\n${timelineSummary(t)}\n\n`);
    for (const i of t.items) io.stdout(`${timelineLine(i, t.firedAt).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?')}\n`);
    return 0;
  } finally {
    await ledger.close();
  }
};
