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
import { amendCatalogEntry, amendOpenPr, openEntryPr } from './file-amend.js';
import { fixComment, fixPrBody, fixProvenance, renderFixEntry } from './fix-entry.js';
import { hasMarker, markerValues } from './markers.js';
import { neutraliseLine, quoteBlock } from './neutralise-markdown.js';
import { saysNothing, type CauseChange } from './amend-entry.js';
import { afterKeyword } from '../chat/thread-text.js';
import { postmortemPrBody, renderPostmortem } from './postmortem.js';
import { isHumanRejection } from './rejections.js';

export type Outcome = Omit<CuratedEvent, 'type' | 'id' | 'subject' | 'openId' | 'triggerKey' | 'at'>;

export interface FilingDeps {
  forge: ForgePort;
  drafts: DraftBranchPort;
  catalog: () => CatalogSnapshot;
  options: { labels: readonly string[]; dupScore: number; neighbours: number; catalogPath?: string };
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
  if (dup) return (await verifiedCause(deps, item, forge)) ?? { decision: 'duplicate_entry', detail: dup };
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

/**
 * A verified Finding for a trigger whose entry exists (same fingerprint) fills that entry's Cause
 * when it says nothing yet (issue 31 item 2): through the PR open for the entry, else one that
 * edits it, credited to the investigation. Undefined when there is nothing to fill (the entry has
 * a cause, or its file cannot be read): the finding is then a duplicate, as before.
 */
async function verifiedCause(deps: FilingDeps, item: CurateItem, forge: CountingForge): Promise<Outcome | undefined> {
  const d = item.draft!;
  const top = d.causes[0];
  const fp = item.dupFingerprint;
  if (!top || top.cause.trim() === '' || !fp) return undefined;
  // The served entry says why already: nothing to fill, and no forge call to find that out.
  const entry = deps.catalog().entries.find((e) => e.fingerprint === fp && e.status !== 'retired');
  if (!entry || !saysNothing(entry.sections['cause'])) return undefined;
  const open = await deps.forge.listPullRequests('open');
  const model = d.investigator.split(' · ')[0]?.trim() ?? '';
  const filed = await fileCause(deps, item, forge, open, { text: top.cause, by: { model }, at: item.at });
  return filed && (filed.decision === 'amend_pr' || filed.decision === 'pr_update') ? filed : undefined;
}

/** Files a note: a comment on the finding's (or the thread's notes') open PR, else a Concept PR. */
export async function fileNote(deps: FilingDeps, item: CurateItem, forge: CountingForge): Promise<Outcome> {
  const note = item.note;
  if (!note) return { decision: 'failed', detail: 'the intent carries no note' };
  const text = { id: item.id, name: note.name, via: note.via, text: note.text, ...(note.finding ? { finding: note.finding } : {}) };
  const open = await deps.forge.listPullRequests('open');
  const fp = item.dupFingerprint;
  const cause = afterKeyword(note.text.trim(), 'cause');
  if (cause) {
    // A cause fills the Cause of the trigger's entry, through the PR open for it or one that edits it.
    const filed = await fileCause(deps, item, forge, open, { text: cause, by: { name: note.name, via: note.via }, at: item.at });
    if (filed) return filed;
  }
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
 * Files a human fix. The trigger's entry is edited in place (issue 31 item 2): on the PR already
 * open for it (same DupFingerprint — the first fix's draft, a Finding's, or an edit of the
 * catalog's entry) the fix joins the entry's "What has fixed it" list on that PR's branch; when
 * the catalog has the entry, a new PR edits that file. Only when neither exists is it a new
 * Incident entry PR. A person's fix is new knowledge however similar the catalog's text reads,
 * so only the same fingerprint makes it "the same entry".
 */
export async function fileFix(deps: FilingDeps, item: CurateItem, forge: CountingForge): Promise<Outcome> {
  const f = item.fix;
  if (!f) return { decision: 'failed', detail: 'the intent carries no fix' };
  const fp = item.dupFingerprint;
  const open = await deps.forge.listPullRequests('open');
  const mine = open.find((p) => hasMarker(p.body, 'fix', item.id));
  if (mine)
    return {
      ...pr(mine.head.startsWith('reprise/amend/') ? 'amend_pr' : 'fix_pr', mine),
      ...(markerValues(mine.body, 'entry')[0] ? { detail: markerValues(mine.body, 'entry')[0]!.replace(/:/g, '/') } : {}),
    };
  const change = {
    fixes: f.outcomes ?? [{ text: f.text, name: f.name, via: f.via, at: f.at, held: 0, cameBack: 0, pending: 1 }],
    ...(f.cause
      ? {
          cause: {
            text: f.cause,
            by: f.causeBy ?? { name: f.name, via: f.via },
            at: f.at,
          },
        }
      : {}),
  };
  const said = { marker: { kind: 'fix' as const, id: item.id }, what: 'Another fix', said: [`From ${fixProvenance(f)}:`, '', quoteBlock(f.text)] };
  const target = openEntryPr(open, fp);
  if (target) {
    const updated = await amendOpenPr(deps, forge, target, change, said);
    if (updated) return updated;
    // The PR's file cannot be read (a branch a human reworked): the fix is said on the PR instead.
    const comments = await deps.forge.listComments(target.number);
    const existing = comments.find((c) => hasMarker(c.body, 'fix', item.id));
    const c = existing ?? (await forge.comment(target.number, fixComment(f, item.id)));
    return { decision: 'pr_comment', url: c.url || target.url, number: target.number };
  }
  const same = fp ? deps.catalog().entries.find((e) => e.fingerprint === fp && e.status !== 'retired') : undefined;
  if (same) {
    const amended = await amendCatalogEntry(deps, forge, same, fp, change, said, [...deps.options.labels, 'human-fix']);
    return amended ?? { decision: 'duplicate_entry', detail: `${same.id} (same fingerprint; its file could not be read from the remote to add the fix)` };
  }
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

/**
 * A cause (a `cause:` note) for a trigger whose entry exists: written into that entry's Cause on
 * the PR open for it, else on a PR editing the catalog's file. Undefined when the trigger has no
 * entry yet (the note is filed as any note is).
 */
async function fileCause(
  deps: FilingDeps,
  item: CurateItem,
  forge: CountingForge,
  open: readonly ForgePullRequest[],
  cause: CauseChange,
): Promise<Outcome | undefined> {
  const fp = item.dupFingerprint;
  const who =
    'model' in cause.by
      ? `a verified investigation${cause.by.model ? ` (${neutraliseLine(cause.by.model, 120)})` : ''}`
      : `@${neutraliseLine(cause.by.name.replace(/^@+/, ''))} via ${neutraliseLine(cause.by.via)}`;
  const text = { marker: { kind: 'note' as const, id: item.id }, what: 'The cause', said: [`From ${who}:`, '', quoteBlock(cause.text)] };
  const target = openEntryPr(open, fp);
  if (target) return amendOpenPr(deps, forge, target, { cause }, text);
  const already = open.find((p) => hasMarker(p.body, 'note', item.id));
  if (already)
    return {
      ...pr('amend_pr', already),
      ...(markerValues(already.body, 'entry')[0] ? { detail: markerValues(already.body, 'entry')[0]!.replace(/:/g, '/') } : {}),
    };
  const same = fp ? deps.catalog().entries.find((e) => e.fingerprint === fp && e.status !== 'retired') : undefined;
  if (!same) return undefined;
  return amendCatalogEntry(deps, forge, same, fp, { cause }, text, deps.options.labels);
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
  const entry: RichText = o.detail ? [' (', { code: o.detail }, ')'] : [];
  if (o.decision === 'fix_pr') return ['fix from ', who, ' drafted as a new Incident entry for review: ', ...link];
  if (o.decision === 'amend_pr')
    return ['fix from ', who, " added to the catalog's entry for this alert", ...entry, ' — its "What has fixed it" list, in ', ...link, ' for review'];
  if (o.decision === 'pr_update')
    return ['fix from ', who, ' added to the open ', ...link, " for this alert's entry", ...entry, ' — its "What has fixed it" list'];
  if (o.decision === 'duplicate_pr')
    return ['fix from ', who, ': the open ', ...link, " for this alert's entry already lists it; it stays recorded with this incident"];
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
  const entry: RichText = o.detail ? [' (', { code: o.detail }, ')'] : [];
  if (o.decision === 'pr_update') return ['cause from ', who, " written into the entry's Cause on the open ", ...link, ...entry];
  if (o.decision === 'amend_pr')
    return ['cause from ', who, " written into the Cause of the catalog's entry for this alert", ...entry, ', in ', ...link, ' for review'];
  if (o.decision === 'duplicate_pr') return ['cause from ', who, ': the entry on the open ', ...link, ' already says it'];
  if (o.decision === 'duplicate_entry') return ['cause from ', who, `: the catalog's entry already says it (${o.detail ?? ''})`];
  if (o.decision === 'pr_comment') return ['note from ', who, ' filed as a comment on ', ...link];
  if (o.decision === 'concept_pr') return ['note from ', who, ' filed as a new Concept entry for review: ', ...link];
  return ['note from ', who, ` could not be filed on the forge: ${o.detail ?? 'unknown error'}; it stays recorded with this incident`];
}
