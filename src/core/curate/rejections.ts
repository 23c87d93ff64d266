/**
 * A PR a human closed without merging is a "no" that is never re-asked (SPEC §10). This is
 * the one query both the file-time curator and the sweeps use: derived each time from the
 * forge's closed PRs, so there is no state to keep.
 */
import type { ForgePullRequest } from '../../ports/forge.js';
import { hasAnyMarker, readMarker } from './sweep-markers.js';

/** Labels the sweeps put on a PR they close themselves: such a close is not a human's "no". */
export const SWEEP_CLOSE_LABELS = ['duplicate', 'stale', 'suppressed'] as const;
/** A human close with this label is "revise and resubmit", not a rejection. */
export const NEEDS_WORK_LABEL = 'needs-work';

/** A PR Reprise drafted: it carries a hidden marker, or its branch is one of the bot's. */
export function isReprisePr(pr: ForgePullRequest): boolean {
  return hasAnyMarker(pr.body) || pr.head.startsWith('reprise/');
}

/** Closed unmerged by a human (not by a sweep), and not marked needs-work. */
export function isHumanRejection(pr: ForgePullRequest): boolean {
  if (pr.state !== 'closed' || pr.merged || !isReprisePr(pr)) return false;
  if (pr.labels.some((l) => (SWEEP_CLOSE_LABELS as readonly string[]).includes(l))) return false;
  return !pr.labels.includes(NEEDS_WORK_LABEL);
}

/**
 * DupFingerprint → the newest human-rejected PR that drafted it. The file-time curator asks
 * `rejected.get(fp)` before opening a PR (decision `suppressed`).
 */
export function rejectedFingerprints(closed: readonly ForgePullRequest[]): Map<string, ForgePullRequest> {
  const out = new Map<string, ForgePullRequest>();
  for (const pr of closed) {
    if (!isHumanRejection(pr)) continue;
    const fp = readMarker(pr.body, 'dup');
    if (fp === undefined) continue;
    const seen = out.get(fp);
    if (!seen || (pr.closedAt ?? pr.updatedAt) > (seen.closedAt ?? seen.updatedAt)) out.set(fp, pr);
  }
  return out;
}
