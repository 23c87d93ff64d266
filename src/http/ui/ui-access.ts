/**
 * Who may read the memory view (issue 23 deliverable 2, issue 29 deliverables 2 and 6). Loopback
 * peers get in while no proxy is configured; anyone else needs the UI token (a bearer header —
 * wrong ones count against the peer's sign-in limit — or the session cookie a sign-in at
 * `/auth/ui` set: a random id checked against the session store, ui-sessions.ts) or the user
 * header of an authenticating proxy, believed only when the TCP peer is exactly one of the
 * configured proxies (addresses or CIDR blocks). Once any proxy is configured, loopback gets no
 * implicit pass: a proxy on this host connects from loopback, and its traffic would walk in.
 * The peer is always the socket's address, never a forwarded header.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { isLoopback } from '../http-app.js';
import type { SignInLimiter } from './sign-in-limiter.js';
import type { UiSessions } from './ui-sessions.js';

export const SESSION_COOKIE = 'reprise_ui';

export interface AccessOptions {
  token?: string;
  trustedHeader?: string;
  trustedProxies?: readonly string[];
  /** Where sign-ins are kept (required for the cookie to mean anything; without it only bearers count). */
  sessions?: UiSessions;
  /** Wrong bearer tokens count here too: a guess is a guess, by form or by header. */
  limiter?: SignInLimiter;
}

/** `session`: the id (as `reprise ui sessions` lists it) the request came in on. */
export type Access = { ok: true; who?: string; session?: string } | { ok: false; why: string; retryAfterMs?: number };

/** Constant-time equality of two strings (hashed first, so their lengths leak nothing either). */
export function sameSecret(a: string, b: string): boolean {
  const ha = createHmac('sha256', 'reprise-ui-compare').update(a).digest();
  const hb = createHmac('sha256', 'reprise-ui-compare').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** `::ffff:10.0.0.1` as `10.0.0.1`: a mapped address is the IPv4 peer it stands for. */
function unmapped(address: string): string {
  const a = address.toLowerCase();
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/** The listed addresses and blocks, exactly: nothing else (loopback included) is a proxy. */
function blockList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const [given = '', bits] = raw.trim().split('/');
    const addr = bits === undefined ? unmapped(given) : given;
    const family = isIP(addr);
    if (family === 0) continue; // the config schema refuses it before it gets here
    if (bits === undefined) list.addAddress(addr, family === 6 ? 'ipv6' : 'ipv4');
    else list.addSubnet(addr, Number(bits), family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** An address as BlockList checks it: IPv4-mapped IPv6 as IPv4. */
function peerOf(address: string): { addr: string; family: 'ipv4' | 'ipv6' } | undefined {
  const v4 = unmapped(address);
  const f = isIP(v4);
  return f === 0 ? undefined : { addr: v4, family: f === 4 ? 'ipv4' : 'ipv6' };
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

export interface AccessRequest {
  peer: string | undefined;
  header(name: string): string | undefined;
  /** Default: the wall clock. */
  now?: Date;
}

/** Decides access for one request. */
export function accessGate(opts: AccessOptions): (r: AccessRequest) => Promise<Access> {
  const proxies = blockList(opts.trustedProxies ?? []);
  const anyProxy = (opts.trustedProxies ?? []).length > 0;
  const trusted = (peer: string | undefined): boolean => {
    const p = peer === undefined ? undefined : peerOf(peer);
    return p !== undefined && proxies.check(p.addr, p.family);
  };
  return async (r) => {
    const now = r.now ?? new Date();
    const fromProxy = opts.trustedHeader !== undefined && trusted(r.peer);
    if (fromProxy) {
      const user = r.header(opts.trustedHeader!)?.trim();
      if (user) return { ok: true, who: user.slice(0, 200) };
    }
    let why = opts.token ? 'no token and no session' : 'not from this host, and no ui.token or trusted proxy is configured';
    if (opts.token) {
      const auth = r.header('authorization');
      const m = auth === undefined ? null : /^Bearer\s+(.+)$/i.exec(auth.trim());
      if (m) {
        const wait = opts.limiter?.waitMs(r.peer, now) ?? 0;
        if (wait > 0) return { ok: false, why: 'too many wrong tokens from this address', retryAfterMs: wait };
        if (sameSecret(m[1]!.trim(), opts.token)) {
          opts.limiter?.succeeded(r.peer);
          return { ok: true };
        }
        const f = opts.limiter?.failed(r.peer, now);
        why = `wrong bearer token${f ? ` (${f.failures} in a row from this address)` : ''}`;
      }
      const cookie = cookieValue(r.header('cookie'), SESSION_COOKIE);
      if (cookie !== undefined && opts.sessions) {
        const s = await opts.sessions.check(cookie, now);
        if (s.ok) return { ok: true, session: s.id };
        why = s.why;
      }
    }
    // Loopback is the operator only while no proxy is configured: a sidecar (or anything else
    // on this host a proxy might be) connects from loopback too, from 127.0.0.2 or [::1] as
    // well as from the address listed, and must not walk in without the header.
    if (!anyProxy && isLoopback(r.peer)) return { ok: true };
    return { ok: false, why };
  };
}
