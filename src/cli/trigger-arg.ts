/**
 * A trigger named on the command line (`reprise ack logs-02`, `reprise incident show checkout-api
 * crashloop`) as the key the ledger knows: the same resolver the chat commands use
 * (core/trigger-name.ts), over the triggers of the store the bot writes, read beside it.
 */
import type { Config } from '../config/schema.js';
import { resolveTriggerName, triggerNameProblem } from '../core/trigger-name.js';
import type { Logger } from '../ports/logger.js';
import { silentLogger } from '../ports/logger.js';
import { openReadOnlyLedger, type ReadOnlyLedger } from '../runtime/read-only-ledger.js';
import type { CliIO } from '../runtime/cli-io.js';

/** Where to find the triggers, said when a name fits none. */
export const TRIGGER_LIST_HINT = '`reprise ledger events` lists what the ledger recorded';

/** A key on a terminal: JSON quotes, so its `|` and spaces read as one thing. */
export const quoteKey = (key: string): string => JSON.stringify(key);

/**
 * The key `name` names among `ledger`'s triggers, or `{ exit: 2 }` after saying on stderr which
 * triggers it might mean. When the name was not the whole key, stderr says which key it named.
 */
export function resolveTriggerArg(name: string, ledger: Pick<ReadOnlyLedger, 'read'>, command: string, io: CliIO): string | { exit: number } {
  const r = resolveTriggerName(name, ledger.read.triggerKeys());
  if (r.ok) {
    if (r.how !== 'exact') io.stderr(`${command}: “${name.trim()}” is trigger ${quoteKey(r.triggerKey)}\n`);
    return r.triggerKey;
  }
  io.stderr(`${command}: ${triggerNameProblem(r, quoteKey, TRIGGER_LIST_HINT)}\n`);
  return { exit: 2 };
}

/**
 * {@link resolveTriggerArg} over the configured store, opened read-only for the lookup and
 * closed again. When the store cannot be read (a bot running as another user, Redis away), the
 * name is passed on as it was given: whoever records it checks it against the ledger it writes.
 */
export async function triggerKeyFromStore(name: string, config: Config, command: string, io: CliIO): Promise<string | { exit: number }> {
  let unreadable = false;
  const noting: Logger = { ...silentLogger, warn: () => void (unreadable = true), child: () => noting };
  const ledger = openReadOnlyLedger(config, noting);
  try {
    await ledger.refresh();
    if (unreadable) return name.trim();
    return resolveTriggerArg(name, ledger, command, io);
  } finally {
    await ledger.close();
  }
}
