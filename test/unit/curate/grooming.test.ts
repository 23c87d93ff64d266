/**
 * Grooming sweeps (issue 6 item 6) against the real Octokit adapter and the GitHub REST fake,
 * and real git for the retirement / revalidation branches: a dry run makes no write call and
 * lists what it would do; `apply` acts; a second run does nothing; a forge error on one item
 * is skipped with a log line and the run goes on.
 */
import { LedgerReader } from '../../../src/core/ledger/ledger-reader.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GitDrafts } from '../../../src/adapters/git/git-drafts.js';
import { GitHubForge } from '../../../src/adapters/github/github-forge.js';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { parseEntry } from '../../../src/core/catalog/parse-entry.js';
import { CurateAudit } from '../../../src/core/curate/curate-audit.js';
import { setFrontmatterKey } from '../../../src/core/curate/frontmatter-edit.js';
import { defuseMarkers, marker, readMarker } from '../../../src/core/curate/sweep-markers.js';
import { jaccard, type SweepFacts } from '../../../src/core/curate/plan-sweeps.js';
import { rejectedFingerprints } from '../../../src/core/curate/rejections.js';
import { runSweeps } from '../../../src/core/curate/run-sweeps.js';
import { replayEvents } from '../../../src/core/ledger/ledger-state.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import type { Entry } from '../../../src/core/types.js';
import type { Logger } from '../../../src/ports/logger.js';
import { silentLogger } from '../../../src/ports/logger.js';
import { createBareCatalogRepo, type BareCatalogRepo } from '../../fakes/bare-catalog-repo.js';
import { startGitHubFake, type GitHubFake } from '../../fakes/github-fake.js';
import { incidentEntry } from '../../helpers/git-remote.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const DAY = 86_400_000;
const ago = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();
const fpMarker = (fp: string) => marker('dup', fp);

let fake: GitHubFake | undefined;
let repo: BareCatalogRepo | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await repo?.cleanup();
  repo = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A logger that keeps its warn lines. */
function recordingLogger(): Logger & { warns: string[] } {
  const warns: string[] = [];
  const l: Logger & { warns: string[] } = {
    warns,
    debug() {},
    info() {},
    warn: (o: object | string, m?: string) => void warns.push(`${m ?? ''} ${JSON.stringify(o)}`),
    error() {},
    child: () => l,
  };
  return l;
}

const BAD = incidentEntry({ title: 'cache node flaps after a kernel upgrade', resource: 'prod/cache', alert: 'CacheFlapping' });
const GOOD = incidentEntry({ title: 'checkout api oom after a cache change', resource: 'payments/checkout-api', alert: 'KubePodCrashLooping' });

function entry(id: string, text: string): Entry {
  const e = parseEntry(id, text).entry;
  if (!e) throw new Error(`fixture ${id} does not parse`);
  return e;
}

/** The ledger behind the scenario. */
function ledger() {
  const ev: LedgerEvent[] = [];
  const open = (fingerprint: string, triggerKey: string, dupFingerprint: string, at: string, extra: Partial<Extract<LedgerEvent, { type: 'open' }>> = {}) =>
    ev.push({ type: 'open', fingerprint, triggerKey, kind: 'fresh', dupFingerprint, verdict: 'inconclusive', resolvable: true, at, ...extra } as LedgerEvent);
  // fp E: its incident resolved, and on-call voted 👎 on it.
  open('a1', 'alert|payments|deployment|checkout|', 'fpE', ago(3));
  ev.push({ type: 'resolve', fingerprint: 'a1', at: ago(2.9) } as LedgerEvent);
  ev.push({ type: 'feedback', triggerKey: 'alert|payments|deployment|checkout|', user: 'U1', vote: 'down', at: ago(2.8) } as LedgerEvent);
  // A trigger that keeps firing with nothing in the catalog: a gap.
  for (let i = 0; i < 3; i++) open(`g${i}`, 'diskfull|orders|statefulset|db|', 'fpGap', ago(10 - i));
  // A rejected finding (fp D) that recurred 3 times: an escalation gap.
  for (let i = 0; i < 3; i++) open(`d${i}`, 'certexpiry|edge|deployment|gw|', 'fpD', ago(9 - i));
  // incidents/bad.md recalled 3 times, never resolved, long ago: factor 1/4.
  for (let i = 0; i < 3; i++)
    open(`b${i}`, 'cacheflapping|prod|deployment|cache|', 'fpBad', ago(20 + i), {
      kind: 'recall',
      entry: 'incidents/bad.md',
      answerKind: 'incident',
      verdict: 'action_suggested',
    });
  // incidents/good.md recalled and resolved.
  open('ok1', 'kubepodcrashlooping|payments|deployment|checkout-api|', 'fpGood', ago(5), {
    kind: 'recall',
    entry: 'incidents/good.md',
    answerKind: 'incident',
    verdict: 'action_suggested',
  });
  ev.push({ type: 'resolve', fingerprint: 'ok1', at: ago(4.9) } as LedgerEvent);
  const state = replayEvents(ev);
  return new LedgerReader(() => state, { resolveWindowMs: DAY });
}

async function scenario() {
  fake = await startGitHubFake({ now: () => NOW });
  const f = fake;
  const ours = (title: string, fp: string | undefined, o: Partial<Parameters<GitHubFake['addPull']>[0]> = {}) =>
    f.addPull({
      title,
      body: `Drafted by Reprise.\n\n${fp ? fpMarker(fp) : ''}`,
      head: `reprise/kb/${title.toLowerCase().replace(/[^a-z]+/g, '-')}`,
      labels: ['reprise'],
      createdAt: ago(5),
      updatedAt: ago(1),
      ...o,
    });
  const p = {
    original: ours('KB: checkout-api crash loop after the cache change', 'fpA'),
    dupFp: ours('KB: checkout api restarts (reworded by the model)', 'fpA'),
    legacy: ours('KB: disk full on orders db binlogs', undefined),
    legacyDup: ours('KB: Disk full on orders db binlogs', undefined),
    stale: ours('KB: ingress 502 after buffer change', 'fpB', { updatedAt: ago(60) }),
    staleButLabelled: ours('KB: kafka under-replicated partitions', 'fpC', { updatedAt: ago(60), labels: ['reprise', 'team-data'] }),
    rejected: ours('KB: cert expiry on the gateway', 'fpD', { state: 'closed', labels: ['reprise', 'wontfix'], closedAt: ago(8) }),
    redraft: ours('KB: gateway TLS certificate expired', 'fpD'),
    resolved: ours('KB: checkout deployment memory limit', 'fpE'),
    sweptBefore: ours('KB: redis evictions', 'fpF', { state: 'closed', labels: ['reprise', 'stale'] }),
    redraftOfSwept: ours('KB: redis evicting sessions', 'fpF'),
    human: f.addPull({ title: 'Fix typo in README', body: 'typo', head: 'feature/typo', createdAt: ago(90), updatedAt: ago(90) }),
  };
  repo = await createBareCatalogRepo({ 'incidents/bad.md': BAD, 'incidents/good.md': GOOD });
  const work = mkdtempSync(join(tmpdir(), 'reprise-drafts-'));
  dirs.push(work);
  const pusher = new GitDrafts({ remoteUrl: repo.url, workDir: join(work, 'w'), logger: silentLogger });
  const facts: SweepFacts = {
    now: NOW,
    ledger: ledger(),
    entries: [entry('incidents/bad.md', BAD), entry('incidents/good.md', GOOD)],
    readEntry: async (id) => (id === 'incidents/bad.md' ? BAD : id === 'incidents/good.md' ? GOOD : undefined),
  };
  const forge = new GitHubForge({
    repo: 'acme/kb',
    token: 'test-token',
    baseUrl: f.url,
    logger: silentLogger,
    delayUnitMs: 1,
    writeSpacingMs: 0,
    now: () => NOW,
  });
  return { fake: f, p, pusher, facts, forge };
}

describe('grooming sweeps', () => {
  it('dry run: no write call, every pass listed; --apply acts; a second run does nothing', { timeout: 60_000 }, async () => {
    const { fake: f, p, pusher, facts, forge } = await scenario();
    const store = createStore('memory://', '');
    const audit = new CurateAudit(store);

    const dry = await runSweeps({ forge, facts, apply: false, audit, pusher, logger: silentLogger });
    expect(f.writes()).toEqual([]);
    expect(await repo!.branches()).toEqual(['main']);
    const planned = dry.actions.map((a) => `${a.kind} ${a.target}`).sort();
    expect(planned).toEqual(
      [
        `dedup #${p.dupFp.number}`,
        `dedup #${p.legacyDup.number}`,
        `suppress #${p.redraft.number}`,
        `stale #${p.stale.number}`,
        `promote #${p.resolved.number}`,
        `contested #${p.resolved.number}`,
        'gap diskfull|orders|statefulset|db|',
        'gap certexpiry|edge|deployment|gw|',
        'retire incidents/bad.md',
        'revalidate incidents/good.md',
      ].sort(),
    );
    expect(dry.actions.every((a) => a.outcome === 'planned')).toBe(true);
    expect(dry.actions.find((a) => a.kind === 'dedup' && a.target === `#${p.dupFp.number}`)!.summary).toContain(`duplicate of #${p.original.number}`);

    const applied = await runSweeps({ forge, facts, apply: true, audit, pusher, logger: silentLogger });
    expect(applied.actions.filter((a) => a.outcome !== 'done')).toEqual([]);
    expect(applied.actions).toHaveLength(10);
    // Duplicates, the stale PR and the re-draft are closed with a back-reference and a sweep label.
    for (const [n, label, refText] of [
      [p.dupFp.number, 'duplicate', `#${p.original.number}`],
      [p.legacyDup.number, 'duplicate', `#${p.legacy.number}`],
      [p.redraft.number, 'suppressed', `#${p.rejected.number}`],
      [p.stale.number, 'stale', 'no activity for 60 days'],
    ] as const) {
      const it = f.items.get(n)!;
      expect(it.state, `#${n}`).toBe('closed');
      expect(it.merged).toBe(false);
      expect(it.labels).toContain(label);
      expect(
        f
          .commentsOn(n)
          .map((c) => c.body)
          .join('\n'),
      ).toContain(refText);
    }
    for (const kept of [p.original, p.legacy, p.staleButLabelled, p.resolved, p.redraftOfSwept, p.human])
      expect(f.items.get(kept.number)!.state, kept.title).toBe('open');
    expect(f.items.get(p.resolved.number)!.labels).toContain('ready-to-merge');
    expect(
      f
        .commentsOn(p.resolved.number)
        .map((c) => c.body)
        .join('\n'),
    ).toMatch(/Contested: on-call holds 1 standing 👎/);
    const gaps = f.issues().filter((i) => i.labels.includes('knowledge-gap'));
    expect(gaps.map((i) => readMarker(i.body, 'gap')).sort()).toEqual(['certexpiry|edge|deployment|gw|', 'diskfull|orders|statefulset|db|']);
    expect(gaps.find((i) => i.body.includes('certexpiry'))!.body).toContain(`closed unmerged in #${p.rejected.number}`);
    // Retirement and revalidation: a branch on the remote with a one-line edit, and a PR.
    const retire = f.pulls().find((x) => x.head === 'reprise/retire/incidents-bad')!;
    expect(retire.title).toBe('KB: retire cache node flaps after a kernel upgrade');
    expect(readMarker(retire.body, 'retire')).toBe('incidents/bad.md');
    expect(await repo!.show('reprise/retire/incidents-bad', 'incidents/bad.md')).toBe(setFrontmatterKey(BAD, 'status', 'retired'));
    const reval = await repo!.show('reprise/revalidate/incidents-good', 'incidents/good.md');
    expect(reval).toContain(`last_validated: ${ago(4.9).slice(0, 10)}`);
    expect(reval!.split('\n').length).toBe(GOOD.split('\n').length + 1);
    expect(await repo!.show('main', 'incidents/bad.md')).toBe(BAD);

    // Second run: nothing to do, and no write at all.
    const writes = f.writes().length;
    const again = await runSweeps({ forge, facts, apply: true, audit, pusher, logger: silentLogger });
    expect(again.actions).toEqual([]);
    expect(f.writes().length).toBe(writes);

    // The audit log has every planned and taken action, then the empty run, in a sound chain.
    const log = await audit.read();
    const lines = log.filter((r): r is Exclude<typeof r, { corrupt: string }> => !('corrupt' in r));
    expect(lines.filter((r) => r.outcome === 'planned')).toHaveLength(10);
    expect(lines.filter((r) => r.mode === 'apply' && r.outcome === 'done' && r.kind !== 'run')).toHaveLength(10);
    expect(lines.filter((r) => r.kind === 'run')).toHaveLength(3);
    expect(await audit.verify()).toBeUndefined();
  });

  it('a human closing a retirement PR unmerged is never re-asked; sweeps never close retire/revalidate PRs', { timeout: 60_000 }, async () => {
    const { fake: f, pusher, facts, forge } = await scenario();
    await runSweeps({ forge, facts, apply: true, pusher, logger: silentLogger });
    const retire = f.pulls().find((x) => x.head === 'reprise/retire/incidents-bad')!;
    const reval = f.pulls().find((x) => x.head === 'reprise/revalidate/incidents-good')!;
    f.closeItem(retire.number);
    // Long after: the revalidate PR is stale by date, but sweeps never close it.
    const later = { ...facts, now: new Date(NOW.getTime() + 90 * DAY) };
    const r = await runSweeps({ forge, facts: later, apply: false, pusher, logger: silentLogger });
    expect(r.actions.filter((a) => a.target === `#${reval.number}` || a.kind === 'retire' || a.kind === 'revalidate')).toEqual([]);
    expect(rejectedFingerprints(await forge.listPullRequests('closed')).has('fpD')).toBe(true);
    expect(rejectedFingerprints(await forge.listPullRequests('closed')).has('fpF')).toBe(false);
  });

  it('forge errors on one item are skipped with a log line; the run goes on and a later run finishes the job', { timeout: 60_000 }, async () => {
    const { fake: f, p, pusher, facts, forge } = await scenario();
    const logger = recordingLogger();
    // The comment on the fingerprint duplicate fails on every one of the adapter's 4 attempts (500); labels on the resolved PR get a 403 rate limit far off.
    f.fail({ status: 500, method: 'POST', path: new RegExp(`/issues/${p.dupFp.number}/comments$`), times: 4 });
    f.fail({
      status: 403,
      method: 'POST',
      path: new RegExp(`/issues/${p.resolved.number}/labels$`),
      times: 1,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(NOW.getTime() / 1000) + 3600) },
    });
    const r = await runSweeps({ forge, facts, apply: true, pusher, logger });
    const failed = r.actions
      .filter((a) => a.outcome === 'failed')
      .map((a) => `${a.kind} ${a.target}`)
      .sort();
    expect(failed).toEqual([`dedup #${p.dupFp.number}`, `promote #${p.resolved.number}`]);
    expect(r.actions.filter((a) => a.outcome === 'done')).toHaveLength(8);
    expect(logger.warns.filter((w) => w.includes('action failed, skipped'))).toHaveLength(2);
    expect(f.items.get(p.dupFp.number)!.state).toBe('open');
    expect(f.items.get(p.legacyDup.number)!.state).toBe('closed');

    const retry = await runSweeps({ forge, facts, apply: true, pusher, logger });
    expect(retry.actions.map((a) => `${a.kind} ${a.target} ${a.outcome}`).sort()).toEqual([
      `dedup #${p.dupFp.number} done`,
      `promote #${p.resolved.number} done`,
    ]);
    expect(f.items.get(p.dupFp.number)!.state).toBe('closed');
    expect((await runSweeps({ forge, facts, apply: true, pusher, logger })).actions).toEqual([]);
  });

  it('a failing PR listing fails the run (nothing half-done); without git the entry passes are skipped with the reason', { timeout: 30_000 }, async () => {
    const { fake: f, facts, forge } = await scenario();
    f.fail({ status: 401, method: 'GET', path: /\/pulls$/, times: 1 });
    await expect(runSweeps({ forge, facts, apply: true, logger: silentLogger })).rejects.toThrow();
    expect(f.writes()).toEqual([]);
    const noGit = await runSweeps({ forge, facts: { ...facts, readEntry: undefined }, apply: false, logger: silentLogger });
    expect(noGit.skippedPasses.map((s) => s.pass)).toEqual(['retire/revalidate']);
    expect(noGit.actions.some((a) => a.kind === 'retire')).toBe(false);
  });
});

describe('curation helpers', () => {
  it('markers round-trip, cannot be forged by quoted text, and titles compare by words', () => {
    const hostile = 'x --> <!-- reprise:fingerprint=evil -->';
    const m = marker('gap', hostile);
    expect(readMarker(`body ${m}`, 'gap')).toBe(hostile);
    expect(readMarker(defuseMarkers(hostile), 'dup')).toBeUndefined();
    expect(jaccard('KB: Disk full on orders-db', 'KB: disk full on orders db')).toBe(1);
    expect(jaccard('KB: disk full on orders db', 'KB: disk full on billing db')).toBeCloseTo(4 / 6, 5);
    expect(jaccard('KB: a b c', 'KB: x y z')).toBe(0);
  });

  it('frontmatter edits touch one line', () => {
    const text = '---\ntype: Incident\nstatus: active\ntags:\n  - a\n---\nbody\n';
    expect(setFrontmatterKey(text, 'status', 'retired')).toBe('---\ntype: Incident\nstatus: retired\ntags:\n  - a\n---\nbody\n');
    expect(setFrontmatterKey(text, 'last_validated', '2026-05-01')).toBe(
      '---\ntype: Incident\nstatus: active\ntags:\n  - a\nlast_validated: 2026-05-01\n---\nbody\n',
    );
    expect(setFrontmatterKey('no frontmatter', 'status', 'retired')).toBeUndefined();
    expect(setFrontmatterKey(text, 'status', 'x\ny: z')).toBeUndefined();
  });
});
