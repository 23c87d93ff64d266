/**
 * Reduce Kubernetes object names that carry generated suffixes to the controller that owns
 * them, so "the same thing" keeps one identity across restarts and rollouts.
 */

export type ControllerKind = 'deployment' | 'statefulset' | 'daemonset' | 'job' | 'cronjob' | 'pod';

export interface ReducedName {
  name: string;
  kind: ControllerKind;
}

/**
 * Characters Kubernetes uses for generated names (`rand.SafeEncodeString`): no vowels and no
 * 0/1/3, so generated suffixes never spell words.
 */
const SAFE_ALPHABET = /^[bcdfghjklmnpqrstvwxz2456789]+$/;

/**
 * True when `s` looks generated rather than written by a person. Real suffixes come from the
 * safe alphabet; we also accept any alphanumeric run containing a digit (test fixtures and
 * older clusters use hex), but never a plain word like `proxy` or `backend`.
 */
function looksGenerated(s: string): boolean {
  return /^[a-z0-9]+$/.test(s) && (SAFE_ALPHABET.test(s) || /[0-9]/.test(s));
}

/** A pod-template hash (ReplicaSet suffix): 6–10 generated chars, e.g. `7d9f8c6b5`. */
function isTemplateHash(s: string): boolean {
  return s.length >= 6 && s.length <= 10 && looksGenerated(s);
}

/** A pod's random suffix: exactly 5 generated chars, e.g. `x2k4q`. */
function isPodSuffix(s: string): boolean {
  return s.length === 5 && looksGenerated(s);
}

/**
 * A CronJob names its Jobs `<cronjob>-<scheduled minute since epoch>`: 8 digits until ~2160.
 * Exactly 8 keeps old-style numeric ReplicaSet hashes (9–10 digits) out.
 */
const CRONJOB_RUN = /^\d{8}$/;

/** StatefulSet ordinals: small integers. */
const ORDINAL = /^\d{1,4}$/;

function splitLast(s: string): [string, string] | undefined {
  const i = s.lastIndexOf('-');
  if (i <= 0 || i === s.length - 1) return undefined;
  return [s.slice(0, i), s.slice(i + 1)];
}

/**
 * Reduce a pod name to its controller family:
 * `web-7d9f8c6b5-x2k4q` → deployment `web`; `db-0` → statefulset `db`;
 * `fluent-bit-x2k4q` → daemonset `fluent-bit` (a bare Job's pod looks the same; daemonset is
 * the common case); `backup-28312345-x2k4q` → cronjob `backup`; anything else stays a pod.
 */
export function reducePodName(pod: string): ReducedName {
  const last = splitLast(pod);
  if (!last) return { name: pod, kind: 'pod' };
  const [head, tail] = last;

  if (ORDINAL.test(tail)) return { name: head, kind: 'statefulset' };
  if (!isPodSuffix(tail)) return { name: pod, kind: 'pod' };

  const mid = splitLast(head);
  if (mid) {
    const [base, middle] = mid;
    if (CRONJOB_RUN.test(middle)) return { name: base, kind: 'cronjob' };
    if (isTemplateHash(middle)) return { name: base, kind: 'deployment' };
  }
  return { name: head, kind: 'daemonset' };
}

/** `web-7d9f8c6b5` → `web` (the Deployment owning the ReplicaSet); else unchanged. */
export function reduceReplicaSetName(replicaset: string): string {
  const last = splitLast(replicaset);
  return last && isTemplateHash(last[1]) ? last[0] : replicaset;
}

/** `backup-28312345` → cronjob `backup`; any other Job name stays a job. */
export function reduceJobName(job: string): ReducedName {
  const last = splitLast(job);
  if (last && CRONJOB_RUN.test(last[1])) return { name: last[0], kind: 'cronjob' };
  return { name: job, kind: 'job' };
}
