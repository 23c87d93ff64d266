/**
 * The curation half of the read model: forge work still to do (`curate` intents, settled by
 * `curated`) and each thread's curation decision, so the worker resumes after a restart and
 * the thread's card can say what became of its Finding.
 */
import type { CurateEvent, CuratedEvent } from '../ledger-events.js';
import type { CurateItem, LedgerState } from './ledger-types.js';

export function applyCurate(state: LedgerState, e: CurateEvent): void {
  const { type: _type, ...item } = e;
  const pending = (state.curate ??= Object.create(null) as Record<string, CurateItem>);
  pending[e.id] = item;
}

export function applyCurated(state: LedgerState, e: CuratedEvent): void {
  if (e.id !== undefined && state.curate) delete state.curate[e.id];
  if (e.subject !== 'finding') return;
  if (e.url !== undefined && (e.decision === 'novel' || e.decision === 'duplicate_pr')) linkOpen(state, e.triggerKey, e.openId, e.url);
  const thread = state.threads[e.openId];
  if (!thread) return;
  const c: NonNullable<typeof thread.curation> = { decision: e.decision };
  if (e.detail !== undefined) c.detail = e.detail;
  if (e.url !== undefined) c.url = e.url;
  if (e.number !== undefined) c.number = e.number;
  thread.curation = c;
}

/** Forge work not yet settled, oldest first. */
export function pendingCurate(state: LedgerState): CurateItem[] {
  return Object.values(state.curate ?? {});
}

/**
 * The draft under review is the open's KB link (`curatedUrl`): the next firing's recurrence
 * line says "previous: <PR>" for a finding that is not in the catalog yet.
 */
function linkOpen(state: LedgerState, triggerKey: string, openId: string, url: string): void {
  const t = state.triggers[triggerKey];
  if (!t) return;
  for (const o of [t.newestOpen, t.previousOpen, t.newestConcludedOpen]) if (o?.id === openId) o.curatedUrl = url;
  const fp = t.newestOpen?.id === openId ? state.fingerprints[t.newestOpen.fingerprint] : undefined;
  for (const o of fp?.open ?? []) if (o.id === openId) o.curatedUrl = url;
  t.lastKbLink = url;
}
