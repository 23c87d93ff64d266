/**
 * Grooming sweeps, planned (SPEC §10, issue 6 item 6): reads the forge (open and closed PRs,
 * knowledge-gap issues) and the ledger, and lists what should be done. Nothing is written here
 * — a dry run is this plan, printed. Every decision is derived from the forge's own record
 * (hidden markers, labels, open/closed/merged) and the ledger, so re-running after `--apply`
 * plans nothing.
 */
import type { ForgePort, ForgePullRequest } from '../../ports/forge.js';
import type { Logger } from '../../ports/logger.js';
import type { LedgerReader } from '../ledger/ledger-reader.js';
import { defuseMarkers, marker, readMarker, readMarkers } from './sweep-markers.js';
import type { CloseAction, ContestedAction, EntryAction, GapAction, PromoteAction, SweepAction } from './curate-types.js';
import { setFrontmatterKey } from './frontmatter-edit.js';
import { isReprisePr, rejectedFingerprints } from './rejections.js';
import type { Entry } from '../types.js';

export interface SweepOptions {
  /** A bot PR with no activity this long is closed (0 = never). */
  staleAfterMs: number;
  /** Jaccard similarity of title words at which two markerless PRs are duplicates. */
  titleSimilarity: number;
  /** Opens of an unanswered trigger (or of a rejected fingerprint) before a knowledge-gap issue. */
  recurrenceThreshold: number;
  /** The outcome gate's floor: retirement below it, revalidation at or above it. */
  outcomeFloor: number;
  /** Observations an entry needs before it can be proposed for retirement. */
  minObservations: number;
  /** A revalidation must move `last_validated` forward by at least this much. */
  revalidateMinIntervalMs: number;
  /** Revalidation PRs awaiting review at once, at most. */
  revalidateMaxOpen: number;
  retirement: boolean;
  revalidation: boolean;
  /** Labels Reprise itself puts on PRs; any other label is a human's and protects the PR from closing. */
  botLabels: readonly string[];
  readyLabel: string;
  gapLabel: string;
}

export const DEFAULT_SWEEP_OPTIONS: SweepOptions = {
  staleAfterMs: 30 * 86_400_000,
  titleSimilarity: 0.8,
  recurrenceThreshold: 3,
  outcomeFloor: 0.5,
  minObservations: 3,
  revalidateMinIntervalMs: 720 * 3_600_000,
  revalidateMaxOpen: 5,
  retirement: true,
  revalidation: true,
  botLabels: ['reprise', 'kb-draft', 'kb', 'ready-to-merge', 'knowledge-gap', 'retire', 'revalidate', 'duplicate', 'stale', 'suppressed'],
  readyLabel: 'ready-to-merge',
  gapLabel: 'knowledge-gap',
};

export interface SweepFacts {
  now: Date;
  /** What the sweeps read of the ledger (track records conclude after its resolve window). */
  ledger: Pick<LedgerReader, 'dupStats' | 'occurrences' | 'triggerKeys' | 'trackRecord'>;
  /** The served catalog's entries. */
  entries: readonly Entry[];
  /** An entry file's text as on the base branch (the served clone); undefined when unreadable. */
  readEntry?: (id: string) => Promise<string | undefined>;
  /** The catalog's folder inside the repository (`''` = root). */
  catalogPath?: string;
}

export interface SweepPlan {
  actions: SweepAction[];
  skippedPasses: Array<{ pass: string; reason: string }>;
}

const words = (title: string): Set<string> =>
  new Set(
    title
      .toLowerCase()
      .replace(/^kb:\s*/, '')
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 1),
  );

export function jaccard(a: string, b: string): number {
  const x = words(a);
  const y = words(b);
  if (x.size === 0 && y.size === 0) return 0;
  let both = 0;
  for (const w of x) if (y.has(w)) both++;
  return both / (x.size + y.size - both);
}

const ref = (pr: ForgePullRequest): string => `#${pr.number}`;
const isEntryPr = (pr: ForgePullRequest): boolean => readMarker(pr.body, 'retire') !== undefined || readMarker(pr.body, 'revalidate') !== undefined;
const slug = (id: string): string =>
  id
    .replace(/\.md$/i, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80) || 'entry';

/** The sweep marker a close/contested comment carries. */
export function sweepMarker(kind: string, key: string): string {
  return marker('sweep', `${kind}:${key}`);
}

/**
 * Plans every pass. Forge reads that fail for the whole run (listing PRs) throw; a read for one
 * item (its comments) that fails skips that item with a log line.
 * @throws ForgeError when the pull requests cannot be listed.
 */
export async function planSweeps(forge: ForgePort, facts: SweepFacts, options: Partial<SweepOptions>, logger: Logger): Promise<SweepPlan> {
  const o = { ...DEFAULT_SWEEP_OPTIONS, ...options };
  const open = (await forge.listPullRequests('open')).sort((a, b) => a.number - b.number);
  const closed = await forge.listPullRequests('closed');
  const actions: SweepAction[] = [];
  const skippedPasses: SweepPlan['skippedPasses'] = [];
  const humanLabelled = (pr: ForgePullRequest): boolean => pr.labels.some((l) => !o.botLabels.includes(l));
  const closing = new Set<number>();

  // ── Dedup: fingerprint first (both carry one → duplicates iff equal), else title similarity.
  const ours = open.filter((pr) => isReprisePr(pr) && !isEntryPr(pr));
  const kept: ForgePullRequest[] = [];
  for (const pr of ours) {
    const fp = readMarker(pr.body, 'dup');
    const original = kept.find((k) => {
      const kfp = readMarker(k.body, 'dup');
      return fp !== undefined && kfp !== undefined ? fp === kfp : jaccard(k.title, pr.title) >= o.titleSimilarity;
    });
    if (!original || humanLabelled(pr)) {
      kept.push(pr);
      continue;
    }
    const why = fp !== undefined && readMarker(original.body, 'dup') === fp ? 'the same finding fingerprint' : 'a near-identical title';
    const a: CloseAction = {
      kind: 'dedup',
      target: ref(pr),
      pr: pr.number,
      ref: original.number,
      label: 'duplicate',
      summary: `close ${ref(pr)} as a duplicate of ${ref(original)} (${why})`,
      comment: `Closing as a duplicate of #${original.number} (${why}); the discussion continues there.\n\n${sweepMarker('dedup', String(pr.number))}`,
    };
    actions.push(a);
    closing.add(pr.number);
  }

  // ── Suppress: a re-draft of a finding a human already rejected.
  const rejected = rejectedFingerprints(closed);
  for (const pr of ours) {
    if (closing.has(pr.number) || humanLabelled(pr)) continue;
    const fp = readMarker(pr.body, 'dup');
    const no = fp === undefined ? undefined : rejected.get(fp);
    if (!no || no.number === pr.number) continue;
    const label = no.labels.find((l) => l === 'wontfix' || l === 'not-kb-worthy');
    actions.push({
      kind: 'suppress',
      target: ref(pr),
      pr: pr.number,
      ref: no.number,
      label: 'suppressed',
      summary: `close ${ref(pr)}: it re-drafts what a human closed unmerged in ${ref(no)}${label ? ` (${label})` : ''}`,
      comment: `Closing: this re-drafts the finding a human closed without merging in #${no.number}${label ? ` (labelled ${label})` : ''}. Reprise does not ask again; if it keeps recurring, a knowledge-gap issue will say so.\n\n${sweepMarker('suppress', String(pr.number))}`,
    });
    closing.add(pr.number);
  }

  // ── Stale: no forge activity for stale_after, no human label.
  if (o.staleAfterMs > 0) {
    for (const pr of ours) {
      if (closing.has(pr.number) || humanLabelled(pr)) continue;
      const idle = facts.now.getTime() - Date.parse(pr.updatedAt);
      if (!(idle > o.staleAfterMs)) continue;
      const days = Math.floor(idle / 86_400_000);
      const fp = readMarker(pr.body, 'dup');
      const trigger = fp === undefined ? undefined : facts.ledger.dupStats(fp).triggerKey;
      actions.push({
        kind: 'stale',
        target: ref(pr),
        pr: pr.number,
        label: 'stale',
        summary: `close ${ref(pr)}: no activity for ${days} days`,
        comment: `Closing as stale: no activity for ${days} days and no reviewer label. ${trigger ? `The finding stays recorded for trigger \`${defuseMarkers(trigger)}\`; a` : 'A'} new occurrence will be drafted again. Add any label to keep a PR open.\n\n${sweepMarker('stale', String(pr.number))}`,
      });
      closing.add(pr.number);
    }
  }

  // ── Promote / contested: ledger-backed, fingerprint first.
  for (const pr of ours) {
    if (closing.has(pr.number)) continue;
    const fp = readMarker(pr.body, 'dup');
    if (fp === undefined) continue;
    const d = facts.ledger.dupStats(fp);
    if (d.resolved > 0 && !pr.labels.includes(o.readyLabel)) {
      const a: PromoteAction = {
        kind: 'promote',
        target: ref(pr),
        pr: pr.number,
        fingerprint: fp,
        label: o.readyLabel,
        summary: `label ${ref(pr)} ${o.readyLabel}: its incident resolved (${d.resolved}×)`,
      };
      actions.push(a);
    }
    const trigger = d.triggerKey;
    if (trigger === undefined) continue;
    const down = facts.ledger.occurrences(trigger).down;
    if (down <= 0) continue;
    let comments;
    try {
      comments = await forge.listComments(pr.number);
    } catch (err) {
      logger.warn({ pr: pr.number, err: (err as Error).message }, 'curate: cannot read the comments of a PR; its contested check is skipped this run');
      continue;
    }
    const key = `contested:${trigger}`;
    if (comments.some((c) => readMarkers(c.body, 'sweep').includes(key))) continue;
    const a: ContestedAction = {
      kind: 'contested',
      target: ref(pr),
      pr: pr.number,
      triggerKey: trigger,
      summary: `warn on ${ref(pr)}: its finding is contested (${down} 👎 on ${trigger})`,
      comment: `⚠️ Contested: on-call holds ${down} standing 👎 on the investigation behind this entry (trigger \`${defuseMarkers(trigger)}\`). Check the finding before merging.\n\n${marker('sweep', key)}`,
    };
    actions.push(a);
  }

  // ── Knowledge gaps: one issue per trigger that keeps recurring with no knowledge behind it.
  try {
    actions.push(...(await planGaps(forge, facts, o, open, closed, rejected)));
  } catch (err) {
    skippedPasses.push({ pass: 'gap', reason: `cannot list ${o.gapLabel} issues: ${(err as Error).message}` });
  }

  // ── Retirement and revalidation: PRs with a one-line frontmatter edit.
  if (o.retirement || o.revalidation) {
    if (!facts.readEntry) skippedPasses.push({ pass: 'retire/revalidate', reason: 'needs the catalog from git (catalog.git.url) to push a branch' });
    else actions.push(...(await planEntryPrs(facts, o, open, closed, logger)));
  }
  return { actions, skippedPasses };
}

async function planGaps(
  forge: ForgePort,
  facts: SweepFacts,
  o: SweepOptions,
  open: readonly ForgePullRequest[],
  _closed: readonly ForgePullRequest[],
  rejected: Map<string, ForgePullRequest>,
): Promise<GapAction[]> {
  const issues = await forge.listIssues('all', [o.gapLabel]);
  const filed = new Set(issues.flatMap((i) => readMarkers(i.body, 'gap')));
  const drafting = new Set(open.flatMap((pr) => readMarkers(pr.body, 'dup')));
  const out: GapAction[] = [];
  for (const triggerKey of facts.ledger.triggerKeys()) {
    const t = facts.ledger.occurrences(triggerKey);
    if (t.count < o.recurrenceThreshold || filed.has(triggerKey)) continue;
    const fp = t.newestOpen?.dupFingerprint;
    const no = fp === undefined ? undefined : rejected.get(fp);
    if (no) {
      // A human said no: count its recurrences silently, escalate once past the threshold.
      const opens = facts.ledger.dupStats(fp!).opens;
      if (opens < o.recurrenceThreshold) continue;
      out.push(gap(triggerKey, opens, `closed unmerged in #${no.number} (${no.url}) but has recurred ${opens} times — reconsider?`, o));
      continue;
    }
    if (t.lastKbLink !== undefined) continue; // answered from the KB, or a draft was filed
    if (fp !== undefined && drafting.has(fp)) continue;
    out.push(gap(triggerKey, t.count, `fired ${t.count} times (last ${t.lastSeen ?? '?'}) and the catalog has no answer for it; ${t.resolved} resolved.`, o));
  }
  return out;
}

function gap(triggerKey: string, count: number, why: string, o: SweepOptions): GapAction {
  const shown = defuseMarkers(triggerKey);
  return {
    kind: 'gap',
    target: triggerKey,
    count,
    title: `Knowledge gap: ${shown.slice(0, 180)}`,
    body: `Trigger \`${shown}\` ${why}\n\nA catalog entry (Incident or Playbook) covering it would let the next firing be answered at once.\n\n${marker('gap', triggerKey)}`,
    labels: [o.gapLabel],
    summary: `open a knowledge-gap issue for ${triggerKey} (${count} occurrences)`,
  };
}

async function planEntryPrs(
  facts: SweepFacts,
  o: SweepOptions,
  open: readonly ForgePullRequest[],
  closed: readonly ForgePullRequest[],
  logger: Logger,
): Promise<EntryAction[]> {
  const out: EntryAction[] = [];
  const vetoed = (kind: 'retire' | 'revalidate'): Set<string> =>
    new Set([...open, ...closed.filter((pr) => !pr.merged)].flatMap((pr) => readMarkers(pr.body, kind)));
  const noRetire = vetoed('retire');
  const noRevalidate = vetoed('revalidate');
  let revalidateOpen = open.filter((pr) => readMarker(pr.body, 'revalidate') !== undefined).length;
  const prefix = facts.catalogPath ? `${facts.catalogPath.replace(/\/+$/, '')}/` : '';
  for (const e of facts.entries) {
    if (e.status !== 'active') continue;
    const kind = e.type === 'Incident' ? 'incident' : 'runbook';
    const tr = facts.ledger.trackRecord(e.id, kind, facts.now);
    const observations = kind === 'incident' ? tr.resolved + tr.failed + tr.up + tr.effectiveDown : tr.up + tr.effectiveDown;
    if (o.retirement && !tr.withheld && tr.factor < o.outcomeFloor && observations >= o.minObservations && !noRetire.has(e.id)) {
      const text = await facts.readEntry!(e.id);
      const content = text === undefined ? undefined : setFrontmatterKey(text, 'status', 'retired');
      if (content === undefined) {
        logger.warn({ entry: e.id }, 'curate: cannot edit the entry frontmatter; retirement skipped');
        continue;
      }
      const factor = tr.factor.toFixed(2);
      out.push({
        kind: 'retire',
        target: e.id,
        entry: e.id,
        repoPath: prefix + e.id,
        branch: `reprise/retire/${slug(e.id)}`,
        content,
        title: `KB: retire ${defuseMarkers(e.title).slice(0, 150)}`,
        labels: ['reprise', 'retire'],
        body: `Proposes \`status: retired\` for \`${e.id}\`: its outcome factor is ${factor}, below the floor ${o.outcomeFloor}, over ${observations} observations (${tr.resolved} resolved, ${tr.failed} unresolved, ${tr.up} 👍, ${tr.effectiveDown} 👎). Recall already refuses it; merging stops it from being offered at all. It stays in git history. Close without merging to keep it — Reprise will not ask again.\n\n${marker('retire', e.id)}`,
        summary: `propose retiring ${e.id} (factor ${factor} < ${o.outcomeFloor} over ${observations} observations)`,
      });
      continue;
    }
    if (!o.revalidation || tr.factor < o.outcomeFloor || tr.lastResolved === undefined || noRevalidate.has(e.id)) continue;
    const date = tr.lastResolved.slice(0, 10);
    const recorded = e.lastValidated ?? e.timestamp;
    const since = recorded === undefined ? Number.POSITIVE_INFINITY : Date.parse(date) - Date.parse(recorded.slice(0, 10));
    if (!(since >= o.revalidateMinIntervalMs)) continue;
    if (revalidateOpen >= o.revalidateMaxOpen) {
      logger.info({ entry: e.id, maxOpen: o.revalidateMaxOpen }, 'curate: revalidation queue full; proposed on a later sweep');
      continue;
    }
    const text = await facts.readEntry!(e.id);
    const content = text === undefined ? undefined : setFrontmatterKey(text, 'last_validated', date);
    if (content === undefined) {
      logger.warn({ entry: e.id }, 'curate: cannot edit the entry frontmatter; revalidation skipped');
      continue;
    }
    revalidateOpen++;
    out.push({
      kind: 'revalidate',
      target: e.id,
      entry: e.id,
      repoPath: prefix + e.id,
      branch: `reprise/revalidate/${slug(e.id)}`,
      content,
      title: `KB: revalidate ${defuseMarkers(e.title).slice(0, 150)}`,
      labels: ['reprise', 'revalidate'],
      body: `Proposes \`last_validated: ${date}\` for \`${e.id}\`: it was recalled for a live incident that then resolved on ${date} (outcome factor ${tr.factor.toFixed(2)}). Only a human merging this confirms it; Reprise never writes the field itself. Close without merging to decline — Reprise will not ask again for this entry.\n\n${marker('revalidate', e.id)}`,
      summary: `propose last_validated ${date} for ${e.id} (a recall resolved)`,
    });
  }
  return out;
}
