/**
 * `reprise oncall [ROUTE]` (issue 32): who is on call for a route from the config — the rotation,
 * and PagerDuty's /oncalls on its stand-in — as the cards say it; exit 1 when nobody could be
 * named (why said), 2 when nothing is configured.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startPagerDutyFake, type PagerDutyFake } from '../fakes/pagerduty-fake.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { writeConfig } from './helpers/chat-e2e.js';
import { makeTmpDir } from './helpers/spawn-bot.js';

const TOKEN = 'pd-rest-token-0123456789';
let pd: PagerDutyFake | undefined;
afterEach(async () => {
  await pd?.close();
  pd = undefined;
});

async function oncall(args: string[], yaml: string, env: Record<string, string> = {}) {
  const dir = makeTmpDir();
  const run = runInProcess(['oncall', ...args, '--config', writeConfig(dir, yaml)], { env: { PATH: process.env['PATH'] ?? '', ...env }, cwd: dir });
  return { status: await run.status, out: run.stdout(), err: run.stderr() };
}

describe('reprise oncall', () => {
  it('names the rotation person for the default route and a PagerDuty person for a named one', async () => {
    const rest = (pd = await startPagerDutyFake({
      token: TOKEN,
      oncalls: { PPAY: [{ escalation_level: 1, user: { id: 'PU1', name: 'Pat Payments', email: 'pat@example.org' }, end: '2099-01-01T00:00:00Z' }] },
    }));
    const yaml = `oncall:
  rotation: { people: [ann, bob], every: daily, start: "2020-01-01" }
  people: [{ name: ann, email: ann@example.org }, { name: bob, email: bob@example.org }]
  routes:
    - { name: payments, match: { namespace: payments }, pagerduty: { escalation_policy: PPAY } }
`;
    const env = { REPRISE_PAGERDUTY_TOKEN: TOKEN, REPRISE_PAGERDUTY_FROM: 'bot@example.org', REPRISE_PAGERDUTY_API_URL: rest.apiUrl };
    const def = await oncall([], yaml, env);
    expect(def.status, def.err).toBe(0);
    expect(def.out).toMatch(
      /^default: 📟 on call: (ann|bob) \(rotation · until (\d{4}-\d\d-\d\d )?09:00 UTC\)\n {2}(ann <ann@example.org>|bob <bob@example.org>)\n$/,
    );
    const pay = await oncall(['payments', '--json'], yaml, env);
    expect(pay.status, pay.err).toBe(0);
    expect(JSON.parse(pay.out)).toMatchObject({
      route: 'payments',
      known: true,
      source: 'pagerduty',
      people: [{ name: 'Pat Payments', email: 'pat@example.org' }],
    });
  });

  it('exit 1 with why when nobody can be named; 2 when no source is configured', async () => {
    const unknown = await oncall(['nope'], 'oncall:\n  rotation: { people: [ann], start: "2020-01-01" }\n');
    expect(unknown.status).toBe(1);
    expect(unknown.out).toBe('nope: 📟 on call: unknown (no on-call route named nope)\n');
    const none = await oncall([], 'log: { level: error }\n');
    expect(none.status).toBe(2);
    expect(none.err).toContain('no on-call source is configured');
  });
});
