/**
 * The one shape of a CLI command that writes to the loop (`feedback`, `note`, `fixed`, `ack`):
 * parse `<trigger> …` and `--user`/`--config`, check the request before touching anything,
 * name the trigger as the ledger knows it (its key, a unique part, a few words), ask the running
 * bot through its control socket, and only when none runs (and the store lock is free) build the
 * same loop in-process and `handle` the intent. Effects that need chat are left in the outbox
 * and delivered when the bot next runs. Asking the bot needs only the store's config (the bot
 * validated the rest when it started); writing without it needs the whole config.
 */
import type { Config } from '../config/schema.js';
import { recordedOrThrow } from '../core/bot/feedback-request.js';
import type { Intent } from '../core/bot/intent.js';
import { isRepriseError } from '../core/errors.js';
import type { Ledger } from '../core/ledger/ledger.js';
import { offlineLoop } from '../runtime/offline-loop.js';
import { askOwner, osUser, withStoreLock } from '../runtime/owner-or-direct.js';
import { openLedger } from '../runtime/open-store.js';
import { parseCli } from './args.js';
import { loadCliConfig, STORE_SECTIONS } from './cli-config.js';
import { triggerKeyFromStore } from './trigger-arg.js';
import type { CliCommand, CliIO } from '../runtime/cli-io.js';

/** What the bot (or the offline loop) recorded: the event's sequence number and the event. */
export interface Recorded {
  seq?: number;
  event?: { type?: string; until?: string; vote?: string };
  /** A postmortem drafted with no forge configured: the draft itself, for the terminal. */
  draft?: { path: string; content: string };
}

export interface CliWriteSpec<R> {
  /** `fixed` → `reprise fixed` prefixes every message. */
  name: string;
  usage: string;
  /** The `--user` option's help. */
  userHelp: string;
  /**
   * The request from the positionals and the user, checked: `undefined` prints the usage (exit
   * 2), a string is the reason it is refused (exit 2).
   */
  request(positionals: string[], user: string): R | string | undefined;
  /** The control socket's route (`/v1/fixed`). */
  route: string;
  /** The offline loop's intent for the request (reads the ledger if it must). */
  intent(ledger: Ledger, request: R): Intent;
  /** What `recordedOrThrow` calls it (`fix`): "fix not recorded: …". */
  what: string;
  /** The line printed once recorded; `offline` when no bot ran (delivered at its next start). */
  said(request: R, recorded: Recorded, config: Config, how: { pid: number } | 'offline'): string;
  /** A line for stderr beside what `said` prints (stdout stays what a person may save or pipe). */
  aside?(request: R, recorded: Recorded): string | undefined;
}

/** A CLI write command built from its spec (see the module comment). */
export function cliWrite<R extends { triggerKey: string; user?: string }>(spec: CliWriteSpec<R>): CliCommand {
  const command = `reprise ${spec.name}`;
  return async (argv, io) => {
    const parsed = parseCli(
      argv,
      {
        user: { type: 'string', description: spec.userHelp, valueName: 'USER' },
        config: { type: 'string', short: 'c', description: 'config file (default: $REPRISE_CONFIG, else ./reprise.yaml)', valueName: 'FILE' },
      },
      spec.usage,
      io,
    );
    if ('exit' in parsed) return parsed.exit;
    let request;
    try {
      request = spec.request(parsed.positionals, parsed.values.user ?? osUser(io));
    } catch (err) {
      request = isRepriseError(err) ? err.message : String(err);
    }
    if (request === undefined) {
      io.stderr(`usage: ${spec.usage}\n`);
      return 2;
    }
    if (typeof request === 'string') {
      io.stderr(`${command}: ${request}\n`);
      return 2;
    }
    const loaded = loadCliConfig(parsed.values.config, io, { sections: STORE_SECTIONS });
    if ('exit' in loaded) return loaded.exit;
    const { config } = loaded;
    const key = await triggerKeyFromStore(request.triggerKey, config, command, io);
    if (typeof key !== 'string') return key.exit;
    const ok: R = { ...request, triggerKey: key };

    const viaBot = await askOwner(config, io, { command, route: spec.route, body: ok, nothing: 'Nothing was recorded.' }, (status, reply, owner) => {
      const body = reply as { result?: Recorded; error?: { message?: string } };
      if (status >= 400) {
        io.stderr(`${command}: the running bot (pid ${owner.pid}) refused: ${body.error?.message ?? JSON.stringify(reply)}\n`);
        return status === 404 || status === 400 || status === 413 ? 2 : 1;
      }
      const aside = spec.aside?.(ok, body.result ?? {});
      if (aside) io.stderr(`${command}: ${aside}\n`);
      io.stdout(`${spec.said(ok, body.result ?? {}, config, { pid: owner.pid })}\n`);
      return 0;
    });
    if (viaBot !== undefined) return viaBot;
    // No bot: this process runs the loop itself, so everything it reads must be valid.
    const whole = loadCliConfig(parsed.values.config, io);
    if ('exit' in whole) return whole.exit;
    return withStoreLock(whole.config, io, command, 'Nothing was recorded.', () => offline(spec, whole.config, io, ok));
  };
}

async function offline<R extends { triggerKey: string }>(spec: CliWriteSpec<R>, config: Config, io: CliIO, request: R): Promise<number> {
  const command = `reprise ${spec.name}`;
  const { store, ledger } = await openLedger(config);
  try {
    // The same loop the bot runs: what needs chat is delivered when the bot next runs.
    const [outcome] = await offlineLoop(config, ledger).inbox.push([spec.intent(ledger, request)]);
    await ledger.close();
    let recorded;
    try {
      recorded = recordedOrThrow(outcome, spec.what);
    } catch (err) {
      io.stderr(`${command}: ${(err as Error).message.replace(`${spec.what} not recorded`, `${spec.what} not saved`)}\n`);
      return 2;
    }
    const { draft } = recorded as { draft?: Recorded['draft'] };
    const result: Recorded = { seq: recorded.seq, event: recorded.event, ...(draft ? { draft } : {}) };
    const aside = spec.aside?.(request, result);
    if (aside) io.stderr(`${command}: ${aside}\n`);
    io.stdout(`${spec.said(request, result, config, 'offline')}\n`);
    return 0;
  } catch (err) {
    if (isRepriseError(err)) {
      io.stderr(`${command}: ${err.message}\n`);
      return 2;
    }
    throw err;
  } finally {
    await store.close();
  }
}

/** Refuses text longer than `maxBytes`, saying how long it is and what to do instead. */
export function tooLong(what: string, text: string, maxBytes: number, instead: string): string | undefined {
  const bytes = Buffer.byteLength(text);
  return bytes > maxBytes ? `${what} not saved: it is ${Math.ceil(bytes / 1024)} KiB, longer than ${maxBytes / 1024} KiB; ${instead}` : undefined;
}
