/**
 * What `reprise import pagerduty` files (issue 31 item 3): every resolved incident read, keyed
 * as the live PagerDuty path keys it (core/pagerduty.ts), its fix read from its notes or resolve
 * (pagerduty-fix.ts), through the curator's dedup gate:
 *
 * 1. an incident a PR already carries (hidden `import=pagerduty:<id>` / `fix=pagerduty:<id>`
 *    marker, open, merged or closed by a human — a "no" is never re-asked) → already imported;
 * 2. the same fix for the same trigger said again (in this run, or already in the trigger's
 *    catalog entry) → a duplicate, whose outcome still counts;
 * 3. a trigger whose entry is on an open PR (its DupFingerprint) → the fixes join that PR's entry;
 *    whose entry is in the catalog → a PR edits that file; else a new Incident entry, one per
 *    trigger, every different fix in its "What has fixed it" list, filed in batches.
 *
 * Whether a fix held comes from the same history: the trigger did not fire again within a day
 * of the incident's resolve. Pure: the CLI reads PagerDuty and the forge, this decides.
 */
import { createHash } from 'node:crypto';
import type { ForgeComment, ForgePullRequest } from '../../ports/forge.js';
import { HELD_WINDOW_MS } from '../chat/seen-before.js';
import { amendEntry, fixKey } from '../curate/amend-entry.js';
import { renderFixEntry } from '../curate/fix-entry.js';
import type { DraftEntry } from '../curate/kb-entry.js';
import { hasMarker } from '../curate/markers.js';
import { neutraliseLine } from '../curate/neutralise-markdown.js';
import { openAlert } from '../bot/fix-flow.js';
import { dupFingerprint } from '../bot/dup-fingerprint.js';
import type { IdentityOptions } from '../identity.js';
import type { FixMaterial, FixOutcome } from '../ledger-events.js';
import { pagerDutyIncident, readPagerDutyIncident, type PagerDutyIncidentData } from '../pagerduty.js';
import type { CatalogSnapshot } from '../recall/catalog-snapshot.js';
import type { Incident } from '../types.js';
import { extractFix, type ExtractedFix, type PagerDutyNote, type PagerDutyResolve } from './pagerduty-fix.js';

/** One resolved incident as read: PagerDuty's object, its notes and resolve (or why they could not be read). */
export interface HistoryIncident {
  raw: unknown;
  notes?: readonly PagerDutyNote[];
  resolve?: PagerDutyResolve;
  readError?: string;
}

/** An incident the plan names: its id, number, title and page. */
export interface IncidentRef {
  id: string;
  number?: number;
  title: string;
  url?: string;
}

/** One fixing incident's fix. */
export interface ImportedFix extends IncidentRef {
  triggerKey: string;
  fix: string;
  from: ExtractedFix['from'];
  by?: string;
  at: string;
  cause?: string;
}

/** What is filed for one trigger. */
export type TriggerDraft = {
  triggerKey: string;
  fingerprint: string;
  alertname: string;
  resource?: string;
  /** The new fixes, oldest first (one per fixing incident). */
  fixes: ImportedFix[];
  /** Incidents whose fix repeats one of these (or one the entry already has): counted, and marked as imported with them. */
  counted: string[];
  /** The trigger's fixes with their counts, what orders the entry's list. */
  outcomes: FixOutcome[];
  /** The cause a note gave, newest. */
  cause?: { text: string; by: string; at: string };
  /** The first fix as a person said it: what a new entry is written from. */
  material: FixMaterial;
} & ({ kind: 'new'; entry: DraftEntry } | { kind: 'open-pr'; pr: { number: number; url: string } } | { kind: 'catalog'; entryId: string; entryTitle: string });

export interface Skipped extends IncidentRef {
  reason: string;
  /** The PR it went to, when that is the reason. */
  prUrl?: string;
}

export interface PagerDutyPlan {
  drafts: TriggerDraft[];
  /** Read, and nothing new: no fix text, already imported, a duplicate, merged into another. */
  skipped: Skipped[];
  /** Could not be read: the reason, and nothing of it was imported. */
  unreadable: Skipped[];
  /** Incidents read in all. */
  read: number;
}

export interface PagerDutyPlanDeps {
  catalog: CatalogSnapshot;
  /** Every pull request on the forge (open and closed); empty without a forge. */
  pullRequests: readonly ForgePullRequest[];
  /** Comments of the open PRs a trigger's entry is on (an amend leaves its marker there). */
  comments: (pr: number) => readonly ForgeComment[];
  /** The end of the window: a fix resolved less than a day before it is not graded yet. */
  until: Date;
  identity?: IdentityOptions;
}

const SAFE_ID = /^[A-Za-z0-9_.-]{1,80}$/;
/** The marker value naming a PagerDuty incident (marker values are plain ids: any other id is named by its hash). */
export const incidentMarker = (id: string): string =>
  SAFE_ID.test(id) ? `pagerduty:${id}` : `pagerduty:sha256-${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;

const iso = (s: string | undefined): string | undefined => (s && !Number.isNaN(Date.parse(s)) ? new Date(s).toISOString() : undefined);
const prWord = (p: ForgePullRequest): string => (p.merged ? 'merged' : p.state === 'open' ? 'open' : 'closed unmerged');

interface Read {
  d: PagerDutyIncidentData;
  incident: Incident;
  ref: IncidentRef;
  fp: string;
  createdAt: number;
  resolvedAt?: number;
  item: HistoryIncident;
}

/** The Incident a REST incident object is (the webhook's keying); undefined when it is not one. */
export function historyIncident(raw: unknown, identity?: IdentityOptions): { d: PagerDutyIncidentData; incident: Incident; fp: string } | undefined {
  const d = readPagerDutyIncident(raw);
  if (!d) return undefined;
  const startsAt = iso(d.created_at) ?? new Date(0).toISOString();
  const incident = pagerDutyIncident(d, { status: 'resolved', startsAt }, identity ? { identity } : {});
  return { d, incident, fp: dupFingerprint(incident) };
}

function refOf(d: PagerDutyIncidentData, raw: unknown): IncidentRef {
  const num = typeof (raw as { incident_number?: unknown }).incident_number === 'number' ? (raw as { incident_number: number }).incident_number : d.number;
  return {
    id: d.id,
    ...(num !== undefined ? { number: num } : {}),
    title: (d.title ?? '').slice(0, 300),
    ...(d.html_url && /^https?:\/\//i.test(d.html_url) ? { url: d.html_url.slice(0, 2048) } : {}),
  };
}

/** A merged incident's resolve reason names the incident it went into. */
function mergedInto(raw: unknown): string | undefined {
  const r = (raw as { resolve_reason?: unknown }).resolve_reason;
  if (typeof r !== 'object' || r === null) return undefined;
  const o = r as { type?: unknown; incident?: { id?: unknown; summary?: unknown } };
  if (o.type !== 'merge_resolve_reason') return undefined;
  return typeof o.incident?.id === 'string' ? o.incident.id.slice(0, 80) : 'another incident';
}

/** A resolve reason PagerDuty (or a proxy) gave as text, as the resolve's message. */
function resolveReasonText(raw: unknown): string | undefined {
  const r = (raw as { resolve_reason?: unknown }).resolve_reason;
  if (typeof r === 'string') return r;
  if (typeof r === 'object' && r !== null) {
    const o = r as { message?: unknown; summary?: unknown };
    if (typeof o.message === 'string') return o.message;
    if (typeof o.summary === 'string') return o.summary;
  }
  return undefined;
}

/** The incident's outcome: held when the trigger did not start again within a day of its resolve. */
function outcome(r: Read, starts: readonly number[], until: number): Pick<FixOutcome, 'held' | 'cameBack' | 'pending'> {
  const end = r.resolvedAt ?? r.createdAt;
  if (starts.some((s) => s > end && s <= end + HELD_WINDOW_MS)) return { held: 0, cameBack: 1, pending: 0 };
  return end + HELD_WINDOW_MS > until ? { held: 0, cameBack: 0, pending: 1 } : { held: 1, cameBack: 0, pending: 0 };
}

const personName = (by: ExtractedFix['by']): string => by?.name?.trim() || by?.id?.trim() || 'someone in PagerDuty';

export function planPagerDutyImport(items: readonly HistoryIncident[], deps: PagerDutyPlanDeps): PagerDutyPlan {
  const plan: PagerDutyPlan = { drafts: [], skipped: [], unreadable: [], read: items.length };
  const reads: Read[] = [];
  for (const [i, item] of items.entries()) {
    const h = historyIncident(item.raw, deps.identity);
    if (!h) {
      plan.unreadable.push({ id: `#${i + 1}`, title: '', reason: 'not a PagerDuty incident object (no id)' });
      continue;
    }
    const resolvedAt = Date.parse(item.resolve?.at ?? (item.raw as { last_status_change_at?: string }).last_status_change_at ?? '');
    reads.push({
      ...h,
      ref: refOf(h.d, item.raw),
      createdAt: Date.parse(h.incident.startsAt) || 0,
      ...(Number.isNaN(resolvedAt) ? {} : { resolvedAt }),
      item,
    });
  }
  const startsOf = new Map<string, number[]>();
  for (const r of reads) startsOf.set(r.incident.triggerKey, [...(startsOf.get(r.incident.triggerKey) ?? []), r.createdAt]);

  const groups = new Map<string, { reads: Read[]; fixes: Array<{ r: Read; fix: ExtractedFix }> }>();
  const until = deps.until.getTime();
  for (const r of [...reads].sort((a, b) => a.createdAt - b.createdAt)) {
    const skip = (reason: string, prUrl?: string): void => void plan.skipped.push({ ...r.ref, reason, ...(prUrl ? { prUrl } : {}) });
    if (r.item.readError) {
      plan.unreadable.push({ ...r.ref, reason: r.item.readError });
      continue;
    }
    const merged = mergedInto(r.item.raw);
    if (merged) {
      skip(`merged into ${merged}: its fix is that incident's`);
      continue;
    }
    const value = incidentMarker(r.d.id);
    const filed = deps.pullRequests.find((p) => hasMarker(p.body, 'import', value) || hasMarker(p.body, 'fix', value));
    const commented = deps.pullRequests.find(
      (p) => p.state === 'open' && deps.comments(p.number).some((c) => hasMarker(c.body, 'fix', value) || hasMarker(c.body, 'import', value)),
    );
    if (filed ?? commented) {
      const p = (filed ?? commented)!;
      skip(`already imported in PR #${p.number} (${prWord(p)})`, p.url);
      continue;
    }
    const reason = resolveReasonText(r.item.raw);
    const resolve = !r.item.resolve?.message && reason ? { ...r.item.resolve, message: reason } : r.item.resolve;
    const fix = extractFix(r.item.notes ?? [], resolve);
    if (!fix) {
      skip('no fix text: no note says fixed:, fix:, resolution: or resolved by, and the resolve says only how it was resolved');
      continue;
    }
    const g = groups.get(r.fp) ?? { reads: [], fixes: [] };
    g.reads.push(r);
    g.fixes.push({ r, fix });
    groups.set(r.fp, g);
  }

  for (const [fp, g] of groups) {
    const first = g.fixes[0]!;
    const incident = first.r.incident;
    const starts = startsOf.get(incident.triggerKey) ?? [];
    const catalogEntry = deps.catalog.entries.find((e) => e.fingerprint === fp && e.status !== 'retired');
    const known = catalogEntry ? fixKey(catalogEntry.body.replace(/^\s{0,3}>\s?/gm, '')) : '';
    const outcomes = new Map<string, FixOutcome>();
    const fixes: ImportedFix[] = [];
    const counted: string[] = [];
    let cause: TriggerDraft['cause'];
    for (const { r, fix } of g.fixes) {
      const at = iso(fix.at) ?? iso(r.item.resolve?.at) ?? r.incident.startsAt;
      const key = fixKey(neutraliseLine(fix.text, 1000));
      const o = outcome(r, starts, until);
      const had = outcomes.get(key);
      if (had) Object.assign(had, { held: had.held + o.held, cameBack: had.cameBack + o.cameBack, pending: had.pending + o.pending });
      else outcomes.set(key, { text: fix.text, name: personName(fix.by), via: 'PagerDuty', at, ...o });
      if (fix.cause) cause = { text: fix.cause.text, by: personName(fix.cause.by), at: iso(fix.cause.at) ?? at };
      const earlier = fixes.find((f) => fixKey(neutraliseLine(f.fix, 1000)) === key);
      if (earlier) {
        plan.skipped.push({ ...r.ref, reason: `duplicate: the same fix as ${earlier.id} for this trigger, counted with it` });
        counted.push(r.d.id);
        continue;
      }
      if (known !== '' && key !== '' && known.includes(key)) {
        plan.skipped.push({ ...r.ref, reason: `duplicate: the catalog's entry ${catalogEntry!.id} already says this fix` });
        counted.push(r.d.id);
        continue;
      }
      fixes.push({
        ...r.ref,
        triggerKey: r.incident.triggerKey,
        fix: fix.text,
        from: fix.from,
        ...(fix.by ? { by: personName(fix.by) } : {}),
        at,
        ...(fix.cause ? { cause: fix.cause.text } : {}),
      });
    }
    if (fixes.length === 0) continue;
    const lead = fixes[0]!;
    const alert = openAlert(incident);
    const material: FixMaterial = {
      user: `PagerDuty:${first.fix.by?.id ?? 'unknown'}`,
      name: lead.by ?? 'someone in PagerDuty',
      via: 'PagerDuty',
      text: lead.fix,
      at: lead.at,
      alert,
      ...(cause ? { cause: cause.text.slice(0, 2000), causeBy: { name: cause.by, via: 'PagerDuty' } } : {}),
      triedAndFailed: [],
      outcomes: [...outcomes.values()],
    };
    const base = {
      triggerKey: incident.triggerKey,
      fingerprint: fp,
      alertname: incident.alertname,
      ...(alert.resource ? { resource: alert.resource } : {}),
      fixes,
      counted,
      outcomes: [...outcomes.values()],
      ...(cause ? { cause } : {}),
      material,
    };
    const open = deps.pullRequests.find((p) => p.state === 'open' && hasMarker(p.body, 'dup', fp));
    if (open) plan.drafts.push({ ...base, kind: 'open-pr', pr: { number: open.number, url: open.url } });
    else if (catalogEntry) plan.drafts.push({ ...base, kind: 'catalog', entryId: catalogEntry.id, entryTitle: catalogEntry.title });
    else plan.drafts.push({ ...base, kind: 'new', entry: newEntry(material, fp, fixes) });
  }
  return plan;
}

/** A new Incident entry for the trigger: the first fix as the Resolution, every different one in its list, and where each came from. */
function newEntry(material: FixMaterial, fp: string, fixes: readonly ImportedFix[]): DraftEntry {
  const entry = renderFixEntry(material, fp, fp);
  const listed = (material.outcomes ?? []).length > 1 ? (amendEntry(entry.content, { fixes: material.outcomes ?? [] }) ?? entry.content) : entry.content;
  const cites = fixes.map(
    (f) =>
      `- PagerDuty incident ${neutraliseLine(f.number !== undefined ? `#${f.number} (${f.id})` : f.id, 120)} of ${f.at.slice(0, 10)}: read from its ${f.from === 'note' ? 'notes' : 'resolve'} by \`reprise import pagerduty\`, no model involved. A human reviews and merges.`,
  );
  // Its words came from PagerDuty, not from a thread: the citation says where.
  const content = listed.replace(/^- Said in the incident thread .*$/m, cites.join('\n'));
  return { ...entry, content: content.includes(cites[0] ?? '\u0000') ? content : `${content.trimEnd()}\n${cites.join('\n')}\n` };
}
