/**
 * The links an alert's card shows (SPEC §9): its source (`generatorURL`), its `runbook_url`,
 * dashboards, a silence, Grafana's panel and image. Each comes from a fixed field and gets a
 * fixed label — no link is ever made out of free alert text — and each is checked once, when
 * the alert arrives: http(s) only, no spaces or control characters, at most
 * {@link MAX_LINK_LENGTH} characters, and a host in `links.allowed_hosts` when the team set one.
 * A link that fails is not dropped in silence: it is kept with its reason (said in the thread,
 * logged). A `runbook_url` written without a scheme (`runbooks.example.org/x`) is taken as https.
 */
import type { AlertLink, AlertLinkLabel, Incident, RefusedLink } from './types.js';

/** Longest link shown; past it a URL is a dump, not an address (and Slack refuses it). */
export const MAX_LINK_LENGTH = 2000;

/** Which hosts links may point to. */
export interface LinkPolicy {
  /**
   * Host names (`grafana.example.org`), or `*.example.org` for any host under a domain; empty =
   * any host. Compared case-insensitively, without the port.
   */
  allowedHosts: readonly string[];
}

/** One link an alert offers, before it is checked. */
export interface LinkCandidate {
  label: AlertLinkLabel;
  /** The field it comes from, named as the sender names it (`runbook_url`, `dashboardURL`). */
  field: string;
  raw: string | undefined;
}

export type LinkCheck = { ok: true; url: string } | { ok: false; reason: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
/** A host (name, IPv4, `[IPv6]`) with an optional port: what a scheme-less link must start with. */
const BARE_HOST = /^(localhost|[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;
const SPACE_OR_CONTROL = /[\s\u0000-\u001F\u007F-\u009F]/;

/**
 * A raw link as a web address, or why it is not one. Empty → undefined (nothing to say).
 * `//host/…` and `host.example/…` are taken as https; `node1:9100/x` is a host and port, not
 * the scheme `node1:`.
 */
export function normalizeLink(raw: string | undefined): LinkCheck | undefined {
  const s = raw?.trim();
  if (!s) return undefined;
  if (s.length > MAX_LINK_LENGTH) return { ok: false, reason: `longer than ${MAX_LINK_LENGTH} characters` };
  if (SPACE_OR_CONTROL.test(s)) return { ok: false, reason: 'contains spaces or control characters' };
  let candidate = s;
  const scheme = SCHEME.exec(s);
  if (scheme && !/^[^:]*:\d/.test(s)) {
    const name = scheme[1]!.toLowerCase();
    if (name !== 'http' && name !== 'https') return { ok: false, reason: `not a web link (${name.slice(0, 20)}: scheme)` };
  } else if (s.startsWith('//')) candidate = `https:${s}`;
  else {
    const head = s.split(/[/?#]/, 1)[0] ?? '';
    if (!BARE_HOST.test(head)) return { ok: false, reason: 'not a web address (no scheme and no host)' };
    candidate = `https://${s}`;
  }
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.hostname === '') return { ok: false, reason: 'not a web address (no host)' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'carries a user name or password' };
  if (url.href.length > MAX_LINK_LENGTH) return { ok: false, reason: `longer than ${MAX_LINK_LENGTH} characters` };
  return { ok: true, url: url.href };
}

/**
 * `raw` with `https://` put in front when it is a web address written without a scheme
 * (`runbooks.example.org/x`, `//host/x`); anything else unchanged. What recall compares a
 * `runbook_url` by: a written scheme is kept exactly as the sender wrote it.
 */
export function withScheme(raw: string): string {
  const s = raw.trim();
  const check = normalizeLink(s);
  if (!check?.ok || (SCHEME.test(s) && !/^[^:]*:\d/.test(s))) return s;
  return s.startsWith('//') ? `https:${s}` : `https://${s}`;
}

/** A host name as the policy compares it: lower case, no trailing dot, IPv6 without brackets. */
function hostKey(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[(.*)\]$/, '$1');
}

/** True when `hostname` is one of `allowed` (exact, or under a `*.domain` entry); an empty list allows every host. */
export function hostAllowed(hostname: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const host = hostKey(hostname);
  for (const entry of allowed) {
    const e = hostKey(entry);
    if (e.startsWith('*.')) {
      if (host.endsWith(e.slice(1)) && host.length > e.length - 1) return true;
    } else if (host === e) return true;
  }
  return false;
}

/**
 * Checks each candidate: the links to show (in order, each URL once) and the refused ones with
 * their reason. Empty fields are neither.
 */
export function checkLinks(candidates: readonly LinkCandidate[], policy?: LinkPolicy): { links: AlertLink[]; refused: RefusedLink[] } {
  const links: AlertLink[] = [];
  const refused: RefusedLink[] = [];
  for (const c of candidates) {
    const check = normalizeLink(c.raw);
    if (!check) continue;
    if (!check.ok) {
      refused.push({ field: c.field, reason: check.reason });
      continue;
    }
    if (policy && !hostAllowed(new URL(check.url).hostname, policy.allowedHosts)) {
      refused.push({ field: c.field, reason: 'its host is not in links.allowed_hosts' });
      continue;
    }
    if (!links.some((l) => l.url === check.url)) links.push({ label: c.label, url: check.url });
  }
  return { links, refused };
}

/** Labels a pre-filled Alertmanager silence matches on. */
const SILENCE_MATCHERS = ['alertname', 'namespace', 'pod', 'service', 'job', 'cluster', 'instance'];

/** A pre-filled "new silence" page of the Alertmanager at `base` (its externalURL, path prefix kept). */
export function silencePageUrl(base: string, labels: Readonly<Record<string, string>>): string {
  const matchers = Object.entries(labels)
    .filter(([k]) => SILENCE_MATCHERS.includes(k))
    .map(([k, v]) => `${k}="${v.replace(/["\\]/g, '\\$&')}"`);
  return `${base.replace(/\/+$/, '')}/#/silences/new?filter=${encodeURIComponent(`{${matchers.join(',')}}`)}`;
}

/** Annotations teams put dashboard links in. */
const DASHBOARD_ANNOTATIONS = ['dashboard', 'dashboard_url', 'grafana_url', 'dashboardUrl'];

/** Links a source sends beside the alert (Grafana's per-alert URLs). */
export interface SourceLinks {
  dashboard?: string | undefined;
  panel?: string | undefined;
  silence?: string | undefined;
  image?: string | undefined;
}

/**
 * What an incident offers as links, strongest first: source, runbook, dashboards (the source's,
 * then annotations), panel, silence (the source's, else one pre-filled on its Alertmanager),
 * image. Grafana's image is a link only: nothing here or in a renderer fetches it.
 */
export function linkCandidates(i: Incident, source: SourceLinks = {}): LinkCandidate[] {
  const out: LinkCandidate[] = [
    { label: 'source', field: 'generatorURL', raw: i.generatorUrl },
    { label: 'runbook', field: 'runbook_url', raw: i.runbookUrl },
    { label: 'dashboard', field: 'dashboardURL', raw: source.dashboard },
  ];
  for (const key of DASHBOARD_ANNOTATIONS) out.push({ label: 'dashboard', field: key, raw: i.annotations[key] });
  out.push({ label: 'panel', field: 'panelURL', raw: source.panel });
  if (source.silence?.trim()) out.push({ label: 'silence', field: 'silenceURL', raw: source.silence });
  else if (i.alertmanagerUrl) out.push({ label: 'silence', field: 'externalURL', raw: silencePageUrl(i.alertmanagerUrl, i.labels) });
  out.push({ label: 'image', field: 'imageURL', raw: source.image });
  return out;
}

/** Checks an incident's links and keeps the outcome on it (`links`, `refusedLinks`). */
export function attachLinks(i: Incident, policy: LinkPolicy | undefined, source?: SourceLinks): void {
  const { links, refused } = checkLinks(linkCandidates(i, source), policy);
  i.links = links;
  if (refused.length > 0) i.refusedLinks = refused;
  else delete i.refusedLinks;
}
