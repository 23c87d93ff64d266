import { describe, expect, it } from 'vitest';
import { ManualClock, sleep, systemClock } from '../../../src/ports/clock.js';

describe('ManualClock', () => {
  it('fires a timer only once time reaches it, at its own instant', () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const seen: string[] = [];
    clock.setTimeout(() => seen.push(clock.now().toISOString()), 1000);
    clock.advance(999);
    expect(seen).toEqual([]);
    clock.advance(5000);
    expect(seen).toEqual(['2026-01-01T00:00:01.000Z']);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:05.999Z');
    expect(clock.pending).toBe(0);
  });

  it('runs due timers in time order, equals in the order they were set, and ones set on the way', () => {
    const clock = new ManualClock();
    const seen: string[] = [];
    clock.setTimeout(() => seen.push('b'), 20);
    clock.setTimeout(() => seen.push('a'), 10);
    clock.setTimeout(() => seen.push('b2'), 20);
    clock.setTimeout(() => {
      seen.push('c');
      clock.setTimeout(() => seen.push('d'), 5);
    }, 30);
    clock.advance(35);
    expect(seen).toEqual(['a', 'b', 'b2', 'c', 'd']);
  });

  it('a cleared timer never fires; clearing twice or undefined is fine', () => {
    const clock = new ManualClock();
    let fired = 0;
    const t = clock.setTimeout(() => fired++, 10);
    clock.clearTimeout(t);
    clock.clearTimeout(t);
    clock.clearTimeout(undefined);
    clock.advance(100);
    expect(fired).toBe(0);
  });

  it('an interval fires every period until cleared, even from its own callback', () => {
    const clock = new ManualClock();
    const at: number[] = [];
    const start = clock.now().getTime();
    const t = clock.setInterval(() => {
      at.push(clock.now().getTime() - start);
      if (at.length === 3) clock.clearInterval(t);
    }, 100);
    clock.advance(1000);
    expect(at).toEqual([100, 200, 300]);
    expect(clock.pending).toBe(0);
  });

  it('a zero or bad delay means now; runDue fires it without moving time', () => {
    const clock = new ManualClock();
    const before = clock.now().getTime();
    let fired = 0;
    clock.setTimeout(() => fired++, 0);
    clock.setTimeout(() => fired++, Number.NaN);
    clock.setTimeout(() => fired++, -5);
    expect(clock.nextAt()?.getTime()).toBe(before);
    clock.runDue();
    expect(fired).toBe(3);
    expect(clock.now().getTime()).toBe(before);
  });

  it('set moves forward through due timers; backward only resets the time', () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    let fired = 0;
    clock.setTimeout(() => fired++, 60_000);
    clock.set('2025-12-31T00:00:00Z');
    expect(fired).toBe(0);
    clock.set('2026-01-01T00:00:59Z');
    expect(fired).toBe(0);
    clock.set('2026-01-02T00:00:00Z');
    expect(fired).toBe(1);
  });

  it('advanceAsync lets a callback await before setting its next timer', async () => {
    const clock = new ManualClock();
    const ticks: number[] = [];
    const start = clock.now().getTime();
    const loop = async (): Promise<void> => {
      ticks.push(clock.now().getTime() - start);
      await Promise.resolve();
      await Promise.resolve();
      if (ticks.length < 3) clock.setTimeout(() => void loop(), 50);
    };
    clock.setTimeout(() => void loop(), 50);
    await clock.advanceAsync(1000);
    expect(ticks).toEqual([50, 100, 150]);
  });
});

describe('sleep', () => {
  it('resolves when the clock passes the wait', async () => {
    const clock = new ManualClock();
    let done = false;
    const p = sleep(clock, 1000).then(() => (done = true));
    await clock.advanceAsync(999);
    expect(done).toBe(false);
    await clock.advanceAsync(1);
    await p;
    expect(done).toBe(true);
  });

  it('an abort rejects with the reason and leaves no timer', async () => {
    const clock = new ManualClock();
    const ac = new AbortController();
    const p = sleep(clock, 1000, ac.signal);
    expect(clock.pending).toBe(1);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
    await expect(sleep(clock, 10, ac.signal)).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
  });

  it('systemClock timers are real and can be unref’d', async () => {
    const t = systemClock.setTimeout(() => undefined, 60_000).unref();
    systemClock.clearTimeout(t);
    await sleep(systemClock, 1);
  });
});
