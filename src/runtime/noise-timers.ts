/**
 * The timers behind noise control in `serve` (issue 12): releasing debounce holds and closing
 * storm batches (a `tick`), and reconciling threads with Alertmanager's alerts (a `reconcile`). Each round
 * logs its failure and tries again next time; none of them can stop the bot.
 */
import { rememberListed, type AlertmanagerAlerts } from '../core/bot/alertmanager-reconcile.js';
import { noiseOptions } from './loop-options.js';
import { onCallConfigured } from './build-oncall.js';
import type { Intent } from '../core/bot/intent.js';
import type { Intake } from '../core/inbox/inbox.js';
import type { Config } from '../config/schema.js';
import type { Clock, Timer } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';

/** How often due holds and storm windows are looked for (they are due to the second). */
const TICK_MS = 1000;

interface Round {
  run(): Promise<void>;
  /** The round in progress, if any. */
  current(): Promise<void> | undefined;
}

/** A round that never overlaps itself and never throws. */
function round(name: string, logger: Logger, fn: () => Promise<void>): Round {
  let running: Promise<void> | undefined;
  return {
    run: () => {
      running ??= fn()
        .catch((err: unknown) => logger.warn({ err }, `${name} failed; retried next round`))
        .finally(() => {
          running = undefined;
        });
      return running;
    },
    current: () => running,
  };
}

export interface NoiseTimerDeps {
  /** The loop's inbox: what a round finds is pushed like any other intent. */
  push: (intents: readonly Intent[]) => Promise<Intake[]>;
  /** Resolves once the loop's background effects have finished (a stop waits for them). */
  idle: () => Promise<void>;
  config: Config;
  clock: Clock;
  logger: Logger;
  alertmanager?: AlertmanagerAlerts;
}

export function startNoiseTimers(deps: NoiseTimerDeps): { stop(): Promise<void> } {
  const { push, config, clock, logger } = deps;
  const timers: Timer[] = [];
  const rounds: Round[] = [];
  const noise = noiseOptions(config);
  // Holds may be in the ledger from an earlier run with a debounce configured: always tick once.
  const tick = round('releasing held alerts', logger, async () => {
    const [o] = await push([{ type: 'tick' }]);
    if (o?.status === 'ticked' && o.released.length > 0) logger.info({ released: o.released.length }, 'held alerts released');
  });
  rounds.push(tick);
  void tick.run();
  // On-call reminders are due to the second too (issue 32).
  const reminders = onCallConfigured(config) && config.oncall.remind_after_ms > 0;
  if (noise.debounceMs > 0 || noise.coalesce || reminders) timers.push(clock.setInterval(() => void tick.run(), TICK_MS));
  const am = deps.alertmanager;
  if (am) {
    let down = false;
    // Fingerprints this Alertmanager has listed: only those can be called "no longer firing".
    const seen = new Set<string>();
    const reconcile = round('reconciling with Alertmanager', logger, async () => {
      const listedAt = clock.now();
      let alerts;
      try {
        alerts = await am.alerts();
      } catch (err) {
        if (!down) logger.warn({ err }, 'Alertmanager unreachable; threads are reconciled once it answers');
        down = true;
        return;
      }
      if (down) logger.info('Alertmanager answers again');
      down = false;
      const [o] = await push([{ type: 'reconcile', alerts, listedAt, seen }]);
      rememberListed(seen, alerts);
      if (o?.status === 'reconciled' && o.marked > 0) logger.info({ marked: o.marked }, 'threads marked from Alertmanager');
    });
    rounds.push(reconcile);
    // At once, then every interval: what was listed before a restart is known again soonest.
    void reconcile.run();
    timers.push(clock.setInterval(() => void reconcile.run(), config.alertmanager.reconcile_interval_ms));
  }
  for (const t of timers) t.unref();
  return {
    async stop() {
      for (const t of timers) clock.clearInterval(t);
      await Promise.all(rounds.map((r) => r.current()));
      await deps.idle();
    },
  };
}
