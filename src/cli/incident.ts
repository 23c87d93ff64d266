import { incidentTimeline, timelineLine, timelineSummary } from '../core/bot/incident-timeline.js';
import { richText } from '../core/chat/thread-view.js';
import { silentLogger } from '../ports/logger.js';
import { openReadOnlyLedger } from '../runtime/read-only-ledger.js';
import { parseCli } from './args.js';
import { loadCliConfig, STORE_SECTIONS } from './cli-config.js';
import type { CliCommand } from '../runtime/cli-io.js';
import { storeArg } from './store-arg.js';
import { resolveTriggerArg } from './trigger-arg.js';

const USAGE = `reprise incident show <trigger…> [--json] [--store URL|DIR] [--config FILE]

The timeline of the trigger's newest episode, from the ledger: fired, posted, acknowledged,
votes, notes, silences, finding, resolved, and how long it took to acknowledge and to resolve.
The trigger is its key, a unique part of it or a few of its words (\`checkout-api crashloop\`).
Reads the configured store (or --store) beside a running bot, and never writes it.`;

/** `reprise incident show <trigger>`. */
export const incident: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    {
      json: { type: 'boolean', description: 'the timeline as JSON' },
      store: { type: 'string', description: 'ledger store URL, or a data dir (default: the configured store)', valueName: 'URL|DIR' },
      config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
    },
    USAGE,
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const [sub, ...words] = parsed.positionals;
  if (sub !== 'show' || words.length === 0) {
    io.stderr(`usage: ${USAGE}\n`);
    return 2;
  }
  const loaded = loadCliConfig(parsed.values.config, io, { sections: STORE_SECTIONS });
  if ('exit' in loaded) return loaded.exit;
  const store = storeArg(parsed.values.store, loaded.config, io, 'reprise incident');
  if ('exit' in store) return store.exit;
  const ledger = openReadOnlyLedger(store.config, silentLogger);
  try {
    await ledger.refresh();
    const triggerKey = resolveTriggerArg(words.join(' '), ledger, 'reprise incident', io);
    if (typeof triggerKey !== 'string') return triggerKey.exit;
    const t = incidentTimeline(ledger.read, triggerKey);
    if (t.items.length === 0) {
      io.stderr(`reprise incident: trigger ${JSON.stringify(triggerKey)} has no incident thread in the ledger (only votes or silences)\n`);
      return 2;
    }
    if (parsed.values.json) {
      io.stdout(`${JSON.stringify(t, null, 2)}\n`);
      return 0;
    }
    io.stdout(`${t.triggerKey} — ${t.state ?? '?'}\n${richText(timelineSummary(t))}\n\n`);
    for (const i of t.items) io.stdout(`${timelineLine(i, t.firedAt).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?')}\n`);
    return 0;
  } finally {
    await ledger.close();
  }
};
