import { parseArn } from '../arn.js';
import { reduceHost } from '../host-name.js';
import type { ResourceRef } from '../types.js';

/** Result of reading an entry's `resource` / `alert_resource`: a ref, or why it is unusable. */
export type ResourceParse = { ok: true; ref: ResourceRef } | { ok: false; reason: string };

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._:@-]*$/;

/**
 * Prefixes that make a resource a machine: `host/…`, or the alert label that names it
 * (`instance/node1:9100`, `hostname/…`, `node/…`, `nodename/…`). These words are reserved: a
 * Kubernetes namespace with one of these names cannot be the first segment of a resource.
 */
export const HOST_PREFIXES = ['host', 'instance', 'hostname', 'node', 'nodename'] as const;
const HOST_REF = new RegExp(`^(${HOST_PREFIXES.join('|')})/(.+)$`, 'i');

/**
 * Parse an entry's resource identity (SPEC §5):
 * - `namespace/name` → both; `namespace/kind/name` → namespace and name (kind is not identity);
 * - `arn:aws:<svc>:<region>:<account>:<type>/<id>` → name = the bare id (what follows the
 *   resource type, as `parseArn` reduces incident ARNs), account and region kept, no namespace;
 * - another cloud id with more segments (`projects/p/zones/z/instances/vm-1`) → name only,
 *   because its first segment is not a Kubernetes namespace;
 * - `host/node1` (or `instance/node1:9100`, `hostname/…`, `node/…`, `nodename/…`) → a machine,
 *   reduced as alerts' `instance` is (`node1:9100` → `node1`), kind `host`;
 * - a bare word → namespace only (the namespace tier of recall).
 */
export function parseResourceRef(value: string): ResourceParse {
  const raw = value.trim();
  if (raw === '') return { ok: false, reason: 'it is empty' };
  if (/\s/.test(raw)) return { ok: false, reason: 'it contains whitespace' };

  const hostRef = HOST_REF.exec(raw);
  if (hostRef) {
    const host = reduceHost(hostRef[2] ?? '');
    if (!host) return { ok: false, reason: `"${hostRef[2]}" is not a host name, IP address or URL (write ${hostRef[1]}/node1)` };
    return { ok: true, ref: { raw, kind: 'host', name: host } };
  }

  if (raw.startsWith('arn:')) {
    // Same reduction as incident workloads (core/arn.ts), or exact matching would never agree.
    const arn = parseArn(raw);
    if (!arn || arn.id === '') {
      return { ok: false, reason: 'an ARN needs the form arn:<partition>:<service>:<region>:<12-digit account>:<resource>' };
    }
    const ref: ResourceRef = { raw, name: arn.id };
    if (arn.region) ref.region = arn.region;
    if (arn.account && arn.account !== 'aws') ref.account = arn.account;
    return { ok: true, ref };
  }

  const segments = raw.split('/');
  if (segments.some((s) => s === '') && !raw.startsWith('/')) {
    return { ok: false, reason: 'it has an empty path segment (write namespace/name)' };
  }
  const parts = segments.filter((s) => s !== '');
  if (parts.length === 0) return { ok: false, reason: 'it has no name' };
  const bad = parts.find((p) => !SEGMENT.test(p));
  if (bad !== undefined) return { ok: false, reason: `segment "${bad}" has characters a resource name cannot have` };

  const [first, second, third] = parts;
  if (parts.length === 1 && first !== undefined) return { ok: true, ref: { raw, namespace: first } };
  if (parts.length === 2 && first !== undefined && second !== undefined && !raw.startsWith('/')) {
    return { ok: true, ref: { raw, namespace: first, name: second } };
  }
  if (parts.length === 3 && first !== undefined && third !== undefined && !raw.startsWith('/')) {
    return { ok: true, ref: { raw, namespace: first, name: third } };
  }
  const last = parts[parts.length - 1];
  if (last === undefined) return { ok: false, reason: 'it has no name' };
  return { ok: true, ref: { raw, name: last } };
}
