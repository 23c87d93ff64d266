import { afterEach, describe, expect, it } from 'vitest';
import { grafanaOnCall } from '../../../../src/adapters/oncall/grafana-oncall.js';
import { pagerDutyOnCall } from '../../../../src/adapters/oncall/pagerduty-oncall.js';
import { startGrafanaOnCallFake, type GrafanaOnCallFake } from '../../../fakes/grafana-oncall-fake.js';
import { startPagerDutyFake, type PagerDutyFake } from '../../../fakes/pagerduty-fake.js';

const now = new Date('2026-12-02T10:00:00Z');
const TOKEN = 'pd-token-0123456789';
let pd: PagerDutyFake | undefined;
let gf: GrafanaOnCallFake | undefined;
afterEach(async () => {
  await pd?.close();
  await gf?.close();
  pd = gf = undefined;
});

describe('PagerDuty on-call provider', () => {
  async function start(): Promise<PagerDutyFake> {
    pd = await startPagerDutyFake({
      token: TOKEN,
      services: { PSVC1: 'PPOL1' },
      oncalls: {
        PPOL1: [
          { escalation_level: 2, user: { id: 'PU2', name: 'Bob Manager', email: 'bob@example.org' }, end: '2026-12-03T09:00:00Z' },
          { escalation_level: 1, user: { id: 'PU1', name: 'Ann Primary', email: 'ann@example.org' }, end: '2026-12-02T17:00:00Z' },
        ],
      },
    });
    return pd;
  }

  it('asks /oncalls for the route policy (earliest, users included) and answers the first level', async () => {
    const fake = await start();
    const p = pagerDutyOnCall({ apiUrl: fake.apiUrl, token: TOKEN, timeoutMs: 2000, policies: { default: 'PPOL1' } });
    const a = await p.whoIsOnCall({ route: 'default' }, now);
    expect(a).toEqual({
      known: true,
      people: [{ name: 'Ann Primary', email: 'ann@example.org', chat: {} }],
      until: '2026-12-02T17:00:00.000Z',
      source: 'pagerduty',
    });
    const asked = new URL(fake.requests[0]!.path, 'http://x');
    expect(asked.pathname).toBe('/oncalls');
    expect(asked.searchParams.getAll('escalation_policy_ids[]')).toEqual(['PPOL1']);
    expect(asked.searchParams.get('earliest')).toBe('true');
    expect(fake.requests[0]!.headers['authorization']).toBe(`Token token=${TOKEN}`);
  });

  it("finds the policy from the incident's service once, then remembers it", async () => {
    const fake = await start();
    const p = pagerDutyOnCall({ apiUrl: fake.apiUrl, token: TOKEN, timeoutMs: 2000, policies: {} });
    const a = await p.whoIsOnCall({ route: 'default', service: 'PSVC1' }, now);
    expect(a.known && a.people.map((x) => x.name)).toEqual(['Ann Primary']);
    await p.whoIsOnCall({ route: 'default', service: 'PSVC1' }, now);
    expect(fake.requests.map((r) => new URL(r.path, 'http://x').pathname)).toEqual(['/services/PSVC1', '/oncalls', '/oncalls']);
  });

  it('says why when there is no policy, a refused token, garbage or nobody on call', async () => {
    const fake = await start();
    const none = pagerDutyOnCall({ apiUrl: fake.apiUrl, token: TOKEN, timeoutMs: 2000, policies: {} });
    expect(await none.whoIsOnCall({ route: 'default' }, now)).toMatchObject({ known: false, reason: expect.stringMatching(/no PagerDuty escalation policy/) });
    const bad = pagerDutyOnCall({ apiUrl: fake.apiUrl, token: 'wrong-token-123456', timeoutMs: 2000, policies: { default: 'PPOL1' } });
    expect(await bad.whoIsOnCall({ route: 'default' }, now)).toEqual({ known: false, reason: 'PagerDuty answered 401', source: 'pagerduty' });
    const empty = pagerDutyOnCall({ apiUrl: fake.apiUrl, token: TOKEN, timeoutMs: 2000, policies: { default: 'PNOBODY' } });
    expect(await empty.whoIsOnCall({ route: 'default' }, now)).toMatchObject({ known: false, reason: expect.stringMatching(/nobody on call/) });
    const garbage = pagerDutyOnCall({
      apiUrl: 'http://pd.invalid',
      token: TOKEN,
      timeoutMs: 2000,
      policies: { default: 'P' },
      fetch: () => Promise.resolve(new Response('<html>@channel</html>', { status: 200 })),
    });
    expect(await garbage.whoIsOnCall({ route: 'default' }, now)).toMatchObject({ known: false, reason: 'PagerDuty answered with something that is not JSON' });
    const weird = pagerDutyOnCall({
      apiUrl: 'http://pd.invalid',
      token: TOKEN,
      timeoutMs: 2000,
      policies: { default: 'P' },
      fetch: () => Promise.resolve(new Response(JSON.stringify({ oncalls: [null, 3, { user: { name: 42 } }] }), { status: 200 })),
    });
    expect(await weird.whoIsOnCall({ route: 'default' }, now)).toMatchObject({ known: false, reason: expect.stringMatching(/nobody on call/) });
  });

  it('an unreachable API is unknown with a reason that never shows the token', async () => {
    const p = pagerDutyOnCall({
      apiUrl: 'http://pd.invalid',
      token: TOKEN,
      timeoutMs: 2000,
      policies: { default: 'P' },
      fetch: () => Promise.reject(new Error(`connect ECONNREFUSED (Authorization: Token token=${TOKEN})`)),
    });
    const a = await p.whoIsOnCall({ route: 'default' }, now);
    expect(a.known).toBe(false);
    expect(!a.known && a.reason).toMatch(/^PagerDuty unreachable: connect ECONNREFUSED/);
    expect(JSON.stringify(a)).not.toContain(TOKEN);
  });
});

describe('Grafana OnCall provider', () => {
  const GTOKEN = 'grafana-oncall-token-123';
  async function start(): Promise<GrafanaOnCallFake> {
    gf = await startGrafanaOnCallFake({
      token: GTOKEN,
      users: { U1: { username: 'ann', name: 'Ann Primary', email: 'ann@example.org' }, U2: { username: 'cy' } },
      schedules: { S1: ['U1'], S2: [] },
    });
    return gf;
  }

  it('reads on_call_now of the route schedule, then each user', async () => {
    const fake = await start();
    const p = grafanaOnCall({ apiUrl: fake.apiUrl, token: GTOKEN, timeoutMs: 2000, schedules: { default: 'S1' } });
    expect(await p.whoIsOnCall({ route: 'default' }, now)).toEqual({
      known: true,
      people: [{ name: 'Ann Primary', email: 'ann@example.org', chat: {} }],
      source: 'grafana',
    });
    expect(fake.requests.map((r) => r.path)).toEqual(['/api/v1/schedules/S1/', '/api/v1/users/U1/']);
    fake.setOnCall('S1', ['U2']);
    const next = await p.whoIsOnCall({ route: 'default' }, now);
    expect(next.known && next.people).toEqual([{ name: 'cy', chat: {} }]);
  });

  it('unknown with a reason: nobody on call, no schedule, refused, a failing user lookup', async () => {
    const fake = await start();
    const p = grafanaOnCall({ apiUrl: fake.apiUrl, token: GTOKEN, timeoutMs: 2000, schedules: { default: 'S2', pay: 'S1' } });
    expect(await p.whoIsOnCall({ route: 'default' }, now)).toMatchObject({ known: false, reason: expect.stringMatching(/nobody on call/) });
    expect(await p.whoIsOnCall({ route: 'other' }, now)).toMatchObject({ known: false, reason: expect.stringMatching(/no Grafana OnCall schedule/) });
    fake.script((n) => (n === 2 ? 500 : undefined)); // the user lookup after S1
    expect(await p.whoIsOnCall({ route: 'pay' }, now)).toEqual({ known: false, reason: 'Grafana OnCall answered 500', source: 'grafana' });
    const bad = grafanaOnCall({ apiUrl: fake.apiUrl, token: 'nope-nope-nope', timeoutMs: 2000, schedules: { default: 'S1' } });
    expect(await bad.whoIsOnCall({ route: 'default' }, now)).toMatchObject({ known: false, reason: 'Grafana OnCall answered 401' });
  });
});
