import type { PeopleNames, PersonRef } from '../core/people.js';

export type { PeopleNames, PersonRef };

/**
 * Display names by surface: what {@link PeopleNames.nameOf} reads is a cache, filled in the
 * background ({@link learn}) or, where a plain-text document is about to be written (a PR body,
 * a postmortem), waited for a bounded time ({@link resolve}). A failed or slow lookup leaves the
 * person known by their id; nothing here throws.
 */
export interface PeopleDirectory extends PeopleNames {
  /** Starts looking `p`'s name up when it is not known (never waits, never throws). */
  learn(p: PersonRef): void;
  /** Looks up whoever of `people` is not known, waiting at most the configured timeout. */
  resolve(people: readonly PersonRef[]): Promise<void>;
}

/**
 * One surface's lookup: the person's display name, or undefined when the surface has none for
 * them. A throw is a failure (unreachable, refused); `retryAfterMs` on it says when to ask again.
 */
export type NameLookup = (id: string, signal: AbortSignal) => Promise<string | undefined>;
