/**
 * The host an alert's `instance` (or `host`, `hostname`, `nodename`) names, reduced so every
 * exporter and probe of one machine agrees: `node1:9100` → `node1`,
 * `https://api.example.com:8443/health` → `api.example.com`, `[2001:db8::1]:9100` → `2001:db8::1`.
 */

/** Longest host name kept (DNS names are at most 253 characters). */
const MAX_HOST = 253;

/** What a host name may hold once reduced: DNS names, IPv4, IPv6 (colons, `::1`), zone-less. */
const HOST = /^[A-Za-z0-9_:](?:[A-Za-z0-9_.:-]*[A-Za-z0-9_.:])?$/;

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

function fromUrl(value: string): string | undefined {
  try {
    const u = new URL(value);
    // URL.hostname keeps the brackets of an IPv6 literal.
    return u.hostname.replace(/^\[(.*)\]$/, '$1') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The host part of an instance-like value, or undefined when none can be read. A bare IPv6
 * address (several colons, no brackets) is kept whole: its last group is not a port.
 */
export function reduceHost(raw: string): string | undefined {
  let v = raw.trim();
  if (v === '') return undefined;
  if (SCHEME.test(v)) {
    const host = fromUrl(v);
    if (host !== undefined) return valid(host);
    v = v.replace(SCHEME, '');
  }
  // `user@host`, then a path, query or fragment after the authority.
  v = v.replace(/^[^@/]*@/, '');
  v = v.split(/[/?#]/, 1)[0] ?? '';
  const bracketed = /^\[([^\]]+)\](?::\d*)?$/.exec(v);
  if (bracketed) return valid(bracketed[1] ?? '');
  const colons = v.split(':').length - 1;
  if (colons === 1) v = v.slice(0, v.indexOf(':'));
  return valid(v);
}

function valid(host: string): string | undefined {
  const h = host.replace(/\.$/, '');
  return h.length <= MAX_HOST && HOST.test(h) && /[A-Za-z0-9]/.test(h) ? h : undefined;
}
