/**
 * `reprise import pagerduty` end to end (issue 31 item 3): the real CLI against the PagerDuty
 * stand-in (resolved incidents paged 2 at a time, their notes and log entries, a 429 with
 * Retry-After), a bare catalog remote and the GitHub REST fake. A dry run lists one fix per
 * fixing incident and writes nothing; the real run files the new entries as a PR whose branch
 * holds them; a second run files nothing; the incidents skipped are listed with the reason.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startPagerDutyFake, type PagerDutyFake } from '../fakes/pagerduty-fake.js';
import { historyIncident } from '../../src/core/import/pagerduty-plan.js';
import { git } from '../helpers/git-remote.js';
import { startImportTarget, type ImportTarget } from './helpers/import-target.js';
import { cleanup, makeTmpDir, runCli } from './helpers/spawn-bot.js';

let target: ImportTarget | undefined;
let pd: PagerDutyFake | undefined;
afterEach(async () => {
  await cleanup();
  await target?.close();
  target = undefined;
  await pd?.close();
  pd = undefined;
});

const DAY = 86_400_000;
const ago = (days: number, hours = 0): string => new Date(Date.now() - days * DAY - hours * 3_600_000).toISOString();
const ann = { id: 'PANN', type: 'user_reference', summary: 'Ann Example' };
const bob = { id: 'PBOB', type: 'user_reference', summary: 'Bob Example' };

function incident(id: string, n: number, title: string, service: string, created: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    type: 'incident',
    incident_number: n,
    title,
    status: 'resolved',
    urgency: 'high',
    created_at: created,
    last_status_change_at: new Date(Date.parse(created) + 3_600_000).toISOString(),
    html_url: `https://acme.pagerduty.com/incidents/${id}`,
    service: { id: service, type: 'service_reference', summary: service === 'PLOGS' ? 'logs' : 'api' },
    ...extra,
  };
}

const HISTORY = {
  maxLimit: 2,
  incidents: [
    incident('PDISK1', 101, 'Disk full on logs-02', 'PLOGS', ago(20)),
    incident('PDISK2', 102, 'Disk full on logs-02', 'PLOGS', ago(10)),
    incident('PDISK3', 103, 'Disk full on logs-02', 'PLOGS', ago(5)),
    incident('PAPI1', 104, 'API latency high', 'PAPI', ago(8)),
    incident('PCRON', 105, 'Cron job failed', 'PAPI', ago(7)),
    incident('PMERGED', 106, 'Disk full on logs-02', 'PLOGS', ago(5, -1), {
      resolve_reason: { type: 'merge_resolve_reason', incident: { id: 'PDISK3', type: 'incident_reference' } },
    }),
    incident('POLD', 99, 'Disk full on logs-02', 'PLOGS', ago(200)),
    { ...incident('POPEN', 107, 'API latency high', 'PAPI', ago(1)), status: 'triggered' },
  ],
  notes: {
    PDISK1: [
      { id: 'N1', content: 'looking at it', created_at: ago(20, -1), user: ann },
      { id: 'N2', content: 'Fixed: vacuumed the journal with `journalctl --vacuum-size=2G`', created_at: ago(20, -2), user: ann },
    ],
    PDISK2: [
      { id: 'N3', content: 'cause: logrotate was disabled by the last image', created_at: ago(10, -1), user: bob },
      {
        id: 'N4',
        content: '<p><b>Resolution:</b> re-enabled logrotate and ran <code>logrotate -f</code> <!channel> @here</p>',
        created_at: ago(10, -2),
        user: bob,
      },
    ],
    PDISK3: [{ id: 'N5', content: 'fix: vacuumed the journal with `journalctl --vacuum-size=2G`.', created_at: ago(5, -1), user: ann }],
    PCRON: [{ id: 'N6', content: 'no fix yet, it just went away', created_at: ago(7, -1), user: bob }],
  },
  logEntries: {
    PAPI1: [
      { type: 'trigger_log_entry', created_at: ago(8), channel: { type: 'api' } },
      { type: 'resolve_log_entry', created_at: ago(8, -1), agent: bob, channel: { type: 'api', summary: 'Rolled back api to v1.4.2' } },
    ],
    PCRON: [{ type: 'resolve_log_entry', created_at: ago(7, -1), agent: bob, channel: { type: 'website', summary: 'Resolved through the website.' } }],
  },
};

interface Listed {
  mode: string;
  read: number;
  fixes: { incident: string; triggerKey: string; fix: string; by?: string; from: string; entry: { kind: string; path?: string }; pr?: { number: number } }[];
  skipped: { id: string; reason: string }[];
  unreadable: { id: string; reason: string }[];
  pullRequests: { number: number; incidents: string[] }[];
}

function configFile(): string {
  const file = join(makeTmpDir(), 'reprise.yaml');
  // Quick retries: the 429 below says Retry-After: 1, which wins over these.
  writeFileSync(file, 'pagerduty:\n  retry_base: 10ms\n  retry_max: 2s\n  max_attempts: 3\n');
  return file;
}

describe('reprise import pagerduty', () => {
  it('dry run lists one fix per fixing incident; the run files a PR; a second run files none', { timeout: 120_000 }, async () => {
    target = await startImportTarget({ 'README.md': '# catalog\n' });
    pd = await startPagerDutyFake({ token: 'pd-read-token', history: HISTORY });
    // The first listing page is refused once with a rate limit: the import waits and goes on.
    pd.script((n) => (n === 0 ? { status: 429, retryAfter: '1' } : undefined));
    const env = { ...target.env, REPRISE_PAGERDUTY_TOKEN: 'pd-read-token', REPRISE_PAGERDUTY_API_URL: pd.apiUrl, REPRISE_CONFIG: configFile() };

    const dry = await runCli(['import', 'pagerduty', '--since', '90d', '--dry-run', '--json'], { env, process: true });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/PagerDuty rate limit \(429, Retry-After\): waiting 1s/);
    expect(target.fake.writes()).toEqual([]);
    const listed = JSON.parse(dry.stdout) as Listed;
    expect(listed.mode).toBe('dry-run');
    expect(listed.read).toBe(6);
    expect(listed.fixes.map((f) => [f.incident, f.fix, f.from, f.by])).toEqual([
      ['PDISK1', 'vacuumed the journal with `journalctl --vacuum-size=2G`', 'note', 'Ann Example'],
      ['PDISK2', 're-enabled logrotate and ran logrotate -f @channel @here', 'note', 'Bob Example'],
      ['PAPI1', 'Rolled back api to v1.4.2', 'resolve', 'Bob Example'],
    ]);
    // Keyed as the webhook keys them: the title is the alert, the service id the identity; spaces kept.
    expect(listed.fixes.find((f) => f.incident === 'PAPI1')?.triggerKey).toBe('api latency high||pagerduty_service|papi|');
    expect(new Set(listed.fixes.filter((f) => f.incident.startsWith('PDISK')).map((f) => f.entry.path)).size).toBe(1);
    const reasons = Object.fromEntries(listed.skipped.map((s) => [s.id, s.reason]));
    expect(reasons['PDISK3']).toMatch(/^duplicate: the same fix as PDISK1/);
    expect(reasons['PCRON']).toMatch(/^no fix text/);
    expect(reasons['PMERGED']).toMatch(/^merged into PDISK3/);
    // Paged 2 at a time, and only resolved incidents of the window were asked for.
    const lists = pd.requests.filter((r) => r.path.startsWith('/incidents?'));
    expect(lists.length).toBeGreaterThanOrEqual(4);
    expect(lists.every((r) => r.path.includes('statuses%5B%5D=resolved'))).toBe(true);

    const text = await runCli(['import', 'pagerduty', '--since', '90d', '--dry-run'], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('+ #104 PAPI1 API latency high → playbooks/');
    expect(text.stdout).toContain('    Fix: Rolled back api to v1.4.2 — Bob Example');
    expect(text.stdout).toMatch(/would file 3 fixes \(2 new entries, 0 to existing entries\) in 1 pull request \(3 skipped, 0 unreadable\)/);

    const only = await runCli(['import', 'pagerduty', '--since', '90d', '--service', 'PAPI', '--dry-run', '--json'], { env });
    expect(only.code, only.stderr).toBe(0);
    expect((JSON.parse(only.stdout) as Listed).fixes.map((f) => f.incident)).toEqual(['PAPI1']);

    const run = await runCli(['import', 'pagerduty', '--since', '90d', '--json'], { env });
    expect(run.code, run.stderr).toBe(0);
    const filed = JSON.parse(run.stdout) as Listed;
    expect(filed.pullRequests).toHaveLength(1);
    expect(filed.pullRequests[0]!.incidents.sort()).toEqual(['PAPI1', 'PDISK1', 'PDISK2', 'PDISK3']);
    const pulls = target.fake.pulls();
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr.labels).toContain('pagerduty-import');
    expect(pr.body).not.toMatch(/@channel|@here|<b>|<p>/);
    const paths = [...new Set(filed.fixes.map((f) => f.entry.path!))];
    const tree = git(target.remote.bare, 'ls-tree', '-r', '--name-only', pr.head).split('\n');
    for (const p of paths) expect(tree).toContain(p);
    const disk = git(target.remote.bare, 'show', `${pr.head}:${filed.fixes.find((f) => f.incident === 'PDISK1')!.entry.path!}`);
    expect(disk).toMatch(/^## What has fixed it$/m);
    expect(disk).toContain('vacuumed the journal');
    expect(disk).toContain('re-enabled logrotate');
    expect(disk).toContain('logrotate was disabled by the last image');
    expect(disk).not.toMatch(/@channel|@here|<b>/);
    expect(disk).not.toContain('Said in the incident thread');
    expect(disk).toMatch(/^- PagerDuty incident \\#\u2060101 \\\(PDISK1\\\) of \d{4}-\d{2}-\d{2}: read from its notes/m);

    const writes = target.fake.writes().length;
    const again = await runCli(['import', 'pagerduty', '--since', '90d', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout) as Listed;
    expect(second.fixes).toEqual([]);
    const already = second.skipped.filter((s) => /^already imported in PR #\d+ \(open\)$/.test(s.reason)).map((s) => s.id);
    expect(already.sort()).toEqual(['PAPI1', 'PDISK1', 'PDISK2', 'PDISK3']);
    expect(target.fake.writes()).toHaveLength(writes);
  });

  it("adds a trigger's new fix to the catalog's entry for it through a PR that edits that file", { timeout: 120_000 }, async () => {
    const raw = incident('PAPI9', 201, 'API latency high', 'PAPI', ago(3));
    const fp = historyIncident(raw)!.fp;
    const entry = [
      '---',
      'type: Playbook',
      'title: "API latency high: restart the api pods"',
      'description: What fixed API latency high.',
      'alerts: [API latency high]',
      `fingerprint: ${fp}`,
      'timestamp: 2026-10-01',
      '---',
      '## Symptom',
      '',
      'API latency high',
      '',
      '## Cause',
      '',
      'Not recorded.',
      '',
      '## Resolution',
      '',
      '> restart the api pods',
      '',
      '— from Ann Example via Slack on 2026-10-01',
      '',
    ].join('\n');
    target = await startImportTarget({ 'playbooks/api-latency.md': entry });
    pd = await startPagerDutyFake({
      token: 'pd-read-token',
      history: {
        incidents: [raw, incident('PAPI8', 200, 'API latency high', 'PAPI', ago(4))],
        notes: {
          PAPI9: [{ content: 'Root cause: a noisy neighbour on node-3\n\nfix: cordoned node-3 and moved the api pods', created_at: ago(3, -1), user: bob }],
          PAPI8: [{ content: 'fixed: restart the api pods', created_at: ago(4, -1), user: ann }],
        },
      },
    });
    const env = { ...target.env, REPRISE_PAGERDUTY_TOKEN: 'pd-read-token', REPRISE_PAGERDUTY_API_URL: pd.apiUrl, REPRISE_CONFIG: configFile() };
    const run = await runCli(['import', 'pagerduty', '--since', '30d', '--json'], { env });
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as Listed & { amended: { decision: string; number: number }[] };
    expect(out.fixes.map((f) => [f.incident, f.entry.kind])).toEqual([['PAPI9', 'catalog']]);
    expect(out.skipped.find((s) => s.id === 'PAPI8')?.reason).toBe("duplicate: the catalog's entry playbooks/api-latency.md already says this fix");
    expect(out.amended.map((a) => a.decision)).toEqual(['amend_pr']);
    const pulls = target.fake.pulls();
    expect(pulls).toHaveLength(1);
    expect(pulls[0]!.head).toBe('reprise/amend/playbooks/api-latency');
    const edited = git(target.remote.bare, 'show', `${pulls[0]!.head}:playbooks/api-latency.md`);
    expect(edited).toMatch(/^## What has fixed it$/m);
    expect(edited).toContain('cordoned node-3 and moved the api pods — from Bob Example via PagerDuty on');
    expect(edited).toContain('a noisy neighbour on node-3');
    const writes = target.fake.writes().length;
    const again = await runCli(['import', 'pagerduty', '--since', '30d', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as Listed).fixes).toEqual([]);
    expect(target.fake.writes()).toHaveLength(writes);
  });

  it("adds a later incident's fix to the entry on the PR an earlier run opened", { timeout: 120_000 }, async () => {
    target = await startImportTarget({ 'README.md': '# catalog\n' });
    const seed = {
      incidents: [incident('PAPI1', 104, 'API latency high', 'PAPI', ago(8))],
      notes: {} as Record<string, unknown[]>,
      logEntries: { PAPI1: HISTORY.logEntries.PAPI1 } as Record<string, unknown[]>,
    };
    pd = await startPagerDutyFake({ token: 'pd-read-token', history: seed });
    const env = { ...target.env, REPRISE_PAGERDUTY_TOKEN: 'pd-read-token', REPRISE_PAGERDUTY_API_URL: pd.apiUrl, REPRISE_CONFIG: configFile() };
    const first = await runCli(['import', 'pagerduty', '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(target.fake.pulls()).toHaveLength(1);
    const pr = target.fake.pulls()[0]!;
    const path = (JSON.parse(first.stdout) as Listed).fixes[0]!.entry.path!;

    seed.incidents.push(incident('PAPI2', 108, 'API latency high', 'PAPI', ago(2)));
    seed.notes['PAPI2'] = [{ id: 'N9', content: 'fix: raised the api connection pool to 64', created_at: ago(2, -1), user: ann }];
    const second = await runCli(['import', 'pagerduty', '--json'], { env });
    expect(second.code, second.stderr).toBe(0);
    const out = JSON.parse(second.stdout) as Listed & { amended: { decision: string; number: number }[] };
    expect(out.fixes.map((f) => [f.incident, f.entry.kind])).toEqual([['PAPI2', 'open-pr']]);
    expect(out.amended).toEqual([expect.objectContaining({ decision: 'pr_update', number: pr.number })]);
    expect(target.fake.pulls()).toHaveLength(1);
    const edited = git(target.remote.bare, 'show', `${pr.head}:${path}`);
    expect(edited).toMatch(/^## What has fixed it$/m);
    expect(edited).toContain('Rolled back api to v1.4.2');
    expect(edited).toContain('raised the api connection pool to 64 — from Ann Example via PagerDuty on');
    expect(
      target.fake
        .commentsOn(pr.number)
        .map((c) => c.body)
        .join('\n'),
    ).toContain('reprise:fix=pagerduty:PAPI2');

    const writes = target.fake.writes().length;
    const third = await runCli(['import', 'pagerduty', '--json'], { env });
    expect(third.code, third.stderr).toBe(0);
    expect((JSON.parse(third.stdout) as Listed).fixes).toEqual([]);
    expect(target.fake.writes()).toHaveLength(writes);
  });

  it('says how to fix a missing or refused token, and a bad window', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    const none = await runCli(['import', 'pagerduty', '--dry-run'], { env: { REPRISE_DATA_DIR: dir, REPRISE_PAGERDUTY_TOKEN: '' } });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/needs a PagerDuty REST API token .*REPRISE_PAGERDUTY_TOKEN/);
    pd = await startPagerDutyFake({ token: 'right', history: HISTORY });
    const refused = await runCli(['import', 'pagerduty', '--dry-run'], {
      env: { REPRISE_DATA_DIR: dir, REPRISE_PAGERDUTY_TOKEN: 'wrong-token-value', REPRISE_PAGERDUTY_API_URL: pd.apiUrl },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/answered 401 .*the token was refused — set pagerduty\.token \(or REPRISE_PAGERDUTY_TOKEN\)/);
    expect(refused.stderr + refused.stdout).not.toContain('wrong-token-value');
    const window = await runCli(['import', 'pagerduty', '--since', 'last tuesday', '--dry-run'], {
      env: { REPRISE_DATA_DIR: dir, REPRISE_PAGERDUTY_TOKEN: 'x' },
    });
    expect(window.code).toBe(2);
    expect(window.stderr).toMatch(/--since must be a duration back from now \(90d, 12h, 1h30m\) or an ISO date/);
    const file = await runCli(['import', 'pagerduty'], { env: { REPRISE_DATA_DIR: dir, REPRISE_PAGERDUTY_TOKEN: 'x' } });
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/filing needs a forge/);
  });
});
