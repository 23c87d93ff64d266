/**
 * Who may read the memory view (issue 23 deliverable 2, issue 29 deliverable 2). Loopback peers
 * get in while no proxy is configured; anyone else needs the UI token (a bearer header, or the
 * cookie `/ui/login` sets, which holds an HMAC of the token and never the token) or the user
 * header of an authenticating proxy, believed only when the TCP peer is exactly one of the
 * configured proxies (addresses or CIDR blocks). Once any proxy is configured, loopback gets no
 * implicit pass: a proxy on this host connects from loopback, and its traffic would walk in.
 * The peer is always the socket's address, never a forwarded header.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { isLoopback } from '../http-app.js';

export const SESSION_COOKIE = 'reprise_ui';

export interface AccessOptions {
  token?: string;
  trustedHeader?: string;
  trustedProxies?: readonly string[];
}

export type Access = { ok: true; who?: string } | { ok: false };

/** The cookie value for a token: a keyed hash, so the cookie never carries the token itself. */
export function sessionValue(token: string): string {
  return createHmac('sha256', token).update('reprise-ui-session-v1').digest('base64url');
}

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
}

/** Decides access for one request. */
export function accessGate(opts: AccessOptions): (r: AccessRequest) => Access {
  const proxies = blockList(opts.trustedProxies ?? []);
  const anyProxy = (opts.trustedProxies ?? []).length > 0;
  const session = opts.token ? sessionValue(opts.token) : undefined;
  const trusted = (peer: string | undefined): boolean => {
    const p = peer === undefined ? undefined : peerOf(peer);
    return p !== undefined && proxies.check(p.addr, p.family);
  };
  return (r) => {
    const fromProxy = opts.trustedHeader !== undefined && trusted(r.peer);
    if (fromProxy) {
      const user = r.header(opts.trustedHeader!)?.trim();
      if (user) return { ok: true, who: user.slice(0, 200) };
    }
    if (opts.token) {
      const auth = r.header('authorization');
      const m = auth === undefined ? null : /^Bearer\s+(.+)$/i.exec(auth.trim());
      if (m && sameSecret(m[1]!.trim(), opts.token)) return { ok: true };
      const cookie = cookieValue(r.header('cookie'), SESSION_COOKIE);
      if (cookie !== undefined && session !== undefined && sameSecret(cookie, session)) return { ok: true };
    }
    // Loopback is the operator only while no proxy is configured: a sidecar (or anything else
    // on this host a proxy might be) connects from loopback too, from 127.0.0.2 or [::1] as
    // well as from the address listed, and must not walk in without the header.
    if (!anyProxy && isLoopback(r.peer)) return { ok: true };
    return { ok: false };
  };
}
