import { createHash } from 'node:crypto';
import type { Incident } from '../types.js';

/** The incident's resource reference as curation names it: `namespace/name`, or empty. */
export function resourceRef(incident: Incident): string {
  const w = incident.workload;
  if (!w) return '';
  return [w.cluster, w.namespace, w.name, w.account].filter(Boolean).join('/');
}

/**
 * DupFingerprint (SPEC §10): deterministic identity of "the same finding", so drafts of one
 * recurring problem coalesce into one pull request.
 */
export function dupFingerprint(incident: Incident): string {
  return createHash('sha256')
    .update(`${resourceRef(incident)}|trigger:${incident.triggerKey}`)
    .digest('hex');
}
