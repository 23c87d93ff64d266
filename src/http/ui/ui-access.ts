/**
 * Who may read the memory view (issue 23 deliverable 2). Loopback peers get in; anyone else
 * needs the UI token (a bearer header, or the cookie `/ui/login` sets, which holds an HMAC of
 * the token and never the token) or the user header of an authenticating proxy, believed only
 * when the TCP peer is one of the configured proxies. When loopback is itself a trusted proxy
 * (a sidecar), loopback needs credentials too: the proxy's traffic would otherwise walk in.
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

function blockList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const [addr = '', bits] = raw.split('/');
    const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    if (isIP(addr) === 0) continue;
    if (bits === undefined) list.addAddress(addr, family);
    else list.addSubnet(addr, Number(bits), family);
  }
  return list;
}

/** An address as BlockList checks it: IPv4-mapped IPv6 as IPv4. */
function peerOf(address: string): { addr: string; family: 'ipv4' | 'ipv6' } | undefined {
  const v4 = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
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
    // A sidecar proxy connects from loopback: then loopback is the proxy, not the operator.
    if (isLoopback(r.peer) && !fromProxy) return { ok: true };
    return { ok: false };
  };
}
