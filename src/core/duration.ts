/**
 * Human durations as written in the config file: `30s`, `5m`, `1h`, `7d`, `1h30m`, `250ms`, or `0`.
 * Config keeps the text (it is what the operator wrote and reads back) and exposes the
 * milliseconds next to it as `<key>_ms`.
 */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
type Unit = keyof typeof UNIT_MS;

// `ms` must come before `m` so that `250ms` is not read as 250 minutes followed by junk.
const PART = /(\d+)(ms|s|m|h|d|w)/gy;

/** The rule shown to operators when a duration does not parse. */
export const DURATION_RULE = 'must be a duration like 30s, 5m, 1h, 7d (or 0 for off)';

/** Returns the duration in milliseconds, or `undefined` when the text is not a duration. */
export function tryParseDuration(input: string | number): number | undefined {
  if (input === 0 || input === '0') return 0;
  if (typeof input !== 'string') return undefined;
  const text = input.trim();
  if (text === '') return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = PART.exec(text); m; m = PART.exec(text)) {
    const [whole, amount, unit] = m;
    total += Number(amount) * UNIT_MS[unit as Unit];
    consumed += whole.length;
  }
  if (consumed !== text.length || !Number.isSafeInteger(total)) return undefined;
  return total;
}

/**
 * Parses a config duration (`30s`, `5m`, `1h`, `7d`, `180d`, `1h30m`, `0`) into milliseconds.
 * @throws Error naming the rule when the text is not a duration.
 */
export function parseDuration(input: string | number): number {
  const ms = tryParseDuration(input);
  if (ms === undefined) throw new Error(`${JSON.stringify(input)} ${DURATION_RULE}`);
  return ms;
}

/** "4 min", "1 h 5 min", "2 d 3 h". */
export function shortDuration(ms: number): string {
  const min = Number.isFinite(ms) ? Math.max(0, Math.round(ms / 60_000)) : 0;
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
