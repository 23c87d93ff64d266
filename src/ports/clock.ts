/**
 * Injectable time: what time it is, and when to do something later. Gates, windows and the
 * loop's timers (retries, waits, polls) go through it, so that the bot never reads the wall
 * clock directly and a test steps a {@link ManualClock} instead of sleeping.
 */
export interface Clock {
  now(): Date;
  /** Runs `fn` once, `ms` from now. */
  setTimeout(fn: () => void, ms: number): Timer;
  /** Runs `fn` every `ms`, the first time `ms` from now. */
  setInterval(fn: () => void, ms: number): Timer;
  /** Cancels a timer of this clock (either kind); undefined or an already fired timer is fine. */
  clearTimeout(timer: Timer | undefined): void;
  clearInterval(timer: Timer | undefined): void;
}

/** A scheduled callback, cancelled through the clock that made it. */
export interface Timer {
  /** Lets the process exit while the timer waits, as Node's `unref` (a no-op on a manual clock). */
  unref(): Timer;
}

/** The real time and Node's timers. */
export const systemClock: Clock = {
  now: () => new Date(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout | undefined),
  clearInterval: (t) => clearInterval(t as NodeJS.Timeout | undefined),
};

/**
 * Waits `ms` on `clock`. An abort ends the wait early by rejecting with the signal's reason
 * (as `timers/promises` does), and leaves no timer behind.
 */
export function sleep(clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

class ManualTimer implements Timer {
  constructor(
    readonly fn: () => void,
    public at: number,
    /** Set for an interval: its period. */
    readonly every: number | undefined,
    /** Creation order: timers due at the same instant fire in the order they were set. */
    public order: number,
  ) {}
  unref(): Timer {
    return this;
  }
}

/**
 * A clock tests and the demo move by hand. Its timers fire only when it is moved: `advance`
 * runs, in order and each at its own instant, every timer that came due (including ones those
 * callbacks set within the step); `advanceAsync` does the same and lets promises settle between
 * timers, for code that schedules its next timer after an `await`.
 */
export class ManualClock implements Clock {
  #t: number;
  #timers = new Set<ManualTimer>();
  #order = 0;

  constructor(start: Date | string = '2026-01-01T00:00:00Z') {
    this.#t = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.#t);
  }

  setTimeout(fn: () => void, ms: number): Timer {
    return this.#add(fn, ms, undefined);
  }

  setInterval(fn: () => void, ms: number): Timer {
    // Node runs a zero interval every millisecond; so does this clock (and never loops forever).
    return this.#add(fn, ms, Math.max(1, delay(ms)));
  }

  clearTimeout(timer: Timer | undefined): void {
    if (timer instanceof ManualTimer) this.#timers.delete(timer);
  }

  clearInterval(timer: Timer | undefined): void {
    this.clearTimeout(timer);
  }

  /** Timers waiting to fire (a test can wait for the code under test to have set one). */
  get pending(): number {
    return this.#timers.size;
  }

  /** When the next timer fires, if any is set. */
  nextAt(): Date | undefined {
    const t = this.#next(Number.POSITIVE_INFINITY);
    return t ? new Date(t.at) : undefined;
  }

  /** Moves time forward `ms`, running every timer that comes due on the way. */
  advance(ms: number): void {
    const to = this.#t + Math.max(0, ms);
    for (let t = this.#next(to); t; t = this.#next(to)) this.#fire(t);
    this.#t = to;
  }

  /**
   * As `advance`, giving the event loop one turn after each timer (promise callbacks run, and what
   * was already queued with `setImmediate`). Code that waits on I/O before setting its next timer
   * is waited for by the test (the event it produces), then the clock is stepped again.
   */
  async advanceAsync(ms: number): Promise<void> {
    const to = this.#t + Math.max(0, ms);
    await settle();
    for (let t = this.#next(to); t; t = this.#next(to)) {
      this.#fire(t);
      await settle();
    }
    this.#t = to;
  }

  /** Runs the timers due now (a zero step). */
  runDue(): void {
    this.advance(0);
  }

  /** Moves to `at`: forward runs what comes due as `advance` does; backward only resets the time. */
  set(at: Date | string): void {
    const to = new Date(at).getTime();
    if (to >= this.#t) this.advance(to - this.#t);
    else this.#t = to;
  }

  #add(fn: () => void, ms: number, every: number | undefined): ManualTimer {
    const t = new ManualTimer(fn, this.#t + delay(ms), every, this.#order++);
    this.#timers.add(t);
    return t;
  }

  /** The earliest timer due by `to` (the first set among equals). */
  #next(to: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.#timers) if (t.at <= to && (!best || t.at < best.at || (t.at === best.at && t.order < best.order))) best = t;
    return best;
  }

  #fire(t: ManualTimer): void {
    this.#t = Math.max(this.#t, t.at);
    if (t.every === undefined) this.#timers.delete(t);
    else {
      t.at += t.every;
      t.order = this.#order++;
    }
    t.fn();
  }
}

/** A delay as Node reads it: not a finite number, or negative, means now. */
function delay(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** One turn of the event loop: pending promise callbacks run, then what was queued with `setImmediate`. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
