/**
 * Catalog sync series (issue 6 item 2), read from the sync's status at scrape time: whether
 * the remote answers, how old the served HEAD's confirmation is, and which HEAD is served.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CatalogSyncStatus } from '../core/catalog/catalog-sync.js';
import type { Clock } from '../ports/clock.js';

export function registerCatalogSyncMetrics(registry: Registry, status: () => CatalogSyncStatus, clock: Clock): void {
  const counted = { failures: 0, fetches: 0, full: 0, incremental: 0, unchanged: 0 };
  /** Counters only go up: add what the status gained since the last scrape. */
  const catchUp = (c: Counter<string>, key: keyof typeof counted, now: number, labels?: Record<string, string>): void => {
    const delta = now - counted[key];
    if (delta > 0) {
      if (labels) c.inc(labels, delta);
      else c.inc(delta);
      counted[key] = now;
    }
  };
  new Counter({
    name: 'reprise_catalog_sync_failures_total',
    help: 'Catalog fetches or re-indexes that failed (the last good index is kept).',
    registers: [registry],
    collect() {
      catchUp(this, 'failures', status().failures);
    },
  });
  new Counter({
    name: 'reprise_catalog_fetches_total',
    help: 'Catalog fetches from the git remote (polls and on-demand syncs).',
    registers: [registry],
    collect() {
      catchUp(this, 'fetches', status().fetches);
    },
  });
  new Counter({
    name: 'reprise_catalog_rebuilds_total',
    help: 'Catalog index rebuilds by mode: full, incremental (in place), none (HEAD unchanged, nothing rebuilt).',
    labelNames: ['mode'] as const,
    registers: [registry],
    collect() {
      const st = status();
      catchUp(this, 'full', st.rebuilds.full, { mode: 'full' });
      catchUp(this, 'incremental', st.rebuilds.incremental, { mode: 'incremental' });
      catchUp(this, 'unchanged', st.unchanged, { mode: 'none' });
    },
  });
  new Gauge({
    name: 'reprise_catalog_sync_consecutive_failures',
    help: 'Catalog sync failures since the last success (0 when the remote answers).',
    registers: [registry],
    collect() {
      this.set(status().consecutiveFailures);
    },
  });
  new Gauge({
    name: 'reprise_catalog_last_sync_success_timestamp_seconds',
    help: 'When the remote last answered and the index matched its HEAD (0 = never).',
    registers: [registry],
    collect() {
      const at = status().lastSuccessAt;
      this.set(at ? Date.parse(at) / 1000 : 0);
    },
  });
  new Gauge({
    name: 'reprise_catalog_head_age_seconds',
    help: 'Seconds since the served HEAD was last confirmed against the remote (-1 = never).',
    registers: [registry],
    collect() {
      const at = status().lastSuccessAt;
      this.set(at ? Math.max(0, (clock.now().getTime() - Date.parse(at)) / 1000) : -1);
    },
  });
  new Gauge({
    name: 'reprise_catalog_info',
    help: 'The catalog being served: 1 for the current HEAD and branch.',
    labelNames: ['head', 'branch', 'remote'] as const,
    registers: [registry],
    collect() {
      const st = status();
      this.reset();
      this.set({ head: st.head ?? 'none', branch: st.branch, remote: st.remote }, 1);
    },
  });
}
