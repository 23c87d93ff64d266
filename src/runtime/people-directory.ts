/**
 * The people directory `serve` runs: one bounded LRU of display names for every surface
 * (lru-cache: a capped, TTL'd map is plumbing, not domain), filled by each surface's own lookup
 * — Slack `users.info`, the Matrix profile API. A lookup runs once per person at a time, is cut
 * off at `lookup_timeout`, and a failure (or a rate limit, until its Retry-After) is remembered
 * for `retry_after`, so an outage costs one request per person per window, and the id is shown.
 */
import { LRUCache } from 'lru-cache';
import { cleanName, personKey, type PersonRef } from '../core/people.js';
import type { Logger } from '../ports/logger.js';
import type { NameLookup, PeopleDirectory, PeopleNames } from '../ports/people.js';

export interface PeopleDirectoryOptions {
  /** Lookups by surface (`slack`, `matrix`); a person of any other surface keeps the name their event carried. */
  lookups: Readonly<Record<string, NameLookup>>;
  cacheSize: number;
  ttlMs: number;
  retryAfterMs: number;
  lookupTimeoutMs: number;
  /** At most this many lookups in flight per surface; past it, a person waits for a later mention. Default 4. */
  concurrency?: number;
  logger: Logger;
}

/** A cached answer: the name, or none (the surface has none, or asking failed: then `failed`). */
interface Known {
  name?: string;
  failed?: boolean;
}

export class CachedPeopleDirectory implements PeopleDirectory {
  readonly #opts: PeopleDirectoryOptions;
  readonly #cache: LRUCache<string, Known>;
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #running = new Map<string, number>();
  /** A surface that answered 429: not asked again before this time (ms since epoch). */
  readonly #pausedUntil = new Map<string, number>();

  constructor(opts: PeopleDirectoryOptions) {
    this.#opts = opts;
    this.#cache = new LRUCache<string, Known>({ max: opts.cacheSize, ttl: opts.ttlMs, ttlAutopurge: false });
  }

  nameOf(p: PersonRef): string | undefined {
    return this.#cache.get(personKey(p))?.name;
  }

  idOf(via: string, name: string): string | undefined {
    const want = cleanName(name);
    if (want === '') return undefined;
    const prefix = personKey({ via, id: '' });
    const exact: string[] = [];
    const folded: string[] = [];
    // The cache holds at most `cache_size` people: a scan is cheap, and reading does not refresh them.
    for (const [key, known] of this.#cache.entries()) {
      if (!key.startsWith(prefix) || !known.name) continue;
      if (known.name === want) exact.push(key.slice(prefix.length));
      else if (known.name.toLowerCase() === want.toLowerCase()) folded.push(key.slice(prefix.length));
    }
    const found = exact.length > 0 ? exact : folded;
    return found.length === 1 ? found[0] : undefined;
  }

  learn(p: PersonRef): void {
    void this.#lookup(p);
  }

  async resolve(people: readonly PersonRef[]): Promise<void> {
    const pending = people.map((p) => this.#lookup(p));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((r) => {
      timer = setTimeout(r, this.#opts.lookupTimeoutMs);
      timer.unref();
    });
    await Promise.race([Promise.all(pending), deadline]);
    clearTimeout(timer);
  }

  /** Looks `p` up unless its answer is cached, a lookup is running, or its surface is paused; never rejects. */
  #lookup(p: PersonRef): Promise<void> {
    const lookup = this.#opts.lookups[p.via];
    const key = personKey(p);
    if (!lookup || p.id === '' || this.#cache.has(key)) return Promise.resolve();
    const running = this.#inFlight.get(key);
    if (running) return running;
    if ((this.#pausedUntil.get(p.via) ?? 0) > Date.now()) return Promise.resolve();
    const busy = this.#running.get(p.via) ?? 0;
    if (busy >= (this.#opts.concurrency ?? 4)) return Promise.resolve();
    this.#running.set(p.via, busy + 1);
    const signal = AbortSignal.timeout(this.#opts.lookupTimeoutMs);
    const done = lookup(p.id, signal)
      .then(
        (name) => {
          const clean = cleanName(name);
          this.#cache.set(key, clean ? { name: clean } : {});
        },
        (err: unknown) => {
          const retryAfterMs = (err as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
          if (typeof retryAfterMs === 'number' && retryAfterMs > 0) this.#pausedUntil.set(p.via, Date.now() + retryAfterMs);
          this.#cache.set(key, { failed: true }, { ttl: this.#opts.retryAfterMs });
          this.#opts.logger.warn(
            { via: p.via, user: p.id, err: err instanceof Error ? err.message : String(err) },
            'display name lookup failed; showing the id',
          );
        },
      )
      .finally(() => {
        this.#inFlight.delete(key);
        this.#running.set(p.via, (this.#running.get(p.via) ?? 1) - 1);
      });
    this.#inFlight.set(key, done);
    return done;
  }
}

/** The names a renderer reads, starting a background lookup for each person not known yet. */
export function learnOnMiss(people: PeopleDirectory): PeopleNames {
  return {
    nameOf: (p) => {
      const name = people.nameOf(p);
      if (name === undefined) people.learn(p);
      return name;
    },
    ...(people.idOf ? { idOf: (via: string, name: string) => people.idOf!(via, name) } : {}),
  };
}
