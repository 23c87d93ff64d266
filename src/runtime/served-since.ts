/**
 * When this bot first served each catalog entry (issue 28 item 4): the memory view's *stale*
 * flag counts from the later of the entry's own date (`last_validated`, else `timestamp`) and
 * this, so the bundled starter catalog — written months before anyone installs it — is not
 * "stale" on day one, and an entry with no date of its own still goes stale in time.
 *
 * Kept in the store under one key (embedded or Redis, so it outlives restarts and every
 * replica reads the same), written only when a snapshot brings ids never seen before. A record
 * that cannot be read is replaced, never trusted: the worst case is that the view counts from
 * now. Bounded: past {@link MAX_IDS} ids, those the served catalog no longer has are forgotten;
 * ids beyond it are not remembered (they count from their own date).
 */
import type { CatalogSnapshot } from '../core/recall/catalog-snapshot.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { KeyValueStore } from '../ports/store.js';

export const SERVED_SINCE_KEY = 'ui:served-since';
export const MAX_IDS = 50_000;

/** What the memory view reads: the first time an entry was served, as an ISO time. */
export interface ServedSinceReader {
  of(id: string): string | undefined;
}

export class ServedSince implements ServedSinceReader {
  readonly #since = new Map<string, string>();
  #last: CatalogSnapshot | undefined;
  #writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly store: Pick<KeyValueStore, 'get' | 'set'> | undefined,
    private readonly logger: Logger,
  ) {}

  /** Reads what the store remembers (nothing on a new store, or on a record it cannot read). */
  static async open(store: Pick<KeyValueStore, 'get' | 'set'> | undefined, logger: Logger): Promise<ServedSince> {
    const s = new ServedSince(store, logger);
    if (!store) return s;
    try {
      const raw = await store.get<unknown>(SERVED_SINCE_KEY);
      if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw))) throw new Error('not an object of ids to times');
      for (const [id, at] of Object.entries((raw ?? {}) as Record<string, unknown>)) {
        if (s.#since.size >= MAX_IDS) break;
        if (typeof at === 'string' && !Number.isNaN(Date.parse(at))) s.#since.set(id, at);
      }
    } catch (err) {
      logger.warn(
        { err, key: SERVED_SINCE_KEY },
        `cannot read when catalog entries were first served (${(err as Error).message}); counting staleness from now`,
      );
    }
    return s;
  }

  /** Records `now` for every entry of `snapshot` not served before; cheap when the snapshot is the last one seen. */
  note(snapshot: CatalogSnapshot, now: Date): void {
    if (snapshot === this.#last) return;
    this.#last = snapshot;
    const at = now.toISOString();
    let added = 0;
    if (this.#since.size + snapshot.entries.length > MAX_IDS) {
      // Full: forget the ids this catalog no longer has before remembering new ones.
      const live = new Set(snapshot.entries.map((e) => e.id));
      for (const id of [...this.#since.keys()]) if (!live.has(id)) this.#since.delete(id);
    }
    for (const e of snapshot.entries) {
      if (this.#since.has(e.id) || this.#since.size >= MAX_IDS) continue;
      this.#since.set(e.id, at);
      added += 1;
    }
    if (added > 0) this.#persist();
  }

  /** `current` (the served catalog), noting every snapshot it hands out — the bot's `catalog()`. */
  serving(current: () => CatalogSnapshot, clock: Clock): () => CatalogSnapshot {
    return () => {
      const snapshot = current();
      this.note(snapshot, clock.now());
      return snapshot;
    };
  }

  of(id: string): string | undefined {
    return this.#since.get(id);
  }

  /** Resolves once every write asked for so far has finished (tests, shutdown). */
  flushed(): Promise<void> {
    return this.#writing;
  }

  #persist(): void {
    const store = this.store;
    if (!store) return;
    const value = Object.fromEntries(this.#since);
    this.#writing = this.#writing
      .then(() => store.set(SERVED_SINCE_KEY, value))
      .catch((err: unknown) =>
        this.logger.warn({ err, key: SERVED_SINCE_KEY }, `cannot record when catalog entries were first served: ${(err as Error).message}`),
      );
  }
}
