/**
 * Can the store still be written? One small write now and every `store.probe_interval_ms`;
 * /readyz reports what the last one found.
 */
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';

/** Key the store probe writes; harmless to overwrite, never read by the ledger. */
const PROBE_KEY = 'health:probe';

export interface ProbeResult {
  ok: boolean;
  at: string;
  error?: string;
}

export interface StoreProbe {
  /** What the last probe found. */
  last(): ProbeResult;
  stop(): void;
}

/** Probes once (awaited) and then every `intervalMs` (unref'd: it keeps no process alive). */
export async function startStoreProbe(store: Pick<KeyValueStore, 'set'>, intervalMs: number, clock: Clock, logger: Logger): Promise<StoreProbe> {
  let probe: ProbeResult = { ok: false, at: clock.now().toISOString(), error: 'not probed yet' };
  const run = async (): Promise<void> => {
    const at = clock.now().toISOString();
    try {
      await store.set(PROBE_KEY, { pid: process.pid, at });
      if (!probe.ok) logger.info('store is writable');
      probe = { ok: true, at };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      if (probe.ok || probe.error !== error) logger.error({ err }, 'store cannot be written; /readyz reports not ready');
      probe = { ok: false, at, error };
    }
  };
  await run();
  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return { last: () => probe, stop: () => clearInterval(timer) };
}
