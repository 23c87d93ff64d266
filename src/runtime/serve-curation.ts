/**
 * Grooming in `serve` (issue 6 item 6): every `curate.interval` (6 h) when a forge is
 * configured, on the leader only, in `curate.mode` (dry run unless `apply`); and on request
 * from `reprise curate` through the control socket. Runs never overlap: a request made while
 * one runs waits for it.
 */
import type { Config } from '../config/schema.js';
import { CurateAudit } from '../core/curate/curate-audit.js';
import type { SweepReport } from '../core/curate/curate-types.js';
import { RepriseError } from '../core/errors.js';
import type { Ledger } from '../core/ledger/ledger.js';
import type { Clock, Timer } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { BranchPusher } from '../core/curate/run-sweeps.js';
import type { ForgePort } from '../ports/forge.js';
import type { KeyValueStore } from '../ports/store.js';
import type { ServedCatalog } from './served-catalog.js';

export interface ServeCuration {
  /** Runs the sweeps now (the control socket's `POST /v1/curate`). */
  run(apply: boolean): Promise<SweepReport>;
  start(): void;
  stop(): Promise<void>;
}

/** Delay of the first scheduled run after start. */
const FIRST_RUN_MS = 60_000;

export function serveCuration(o: {
  config: Config;
  logger: Logger;
  served: ServedCatalog;
  ledger: Ledger;
  store: KeyValueStore;
  clock: Clock;
  isLeader?: () => boolean;
}): ServeCuration {
  const log = o.logger.child({ component: 'curate' });
  const forgeConfig = o.config.forge;
  // The forge's SDKs (Octokit, simple-git) load at the first sweep: a bot without a forge never
  // loads them, and one with a forge does not pay for them before it is ready.
  let parts: Promise<typeof import('./curate-context.js')> | undefined;
  const context = (): Promise<typeof import('./curate-context.js')> => (parts ??= import('./curate-context.js'));
  let built: { forge: ForgePort; pusher: BranchPusher | undefined } | undefined;
  const audit = new CurateAudit(o.store);
  let queue: Promise<unknown> = Promise.resolve();
  let timer: Timer | undefined;
  let stopped = false;

  const run = (apply: boolean): Promise<SweepReport> => {
    if (!forgeConfig) {
      return Promise.reject(
        new RepriseError('not_found', 'no forge configured', {
          userMessage: 'no forge configured in the running bot: set the `forge` config block (or GITHUB_TOKEN and REPRISE_GITHUB_REPO) for it and restart it',
        }),
      );
    }
    const sweep = async (): Promise<SweepReport> => {
      const { draftPusher, forgeFromConfig, runCuration } = await context();
      built ??= { forge: forgeFromConfig(o.config, o.logger)!, pusher: draftPusher(o.config, log) };
      const { forge, pusher } = built;
      return runCuration({
        config: o.config,
        forge,
        ledger: o.ledger.read,
        entries: o.served.current().entries,
        ...(pusher && o.served.sync ? { pusher, catalogRoot: o.served.sync.root } : {}),
        audit,
        apply,
        logger: log,
        now: o.clock.now(),
      });
    };
    const next = queue.then(() =>
      sweep().catch((err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        throw new RepriseError('unavailable', message, { userMessage: `the sweep could not run: ${message}` });
      }),
    );
    queue = next.catch(() => undefined);
    return next;
  };

  const tick = (): void => {
    if (stopped) return;
    if (o.isLeader?.() ?? true) {
      run(o.config.curate.mode === 'apply').catch((err: unknown) =>
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'scheduled grooming sweep failed; the next one retries'),
      );
    }
    timer = o.clock.setTimeout(tick, o.config.curate.interval_ms).unref();
  };

  return {
    run,
    start: () => {
      if (!forgeConfig) return;
      log.info({ repo: forgeConfig.repo, interval: o.config.curate.interval, mode: o.config.curate.mode }, 'grooming sweeps scheduled');
      timer = o.clock.setTimeout(tick, Math.min(FIRST_RUN_MS, o.config.curate.interval_ms)).unref();
    },
    stop: async () => {
      stopped = true;
      o.clock.clearTimeout(timer);
      await queue;
    },
  };
}
