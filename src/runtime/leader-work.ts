/**
 * Work only the loop's owner does (the leader, on a shared store): held firings released,
 * Alertmanager reconciled, forge work filed, and work an earlier run left unfinished resumed.
 * Started on gaining the lead, stopped on losing it.
 */
import type { AlertmanagerAlerts } from '../core/bot/alertmanager-reconcile.js';
import type { CurationWorker } from '../core/curate/curation-worker.js';
import type { Inbox } from '../core/inbox/inbox.js';
import type { Config } from '../config/schema.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import { startNoiseTimers } from './noise-timers.js';

export interface LeaderWork {
  start(): void;
  stop(): Promise<void>;
}

export function leaderWork(deps: {
  inbox: Pick<Inbox, 'push'>;
  idle: () => Promise<void>;
  config: Config;
  clock: Clock;
  logger: Logger;
  alertmanager?: AlertmanagerAlerts | undefined;
  curation?: Pick<CurationWorker, 'start' | 'stop'> | undefined;
}): LeaderWork {
  const { inbox, logger, alertmanager, curation } = deps;
  let noiseTimers: { stop(): Promise<void> } | undefined;
  return {
    start: (): void => {
      noiseTimers ??= startNoiseTimers({
        push: (intents) => inbox.push(intents),
        idle: deps.idle,
        config: deps.config,
        clock: deps.clock,
        logger: logger.child({ component: 'noise' }),
        ...(alertmanager ? { alertmanager } : {}),
      });
      curation?.start();
      // Work an earlier run (or the previous leader) left unfinished: investigations without a
      // finding, Alertmanager silences without an outcome.
      inbox.push([{ type: 'resume' }]).then(
        ([o]) => {
          if (o?.status === 'resumed' && o.investigations + o.amSilences > 0)
            logger.info({ investigations: o.investigations, amSilences: o.amSilences }, 'work interrupted by a restart is resumed');
        },
        (err: unknown) => logger.error({ err }, 'resuming interrupted work failed; it is retried when this process next leads'),
      );
    },
    stop: async (): Promise<void> => {
      const timers = noiseTimers;
      noiseTimers = undefined;
      await timers?.stop();
      await curation?.stop();
    },
  };
}
