/** Injectable time source so gates, windows and tests never read the wall clock directly. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests and the demo move by hand. */
export class ManualClock implements Clock {
  #t: number;
  constructor(start: Date | string = '2026-01-01T00:00:00Z') {
    this.#t = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#t);
  }
  advance(ms: number): void {
    this.#t += ms;
  }
  set(at: Date | string): void {
    this.#t = new Date(at).getTime();
  }
}
