/**
 * `trigger.max_investigations_per_hour`: a rolling hour of investigation starts. The first check
 * seeds the window from the ledger, so a restart does not reset the limit.
 */
import type { Clock } from '../../ports/clock.js';

const HOUR_MS = 3_600_000;

export class HourlyStartLimit {
  #starts: number[] | undefined;
  readonly #limit: number;
  readonly #clock: Clock;
  readonly #since: (since: Date) => readonly string[];

  /**
   * @param limit starts per rolling hour; 0 = no limit.
   * @param since the start times (ISO) the ledger holds from a moment on.
   */
  constructor(limit: number, clock: Clock, since: (since: Date) => readonly string[]) {
    this.#limit = limit;
    this.#clock = clock;
    this.#since = since;
  }

  /** Why a new investigation may not start now, or undefined — and then the start is counted. */
  tryStart(): string | undefined {
    if (this.#limit <= 0) return undefined;
    const now = this.#clock.now().getTime();
    const starts = (this.#starts ??= this.#since(new Date(now - HOUR_MS)).map((t) => Date.parse(t)));
    while (starts.length > 0 && now - starts[0]! >= HOUR_MS) starts.shift();
    if (starts.length >= this.#limit) {
      const wait = Math.max(1, Math.ceil((starts[0]! + HOUR_MS - now) / 60_000));
      return `rate limit: ${this.#limit} investigations already started in the last hour (trigger.max_investigations_per_hour); the next slot opens in ${wait} min`;
    }
    starts.push(now);
    return undefined;
  }
}
