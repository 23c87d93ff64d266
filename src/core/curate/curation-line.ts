/** The card's knowledge-base line for a curation decision (SPEC §10, shown in the thread). */
import type { CurationLine } from '../chat/thread-view.js';

export function curationLine(c: { decision: string; detail?: string; url?: string; number?: number }): CurationLine {
  const pr = c.url && c.number !== undefined ? { link: { label: `PR #${c.number}`, url: c.url } } : {};
  switch (c.decision) {
    case 'recalled':
      return { text: `KB: answered from the catalog (${c.detail ?? 'recall'}); nothing to draft` };
    case 'below_bar':
      return { text: `KB: not drafted — below the quality bar (${c.detail ?? 'unknown criterion'})` };
    case 'duplicate_entry':
      return { text: `KB: already in the catalog — ${c.detail ?? 'a close entry'}` };
    case 'duplicate_pr':
      return { text: 'KB: same finding as a draft under review; added there', ...pr };
    case 'suppressed':
      return { text: 'KB: not drafted — a reviewer closed this draft before', ...pr };
    case 'novel':
      return { text: 'KB: draft opened for review', ...pr };
    case 'amend_pr':
    case 'pr_update':
      // A verified cause for an entry whose Cause said nothing (issue 31 item 2).
      return { text: `KB: the cause written into ${c.detail ?? 'the entry'}'s Cause, for review`, ...pr };
    default:
      return { text: `KB: not filed — ${c.detail ?? 'the forge refused it'}` };
  }
}
