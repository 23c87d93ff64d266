import { afterEach, describe, expect, it } from 'vitest';
import { pagerDutyHistory } from '../../../../src/adapters/pagerduty/pagerduty-history.js';
import { PagerDutyReadError } from '../../../../src/ports/pagerduty-history.js';
import { startPagerDutyFake, type PagerDutyFake } from '../../../fakes/pagerduty-fake.js';

let fake: PagerDutyFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const incidents = Array.from({ length: 5 }, (_, i) => ({
  id: `P${i}`,
  title: `alert ${i}`,
  status: i === 4 ? 'triggered' : 'resolved',
  created_at: `2026-11-0${i + 1}T00:00:00Z`,
  service: { id: i % 2 === 0 ? 'PA' : 'PB' },
}));
const window = { since: new Date('2026-10-01T00:00:00Z'), until: new Date('2026-12-01T00:00:00Z'), serviceIds: [] };

function client(f: PagerDutyFake, waits: number[] = [], token = 'tok') {
  return pagerDutyHistory({
    apiUrl: f.apiUrl,
    token,
    timeoutMs: 5_000,
    maxAttempts: 3,
    backoff: { baseMs: 100, maxMs: 60_000 },
    sleep: async (ms) => void waits.push(ms),
  });
}

describe('pagerDutyHistory', () => {
  it('reads every page of resolved incidents in the window, by service when asked', async () => {
    fake = await startPagerDutyFake({ token: 'tok', history: { incidents, maxLimit: 2 } });
    const pages: number[] = [];
    const all = await client(fake).resolvedIncidents(window, (n) => pages.push(n));
    expect(all.map((i) => (i as { id: string }).id)).toEqual(['P0', 'P1', 'P2', 'P3']);
    expect(pages).toEqual([2, 4]);
    const b = await client(fake).resolvedIncidents({ ...window, serviceIds: ['PB'] });
    expect(b.map((i) => (i as { id: string }).id)).toEqual(['P1', 'P3']);
    expect(fake.requests.every((r) => r.headers['authorization'] === 'Token token=tok')).toBe(true);
    expect(fake.requests[0]?.headers['accept']).toBe('application/vnd.pagerduty+json;version=2');
  });

  it("waits as long as a 429's Retry-After says, backs off on 5xx, and gives up after maxAttempts", async () => {
    fake = await startPagerDutyFake({ token: 'tok', history: { incidents } });
    fake.script((n) => (n === 0 ? { status: 429, retryAfter: '7' } : n === 1 ? { status: 503 } : undefined));
    const waits: number[] = [];
    expect(await client(fake, waits).resolvedIncidents(window)).toHaveLength(4);
    expect(waits).toEqual([7_000, 200]);
    fake.script(() => ({ status: 502 }));
    const err = await client(fake, [])
      .notes('P0')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PagerDutyReadError);
    expect((err as PagerDutyReadError).fatal).toBe(false);
    expect((err as Error).message).toMatch(/answered 502 .*gave up after 3 attempts/);
  });

  it('stops at once on a refused token, saying how to fix it, and never repeats the token', async () => {
    fake = await startPagerDutyFake({ token: 'right', echo: true, history: { incidents } });
    const err = await client(fake, [], 'secret-token-123')
      .resolvedIncidents(window)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PagerDutyReadError);
    expect((err as PagerDutyReadError).fatal).toBe(true);
    expect((err as Error).message).toMatch(/401 .*set pagerduty\.token \(or REPRISE_PAGERDUTY_TOKEN\)/);
    expect((err as Error).message).not.toContain('secret-token-123');
    expect(fake.requests).toHaveLength(1);
  });

  it("reads notes and the resolve log entry's message", async () => {
    fake = await startPagerDutyFake({
      token: 'tok',
      history: {
        incidents,
        notes: { P0: [{ content: 'fix: x', created_at: '2026-11-01T01:00:00Z', user: { id: 'PU', summary: 'Ann' } }, { content: 42 }] },
        logEntries: {
          P0: [
            {
              type: 'resolve_log_entry',
              created_at: '2026-11-01T02:00:00Z',
              agent: { id: 'PU', summary: 'Ann' },
              channel: { type: 'api', summary: 'old resolve' },
            },
            { type: 'annotate_log_entry' },
            { type: 'resolve_log_entry', created_at: '2026-11-01T03:00:00Z', channel: { type: 'web_trigger', summary: 'Resolved: drained the queue' } },
          ],
        },
      },
    });
    const c = client(fake);
    expect(await c.notes('P0')).toEqual([{ content: 'fix: x', createdAt: '2026-11-01T01:00:00Z', user: { id: 'PU', name: 'Ann' } }]);
    expect(await c.resolve('P0')).toEqual({ message: 'Resolved: drained the queue', at: '2026-11-01T03:00:00Z' });
    expect(await c.resolve('P1')).toBeUndefined();
    const many = await startPagerDutyFake({
      token: 'tok',
      history: { incidents, notes: { P0: Array.from({ length: 250 }, (_, i) => ({ content: `note ${i}`, created_at: '2026-11-01T01:00:00Z' })) } },
    });
    const newest = await client(many).notes('P0');
    await many.close();
    expect(newest).toHaveLength(200);
    expect(newest[0]?.content).toBe('note 50');
    const missing = await c.notes('NOPE').catch((e: unknown) => e);
    expect((missing as PagerDutyReadError).status).toBe(404);
  });
});
