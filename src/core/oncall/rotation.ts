/**
 * The embedded on-call rotation (issue 32 item 2): who is on call from the config alone — people
 * in order, a handoff time in a time zone, daily or weekly, and overrides with from/to — needing
 * no service. Pure: the same rotation at the same instant gives the same person, and the handoff
 * is at the local wall-clock time on every day, across daylight-saving changes.
 */

export interface RotationOverride {
  /** ISO instant the override starts (inclusive). */
  from: string;
  /** ISO instant it ends (exclusive). */
  to: string;
  /** Who is on call meanwhile. */
  person: string;
}

export interface Rotation {
  /** Names, in rotation order. */
  people: readonly string[];
  every: 'daily' | 'weekly';
  /** Local handoff time, `HH:MM`. */
  handoff: string;
  /** IANA time zone of the handoff (`UTC`, `Europe/Berlin`). */
  timezone: string;
  /** Local date (`YYYY-MM-DD`) whose handoff starts the first person's first shift. */
  start: string;
  overrides: readonly RotationOverride[];
}

/** Who holds the pager, until when, and whether an override put them there. */
export interface RotationShift {
  person: string;
  /** ISO instant of the next change (handoff, or the override's start or end). */
  until: string;
  override: boolean;
}

const DAY_MS = 86_400_000;

/** The zone's offset from UTC at `instant`, in ms (Berlin in winter: +3 600 000). */
export function zoneOffsetMs(instant: number, timezone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - (instant - (instant % 1000));
}

/** The instant the local wall-clock time `y-m-d h:mi` happens in the zone (the later one's offset wins in a gap). */
function localToInstant(days: number, minutes: number, timezone: string): number {
  const wall = days * DAY_MS + minutes * 60_000;
  let guess = wall - zoneOffsetMs(wall, timezone);
  guess = wall - zoneOffsetMs(guess, timezone);
  return guess;
}

/** Days since 1970-01-01 of the local date at `instant` in the zone, and the local minute of that day. */
function localDay(instant: number, timezone: string): { day: number; minute: number } {
  const wall = instant + zoneOffsetMs(instant, timezone);
  const day = Math.floor(wall / DAY_MS);
  return { day, minute: Math.floor((wall - day * DAY_MS) / 60_000) };
}

function parseHandoff(handoff: string): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(handoff);
  if (!m) throw new Error(`handoff must be HH:MM, not ${JSON.stringify(handoff)}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

function parseDay(date: string): number {
  const t = Date.parse(`${date}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(t)) throw new Error(`start must be a date YYYY-MM-DD, not ${JSON.stringify(date)}`);
  return Math.floor(t / DAY_MS);
}

/** Whether the rotation's settings can be computed with (the config check's question); the problem otherwise. */
export function rotationProblem(r: Pick<Rotation, 'handoff' | 'timezone' | 'start' | 'people'>): string | undefined {
  try {
    parseHandoff(r.handoff);
    parseDay(r.start);
    zoneOffsetMs(0, r.timezone);
  } catch (err) {
    return (err as Error).message.replace(/^Invalid time zone specified: (.*)$/, 'timezone $1 is not an IANA time zone');
  }
  return r.people.length === 0 ? 'people must name at least one person' : undefined;
}

/**
 * Who is on call at `now`: an override covering `now` wins (the latest-listed when two overlap);
 * otherwise the person whose shift it is. Before `start` the first person is on call.
 */
export function rotationAt(r: Rotation, now: Date): RotationShift {
  const t = now.getTime();
  const handoffMin = parseHandoff(r.handoff);
  const startDay = parseDay(r.start);
  const { day, minute } = localDay(t, r.timezone);
  // The local day whose handoff began the shift `now` is in.
  const shiftDay = minute >= handoffMin ? day : day - 1;
  const length = r.every === 'weekly' ? 7 : 1;
  const elapsed = Math.max(0, Math.floor((shiftDay - startDay) / length));
  const n = r.people.length;
  const regular = r.people[((elapsed % n) + n) % n] ?? r.people[0] ?? '';
  const firstShiftDay = startDay + elapsed * length;
  const nextHandoff = localToInstant(shiftDay < startDay ? startDay : firstShiftDay + length, handoffMin, r.timezone);
  let active: RotationOverride | undefined;
  let nextChange = nextHandoff;
  for (const o of r.overrides) {
    const from = Date.parse(o.from);
    const to = Date.parse(o.to);
    if (!(from < to)) continue;
    if (from <= t && t < to) active = o;
    else if (from > t) nextChange = Math.min(nextChange, from);
  }
  if (active) {
    // An override lasts until its end, or until a later-listed one begins within it.
    let until = Date.parse(active.to);
    for (const o of r.overrides.slice(r.overrides.indexOf(active) + 1)) {
      const from = Date.parse(o.from);
      if (from > t && from < until && from < Date.parse(o.to)) until = from;
    }
    return { person: active.person, until: new Date(until).toISOString(), override: true };
  }
  return { person: regular, until: new Date(nextChange).toISOString(), override: false };
}
