import { describe, expect, it } from 'vitest';
import { CachedPeopleDirectory, learnOnMiss } from '../../../src/runtime/people-directory.js';
import { DeliveryError } from '../../../src/core/chat/chat-types.js';
import { silentLogger } from '../../../src/ports/logger.js';
import type { NameLookup } from '../../../src/ports/people.js';

const ANN = { via: 'slack', id: 'U0ANN' };
const opts = { cacheSize: 3, ttlMs: 60_000, retryAfterMs: 60_000, lookupTimeoutMs: 200, logger: silentLogger };
const counting = (fn: NameLookup): NameLookup & { calls: string[] } => {
  const calls: string[] = [];
  const f = ((id: string, s: AbortSignal) => {
    calls.push(id);
    return fn(id, s);
  }) as NameLookup & { calls: string[] };
  f.calls = calls;
  return f;
};

describe('the people directory', () => {
  it('looks a person up once, in the background, and answers from its cache after', async () => {
    const slack = counting(async (id) => (id === 'U0ANN' ? 'Ann Example' : undefined));
    const d = new CachedPeopleDirectory({ ...opts, lookups: { slack } });
    expect(d.nameOf(ANN)).toBeUndefined();
    d.learn(ANN);
    d.learn(ANN);
    await d.resolve([ANN]);
    expect(d.nameOf(ANN)).toBe('Ann Example');
    await d.resolve([ANN, { via: 'slack', id: 'U0NOBODY' }]);
    expect(d.nameOf({ via: 'slack', id: 'U0NOBODY' })).toBeUndefined();
    expect(slack.calls).toEqual(['U0ANN', 'U0NOBODY']);
    // A surface without a lookup (the CLI) is never asked.
    await d.resolve([{ via: 'cli', id: 'ann' }]);
    expect(slack.calls).toHaveLength(2);
  });

  it('is bounded: past its size the least recently used name is dropped', async () => {
    const slack = counting(async (id) => `name of ${id}`);
    const d = new CachedPeopleDirectory({ ...opts, lookups: { slack } });
    await d.resolve(['U01', 'U02', 'U03', 'U04'].map((id) => ({ via: 'slack', id })));
    expect(d.nameOf({ via: 'slack', id: 'U04' })).toBe('name of U04');
    expect(d.nameOf({ via: 'slack', id: 'U01' })).toBeUndefined();
  });

  it('a failed lookup shows the id, never throws, and is not asked again inside retry_after', async () => {
    const slack = counting(async () => {
      throw new DeliveryError('slack users.info: HTTP 500', { retryable: true });
    });
    const d = new CachedPeopleDirectory({ ...opts, lookups: { slack } });
    await expect(d.resolve([ANN])).resolves.toBeUndefined();
    expect(d.nameOf(ANN)).toBeUndefined();
    await d.resolve([ANN]);
    expect(slack.calls).toEqual(['U0ANN']);
  });

  it('a rate limit pauses the whole surface until its Retry-After', async () => {
    const slack = counting(async () => {
      throw new DeliveryError('slack users.info: rate limited', { retryable: true, retryAfterMs: 30_000 });
    });
    const d = new CachedPeopleDirectory({ ...opts, lookups: { slack } });
    await d.resolve([ANN]);
    await d.resolve([{ via: 'slack', id: 'U0BOB' }]);
    expect(slack.calls).toEqual(['U0ANN']);
  });

  it('never waits past lookup_timeout for a slow surface; the answer still fills the cache when it comes', async () => {
    let release: (v: string) => void = () => {};
    const slack: NameLookup = () => new Promise<string>((r) => (release = r));
    const d = new CachedPeopleDirectory({ ...opts, lookupTimeoutMs: 50, lookups: { slack } });
    const t0 = Date.now();
    await d.resolve([ANN]);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(d.nameOf(ANN)).toBeUndefined();
    release('Ann');
    await expect.poll(() => d.nameOf(ANN)).toBe('Ann');
  });

  it('finds the one person of a surface it knows by a display name; none when two share it, or nobody has it', async () => {
    const names: Record<string, string> = { U0ANN: 'Ann Example', U0AN2: 'ann example', U0BOB: 'Bob', U0BO2: 'Bob' };
    const slack = async (id: string): Promise<string | undefined> => names[id];
    const d = new CachedPeopleDirectory({ ...opts, cacheSize: 10, lookups: { slack, matrix: async () => 'Carol' } });
    expect(d.idOf('slack', 'Ann Example')).toBeUndefined();
    await d.resolve(['U0ANN', 'U0AN2', 'U0BOB', 'U0BO2'].map((id) => ({ via: 'slack', id })));
    await d.resolve([{ via: 'matrix', id: '@carol:hs' }]);
    // Exact case first; a case-insensitive match only when no exact one exists, and only if it is unique.
    expect(d.idOf('slack', 'Ann Example')).toBe('U0ANN');
    expect(d.idOf('slack', 'ANN EXAMPLE')).toBeUndefined();
    expect(d.idOf('slack', 'Bob')).toBeUndefined();
    expect(d.idOf('slack', 'Carol')).toBeUndefined();
    expect(d.idOf('matrix', ' Carol ')).toBe('@carol:hs');
    expect(d.idOf('slack', '')).toBeUndefined();
    expect(learnOnMiss(d).idOf?.('matrix', 'Carol')).toBe('@carol:hs');
  });

  it('learnOnMiss answers at once and starts a lookup for whoever it did not know', async () => {
    const slack = counting(async () => 'Ann');
    const d = new CachedPeopleDirectory({ ...opts, lookups: { slack } });
    const names = learnOnMiss(d);
    expect(names.nameOf(ANN)).toBeUndefined();
    await d.resolve([ANN]);
    expect(names.nameOf(ANN)).toBe('Ann');
    expect(slack.calls).toEqual(['U0ANN']);
  });
});
