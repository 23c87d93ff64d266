/**
 * Which requests are addressed to this bot at all (issue 29 deliverable 1): the one rule every
 * route of the public port and `reprise mcp --http` apply before anything else.
 *
 * DNS rebinding points a name the attacker owns (`evil.example`) at 127.0.0.1: a browser page
 * on it then reaches the bot as "loopback", but it still sends its own name in `Host` (and, for
 * anything but a plain navigation, in `Origin`). So a request must name this bot:
 *
 * - `Host` is a loopback name (`localhost`, 127.0.0.0/8, `::1`), a configured public name
 *   (`server.public_url`'s host, `ui.allowed_hosts`, `*.domain` allowed), or the IP address the
 *   connection arrived on (kubelet probes and Prometheus scrape a pod by its IP: an address is
 *   not a name an attacker can rebind);
 * - `Origin`, when a browser sends one, names one of those hosts too (`null`, which sandboxed
 *   frames send, never does);
 * - `Sec-Fetch-Site: cross-site` is refused except for a top-level GET navigation (a link to a
 *   `/ui` page from a wiki or a chat message): another site's page may not make the browser
 *   fetch from here, nor submit a form.
 *
 * Webhook senders are not browsers and send no `Origin`: the `Host` rule still applies.
 */
import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import { RepriseError } from '../core/errors.js';

/** The names a bot answers to besides loopback: lower-case host names, `*.domain` for any host under it. */
export interface HostNames {
  names: readonly string[];
}

/** The configured public names: `server.public_url`'s host and `ui.allowed_hosts`. */
export function hostNames(opts: { publicUrl?: string | undefined; allowedHosts?: readonly string[] | undefined }): HostNames {
  const names = new Set<string>();
  if (opts.publicUrl) {
    const h = hostOf(opts.publicUrl.includes('://') ? opts.publicUrl : `http://${opts.publicUrl}`);
    if (h) names.add(h);
  }
  for (const raw of opts.allowedHosts ?? []) {
    const n = normalise(raw.replace(/^\[|\]$/g, ''));
    if (n) names.add(n);
  }
  return { names: [...names] };
}

function normalise(host: string): string {
  return host.trim().toLowerCase().replace(/\.$/, '');
}

/** The host of an absolute URL (an Origin), brackets dropped; undefined when it is none. */
function hostOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return normalise(u.hostname.replace(/^\[|\]$/g, ''));
  } catch {
    return undefined;
  }
}

/** `name`, `name:port`, `1.2.3.4:port`, `[v6]:port` — a Host header — as its host; undefined when malformed. */
export function hostOfHeader(value: string): string | undefined {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(value.trim());
  if (!m) return undefined;
  const host = normalise(m[1]!.replace(/^\[|\]$/g, ''));
  if (m[1]!.startsWith('[') && isIP(host) !== 6) return undefined;
  return host === '' ? undefined : host;
}

/** IPv4-mapped IPv6 (`::ffff:127.0.0.1`) as the IPv4 address it is. */
function unmapped(address: string): string {
  const a = address.toLowerCase();
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/** True for an address or name only this machine can reach: `localhost`, 127.0.0.0/8, `::1` (and their mapped forms). */
export function isLoopbackHost(host: string): boolean {
  const h = unmapped(normalise(host.replace(/^\[|\]$/g, '')));
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^(0{0,4}:){7}0{0,3}1$/.test(h);
  return false;
}

function listed(host: string, names: readonly string[]): boolean {
  for (const n of names) {
    if (n.startsWith('*.')) {
      if (host.endsWith(n.slice(1)) && host.length > n.length - 1) return true;
    } else if (n === host) return true;
  }
  return false;
}

/** Whether a host (from `Host` or `Origin`) names this bot, for a connection that arrived on `localAddress`. */
export function namesThisBot(host: string, rule: HostNames, localAddress?: string): boolean {
  if (isLoopbackHost(host)) return true;
  if (isIP(host) !== 0) return localAddress !== undefined && unmapped(localAddress) === unmapped(host);
  return listed(host, rule.names);
}

export interface HostRequest {
  method: string;
  header(name: string): string | undefined;
  /** The request URL's host when no Host header was sent (an in-process `app.request`). */
  urlHost?: string;
  /** The socket's own address (where the connection arrived). */
  localAddress?: string;
}

/** Why a request is not addressed to this bot, in words that say how to fix it; undefined when it is. */
export function hostRefusal(r: HostRequest, rule: HostNames): string | undefined {
  const raw = r.header('host') ?? r.urlHost;
  const host = raw === undefined ? undefined : hostOfHeader(raw);
  const hint = 'set server.public_url (REPRISE_PUBLIC_URL) to the URL people and senders use, or list the name in ui.allowed_hosts';
  if (host === undefined) return `the Host header ${raw === undefined ? 'is missing' : `"${raw.slice(0, 100)}" is not a host name`}`;
  if (!namesThisBot(host, rule, r.localAddress)) return `this bot does not answer to the host "${host.slice(0, 100)}": ${hint}`;
  const origin = r.header('origin');
  if (origin !== undefined) {
    const oh = origin === 'null' ? undefined : hostOf(origin);
    if (oh === undefined || !namesThisBot(oh, rule, r.localAddress))
      return `cross-origin requests are refused (Origin ${origin.slice(0, 100)}); pages of other sites may not call this bot`;
  }
  const site = r.header('sec-fetch-site')?.toLowerCase();
  if (site === 'cross-site') {
    const navigation = (r.method === 'GET' || r.method === 'HEAD') && r.header('sec-fetch-mode')?.toLowerCase() === 'navigate';
    if (!navigation) return 'cross-site requests are refused (Sec-Fetch-Site: cross-site); open the page directly instead';
  }
  return undefined;
}

/** The socket's own address behind a hono context (absent for an in-process `app.request`). */
function localAddressOf(c: Context): string | undefined {
  return (c.env as { incoming?: { socket?: { localAddress?: string } } } | undefined)?.incoming?.socket?.localAddress;
}

/** {@link hostRefusal} for a hono request. */
export function refusalOf(c: Context, rule: HostNames): string | undefined {
  const local = localAddressOf(c);
  return hostRefusal(
    { method: c.req.method, header: (n) => c.req.header(n), urlHost: new URL(c.req.url).host, ...(local !== undefined ? { localAddress: local } : {}) },
    rule,
  );
}

/** The rule as hono middleware: a refusal is thrown as 403 with the reason (the app's error path logs it with the request id). */
export function hostGuard(rule: HostNames): MiddlewareHandler {
  return async (c, next) => {
    const why = refusalOf(c, rule);
    if (why !== undefined) throw new RepriseError('forbidden', why, { userMessage: why });
    await next();
  };
}
