/**
 * One grooming run: plan, then (with `apply`) act on each action in turn. Dry run makes no
 * forge write at all. An action that fails (a forge error, a push refused) is recorded and
 * logged, and the run goes on with the next. Every action is appended to the audit log.
 */
import { randomUUID } from 'node:crypto';
import type { DraftBranchPort, ForgePort } from '../../ports/forge.js';
import type { Logger } from '../../ports/logger.js';
import type { CurateAudit } from './curate-audit.js';
import type { AuditRecord, SweepAction, SweepReport } from './curate-types.js';
import { readMarkers } from './sweep-markers.js';
import { planSweeps, type SweepFacts, type SweepOptions } from './plan-sweeps.js';

/** Pushes a branch with one file to the catalog remote (the git drafts adapter). */
export type BranchPusher = DraftBranchPort;

export interface RunSweepsOptions {
  forge: ForgePort;
  facts: SweepFacts;
  options?: Partial<SweepOptions>;
  apply: boolean;
  audit?: CurateAudit;
  /** Needed for retirement / revalidation PRs; without it they are skipped with a reason. */
  pusher?: BranchPusher;
  logger: Logger;
}

/** Comments unless a comment carrying the same sweep marker is already there (a retried run). */
async function commentOnce(forge: ForgePort, pr: number, body: string): Promise<string | undefined> {
  const keys = readMarkers(body, 'sweep');
  const existing = (await forge.listComments(pr)).find((c) => readMarkers(c.body, 'sweep').some((k) => keys.includes(k)));
  if (existing) return existing.url;
  return (await forge.comment(pr, body)).url;
}

async function act(a: SweepAction, forge: ForgePort, pusher: BranchPusher | undefined): Promise<string | undefined> {
  switch (a.kind) {
    case 'dedup':
    case 'stale':
    case 'suppress': {
      const url = await commentOnce(forge, a.pr, a.comment);
      await forge.addLabels(a.pr, [a.label]);
      await forge.closePullRequest(a.pr);
      return url;
    }
    case 'promote':
      await forge.addLabels(a.pr, [a.label]);
      return undefined;
    case 'contested':
      return commentOnce(forge, a.pr, a.comment);
    case 'gap':
      return (await forge.createIssue({ title: a.title, body: a.body, labels: a.labels })).url;
    case 'retire':
    case 'revalidate': {
      if (!pusher) throw new Error('no git remote to push the branch to (catalog.git.url)');
      await pusher.push({ branch: a.branch, path: a.repoPath, content: a.content, message: a.title });
      return (await forge.createPullRequest({ title: a.title, body: a.body, head: a.branch, labels: a.labels })).url;
    }
  }
}

export async function runSweeps(o: RunSweepsOptions): Promise<SweepReport> {
  const run = randomUUID();
  const mode = o.apply ? 'apply' : 'dry-run';
  const at = o.facts.now.toISOString();
  const log = o.logger.child({ component: 'curate', run, mode });
  const plan = await planSweeps(o.forge, o.facts, o.options ?? {}, log);
  const report: SweepReport = { run, mode, at, actions: [], skippedPasses: plan.skippedPasses };
  const records: AuditRecord[] = [];
  for (const a of plan.actions) {
    const base = { at: new Date().toISOString(), run, mode, kind: a.kind, target: a.target, summary: a.summary } as const;
    if (!o.apply) {
      report.actions.push({ kind: a.kind, target: a.target, summary: a.summary, outcome: 'planned' });
      records.push({ ...base, outcome: 'planned' });
      continue;
    }
    try {
      const url = await act(a, o.forge, o.pusher);
      report.actions.push({ kind: a.kind, target: a.target, summary: a.summary, outcome: 'done', ...(url ? { url } : {}) });
      records.push({ ...base, outcome: 'done', ...(url ? { url } : {}) });
      log.info({ kind: a.kind, target: a.target, url }, `curate: ${a.summary}`);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      report.actions.push({ kind: a.kind, target: a.target, summary: a.summary, outcome: 'failed', error });
      records.push({ ...base, outcome: 'failed', error });
      log.warn({ kind: a.kind, target: a.target, err: error }, `curate: action failed, skipped; the run goes on: ${a.summary}`);
    }
  }
  for (const s of plan.skippedPasses) log.info({ pass: s.pass }, `curate: pass skipped: ${s.reason}`);
  records.push({
    at: new Date().toISOString(),
    run,
    mode,
    kind: 'run',
    target: '-',
    summary: `${plan.actions.length} action(s) ${o.apply ? 'taken' : 'planned'}${plan.skippedPasses.length ? `; skipped passes: ${plan.skippedPasses.map((s) => s.pass).join(', ')}` : ''}`,
    outcome: 'done',
  });
  await o.audit?.append(records);
  log.info({ actions: plan.actions.length, failed: report.actions.filter((a) => a.outcome === 'failed').length }, `curate: ${mode} run finished`);
  return report;
}
