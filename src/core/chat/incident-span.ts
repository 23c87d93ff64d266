/**
 * How long an incident lasted, measured as its source tells it (issue 28 item 2): from the
 * alert's own `startsAt` (a group's earliest) to its own `endsAt` (a group's latest), and only
 * when the source sent none, from when Reprise heard of it to when it heard of the end. Every
 * place that says "resolved after", "N min after it fired", a timeline's offsets, a postmortem's
 * times or a `/ui` figure measures with these, so chat and `/ui` agree.
 */

const valid = (t: string | undefined): t is string => t !== undefined && Number.isFinite(Date.parse(t));

/** The earliest of the times that parse, if any. */
export function earliest(...times: ReadonlyArray<string | undefined>): string | undefined {
  let best: string | undefined;
  for (const t of times) if (valid(t) && (best === undefined || Date.parse(t) < Date.parse(best))) best = t;
  return best;
}

/** The latest of the times that parse, if any. */
export function latest(...times: ReadonlyArray<string | undefined>): string | undefined {
  let best: string | undefined;
  for (const t of times) if (valid(t) && (best === undefined || Date.parse(t) > Date.parse(best))) best = t;
  return best;
}

/** What a span is measured from: the alert's (or its group's) own times, and when Reprise heard. */
export interface SpanTimes {
  /** The alert's own start (`startsAt`). */
  startsAt?: string | undefined;
  /** When Reprise opened it (ledger time): only when the source gave no start. */
  openedAt?: string | undefined;
  /** The alert's own end (`endsAt`). */
  endsAt?: string | undefined;
  /** When Reprise heard of the resolve (ledger time): only when the source gave no end. */
  resolvedAt?: string | undefined;
  /** A grouped incident (one thread for several alerts): its earliest start, its latest end. */
  group?: { startsAt?: string | undefined; endsAt?: string | undefined } | undefined;
}

/** When it started: the earliest start the source gave, else when Reprise heard of it. */
export function spanStart(s: SpanTimes): string | undefined {
  return earliest(s.group?.startsAt, s.startsAt) ?? (valid(s.openedAt) ? s.openedAt : undefined);
}

/** When it ended: the latest end the source gave, else when Reprise heard it had. */
export function spanEnd(s: SpanTimes): string | undefined {
  return latest(s.group?.endsAt, s.endsAt) ?? (valid(s.resolvedAt) ? s.resolvedAt : undefined);
}

/** Milliseconds from `from` to `to`, never negative; undefined when either does not parse. */
export function elapsedMs(from: string | undefined, to: string | undefined): number | undefined {
  if (!valid(from) || !valid(to)) return undefined;
  return Math.max(0, Date.parse(to) - Date.parse(from));
}

/** "resolved after N min", from the alert's own start to its end when it sent them. */
export function resolvedNote(startedAt: string | undefined, endedAt: string | undefined): string {
  const ms = elapsedMs(startedAt, endedAt);
  return `resolved after ${ms === undefined ? 0 : Math.round(ms / 60_000)} min`;
}

/** "resolved after N min" of a span. */
export function spanResolvedNote(s: SpanTimes): string {
  return resolvedNote(spanStart(s), spanEnd(s));
}
