/**
 * What the curation worker does with one intent on the forge (SPEC §9, §10): the dedup gates in
 * order — the catalog, the open drafts (hidden DupFingerprint marker), a human's earlier "no" —
 * then a new draft; for a note, the finding's open draft or a Concept PR. Idempotent through
 * markers: redoing an item whose outcome was not recorded finds its own PR or comment.
 */
import { randomUUID } from 'node:crypto';
import type { DraftBranchPort, ForgePort, ForgePullRequest } from '../../ports/forge.js';
import type { Inline, RichText } from '../chat/thread-view.js';
import type { PeopleNames } from '../people.js';
import type { CuratedEvent } from '../ledger-events.js';
import type { CurateItem } from '../ledger/ledger-types.js';
import { HOST_KINDS, NOT_WORKLOAD_KINDS } from '../identity.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import { tokenize } from '../tokenize.js';
import { findingPrBody, noteComment, notePrBody, seenAgainComment, type Neighbour } from './forge-text.js';
import { renderFindingEntry, renderNoteEntry } from './kb-entry.js';
import { fixComment, fixPrBody, renderFixEntry } from './fix-entry.js';
import { hasMarker } from './markers.js';
import { postmortemPrBody, renderPostmortem } from './postmortem.js';
import { isHumanRejection } from './rejections.js';

export type Outcome = Omit<CuratedEvent, 'type' | 'id' | 'subject' | 'openId' | 'triggerKey' | 'at'>;

export interface FilingDeps {
  forge: ForgePort;
  drafts: DraftBranchPort;
  catalog: () => CatalogSnapshot;
  options: { labels: readonly string[]; dupScore: number; neighbours: number };
  /** Display names of the people a draft names, looked up before it is written. */
  names?: PeopleNames;
}

/** Counts forge write calls, so one item's cost is known before the budget is spent. */
export class CountingForge {
  writes = 0;
  constructor(readonly f: ForgePort) {}
  comment(n: number, body: string) {
    this.writes++;
    return this.f.comment(n, body);
  }
  createPullRequest(pr: Parameters<ForgePort['createPullRequest']>[0]) {
    this.writes += pr.labels && pr.labels.length > 0 ? 2 : 1;
    return this.f.createPullRequest(pr);
  }
}

/** Catalog dedup: the same fingerprint, or an entry about the same workload scoring at least `dupScore`; plus the neighbourhood. */
function catalogDup(deps: FilingDeps, item: CurateItem): { dup?: string; neighbours: Neighbour[] } {
  const d = item.draft!;
  const snap = deps.catalog();
  const same = snap.entries.find((e) => e.fingerprint === item.dupFingerprint && e.status !== 'retired');
  const tokens = tokenize([d.alertname, d.resource ?? '', d.title, d.summary, d.causes[0]?.cause ?? ''].join(' '));
  const hits = tokens.length > 0 ? snap.index.search(tokens, deps.options.neighbours) : [];
  const neighbours = hits.map((h) => ({ entry: h.entry.id, title: h.entry.title, score: h.score }));
  if (same) return { dup: `${same.id} (same fingerprint)`, neighbours };
  // Similar text about another workload is a neighbour, not the same knowledge.
  const sameSubject = (e: (typeof hits)[number]['entry']): boolean =>
    d.resource ? e.resource?.raw === d.resource || e.alertResource?.raw === d.resource : !e.resource && e.alerts.includes(d.alertname.toLowerCase());
  const top = hits.find((h) => h.entry.status !== 'retired' && sameSubject(h.entry));
  if (top && top.score >= deps.options.dupScore) return { dup: `${top.entry.id} (score ${top.score.toFixed(1)} ≥ ${deps.options.dupScore})`, neighbours };
  return { neighbours };
}

/** Files a Finding: catalog dedup, open-PR dedup (a comment), suppression, else a new draft PR. */
export async function fileFinding(deps: FilingDeps, item: CurateItem, forge: CountingForge): Promise<Outcome> {
  const d = item.draft;
  if (!d) return { decision: 'failed', detail: 'the intent carries no draft material' };
  const { dup, neighbours } = catalogDup(deps, item);
  if (dup) return { decision: 'duplicate_entry', detail: dup };
  const entry = renderFindingEntry(d, item.dupFingerprint, new Date(item.at));
  const open = await deps.forge.listPullRequests('open');
  const same = open.find((pr) => hasMarker(pr.body, 'dup', item.dupFingerprint));
  if (same) {
    // Our own PR from an attempt whose outcome was not recorded: it is this item's draft.
    if (hasMarker(same.body, 'seen', item.openId)) return pr('novel', same);
    const comments = await deps.forge.listComments(same.number);
    if (!comments.some((c) => hasMarker(c.body, 'seen', item.openId))) await forge.comment(same.number, seenAgainComment(d, item.openId));
    return pr('duplicate_pr', same);
  }
  const closed = await deps.forge.listPullRequests('closed');
  const mine = closed.filter((p) => hasMarker(p.body, 'dup', item.dupFingerprint));
  const merged = mine.find((p) => p.merged);
  if (merged)
    return { decision: 'duplicate_entry', detail: `merged as PR #${merged.number}; the catalog has not synced it yet`, url: merged.url, number: merged.number };
  // A human's close is a "no"; a PR the grooming sweeps closed (duplicate, stale) or one marked needs-work is not.
  const rejected = mine.find((p) => isHumanRejection(p));
  if (rejected) return pr('suppressed', rejected);
  await deps.drafts.push({ branch: entry.branch, path: entry.path, content: entry.content, message: `KB: ${entry.title}` });
  const created = await forge.createPullRequest({
    title: `KB: ${entry.title}`,
    body: findingPrBody(d, { dupFingerprint: item.dupFingerprint, openId: item.openId, triggerKey: item.triggerKey, path: entry.path, neighbours }),
    head: entry.branch,
    labels: deps.options.labels,
  });
  return pr('novel', created);
}

/** Files a note: a comment on the finding's (or the thread's notes') open PR, else a Concept PR. */
export async function fileNote(deps: FilingDeps, item: CurateItem, forge: CountingForge): Promise<Outcome> {
  const note = item.note;
  if (!note) return { decision: 'failed', detail: 'the intent carries no note' };
  const text = { id: item.id, name: note.name, via: note.via, text: note.text, ...(note.finding ? { finding: note.finding } : {}) };
  const open = await deps.forge.listPullRequests('open');
  const fp = item.dupFingerprint;
  const target = fp ? (open.find((p) => hasMarker(p.body, 'dup', fp)) ?? open.find((p) => hasMarker(p.body, 'notes', fp))) : undefined;
  if (target) {
    const comments = await deps.forge.listComments(target.number);
    const existing = comments.find((c) => hasMarker(c.body, 'note', item.id));
    const c = existing ?? (await forge.comment(target.number, noteComment(text)));
    return { decision: 'pr_comment', url: c.url || target.url, number: target.number };
  }
  const already = open.find((p) => hasMarker(p.body, 'note', item.id));
  if (already) return pr('concept_pr', already);
  const [alertname = 'alert', namespace, kind = '', name] = item.triggerKey.split('|');
  const resource = name && HOST_KINDS.has(kind) ? `host/${name}` : namespace && name && !NOT_WORKLOAD_KINDS.has(kind) ? `${namespace}/${name}` : undefined;
  const entry = renderNoteEntry(
    note,
    { alertname, ...(resource ? { resource } : {}) },
    item.id.replace(/[^0-9a-f]/g, '') || randomUUID().replace(/-/g, ''),
    new Date(item.at),
  );
  await deps.drafts.push({ branch: entry.branch, path: entry.path, content: entry.content, message: `KB: ${entry.title}` });
  const created = await forge.createPullRequest({
    title: `KB: ${entry.title}`,
    body: notePrBody(text, { dupFingerprint: fp, triggerKey: item.triggerKey, path: entry.path }),
    head: entry.branch,
    labels: [...deps.options.labels, 'operator-note'],
  });
  return pr('concept_pr', created);
}

/**
 * Files a human fix: a comment on the trigger's open draft (same DupFingerprint — a second fix,
 * or a Finding's draft), else a new Incident entry PR. Only an entry with the same fingerprint
 * already in the catalog makes it a duplicate: a person's fix is new knowledge however similar
 * the catalog's text reads.
 */
export async function fileFix(deps: FilingDeps, item: CurateItem, forge: CountingForge): Promise<Outcome> {
  const f = item.fix;
  if (!f) return { decision: 'failed', detail: 'the intent carries no fix' };
  const fp = item.dupFingerprint;
  const open = await deps.forge.listPullRequests('open');
  const mine = open.find((p) => hasMarker(p.body, 'fix', item.id));
  if (mine) return pr('fix_pr', mine);
  const target = fp ? open.find((p) => hasMarker(p.body, 'dup', fp)) : undefined;
  if (target) {
    const comments = await deps.forge.listComments(target.number);
    const existing = comments.find((c) => hasMarker(c.body, 'fix', item.id));
    const c = existing ?? (await forge.comment(target.number, fixComment(f, item.id)));
    return { decision: 'pr_comment', url: c.url || target.url, number: target.number };
  }
  const same = fp ? deps.catalog().entries.find((e) => e.fingerprint === fp && e.status !== 'retired') : undefined;
  if (same) return { decision: 'duplicate_entry', detail: `${same.id} (same fingerprint)` };
  const key = /^[0-9a-f]{8,64}$/.test(fp) ? fp : item.id.replace(/[^0-9a-f]/g, '') || randomUUID().replace(/-/g, '');
  const entry = renderFixEntry(f, fp, key);
  await deps.drafts.push({ branch: entry.branch, path: entry.path, content: entry.content, message: `KB: ${entry.title}` });
  const created = await forge.createPullRequest({
    title: `KB: ${entry.title}`,
    body: fixPrBody(f, { id: item.id, dupFingerprint: fp, triggerKey: item.triggerKey, path: entry.path }),
    head: entry.branch,
    labels: [...deps.options.labels, 'human-fix'],
  });
  return pr('fix_pr', created);
}

/** Files a postmortem draft: a PR adding `postmortems/<date>-<alert>.md` (once per request: its marker finds a PR already made). */
export async function filePostmortem(deps: FilingDeps, item: CurateItem, forge: CountingForge): Promise<Outcome> {
  const m = item.postmortem;
  if (!m) return { decision: 'failed', detail: 'the intent carries no postmortem' };
  const open = await deps.forge.listPullRequests('open');
  const mine = open.find((p) => hasMarker(p.body, 'postmortem', item.id));
  if (mine) return pr('postmortem_pr', mine);
  const draft = renderPostmortem(m, item.id.replace(/[^0-9a-f]/g, '') || randomUUID().replace(/-/g, ''), deps.names);
  await deps.drafts.push({ branch: draft.branch, path: draft.path, content: draft.content, message: draft.title });
  const created = await forge.createPullRequest({
    title: draft.title,
    body: postmortemPrBody(draft, item.id),
    head: draft.branch,
    labels: [...deps.options.labels, 'postmortem'],
  });
  return pr('postmortem_pr', created);
}

/** What the thread is told about a postmortem draft. */
export function postmortemNotice(o: Outcome): RichText {
  const link = o.url && o.number !== undefined ? [{ link: { url: o.url, label: `PR #${o.number}` } }] : [];
  if (o.decision === 'postmortem_pr') return ['postmortem drafted for review: ', ...link];
  return [`postmortem could not be filed on the forge: ${o.detail ?? 'unknown error'}`];
}

/** What the thread is told about a fix: where it went, with the link. */
export function fixNotice(who: Inline, o: Outcome): RichText {
  const link = o.url && o.number !== undefined ? [{ link: { url: o.url, label: `PR #${o.number}` } }] : [];
  if (o.decision === 'fix_pr') return ['fix from ', who, ' drafted as a new Incident entry for review: ', ...link];
  if (o.decision === 'pr_comment') return ['fix from ', who, ' added as a comment on the open draft ', ...link];
  if (o.decision === 'duplicate_entry')
    return ['fix from ', who, `: the catalog already has this incident's entry (${o.detail ?? ''}); it stays recorded with this incident`];
  return ['fix from ', who, ` could not be filed on the forge: ${o.detail ?? 'unknown error'}; it stays recorded with this incident`];
}

function pr(decision: Outcome['decision'], p: ForgePullRequest): Outcome {
  return { decision, url: p.url, number: p.number };
}

/** What the thread is told about a note (SPEC §9: "📝 note filed as a comment on PR #12"). */
export function noteNotice(who: Inline, o: Outcome): RichText {
  const link = o.url && o.number !== undefined ? [{ link: { url: o.url, label: `PR #${o.number}` } }] : [];
  if (o.decision === 'pr_comment') return ['note from ', who, ' filed as a comment on ', ...link];
  if (o.decision === 'concept_pr') return ['note from ', who, ' filed as a new Concept entry for review: ', ...link];
  return ['note from ', who, ` could not be filed on the forge: ${o.detail ?? 'unknown error'}; it stays recorded with this incident`];
}
