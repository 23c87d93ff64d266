/**
 * Hidden markers in pull request bodies and comments (HTML comments: invisible on the forge).
 * They make curation idempotent and stateless: a draft's DupFingerprint, a note's id, an
 * open already coalesced. Untrusted text is neutralised before it reaches the forge, so only
 * the bot writes these.
 */

const HEX = /^[0-9a-f]{8,64}$/;
const ID = /^[A-Za-z0-9_.:-]{1,100}$/;

export type MarkerKind = 'dup' | 'note' | 'notes' | 'seen' | 'fix' | 'postmortem' | 'import' | 'entry';

/** `<!-- reprise:dup=<hex> -->` and friends; the value must be a hex digest or a plain id. */
export function marker(kind: MarkerKind, value: string): string {
  if (kind === 'dup' || kind === 'notes' ? !HEX.test(value) : !ID.test(value)) throw new Error(`bad ${kind} marker value ${JSON.stringify(value)}`);
  return `<!-- reprise:${kind}=${value} -->`;
}

/** True when `body` carries the marker. */
export function hasMarker(body: string, kind: MarkerKind, value: string): boolean {
  return body.includes(`<!-- reprise:${kind}=${value} -->`);
}

/** The values of every `kind` marker in `body`. */
export function markerValues(body: string, kind: MarkerKind): string[] {
  const out: string[] = [];
  const re = new RegExp(`<!-- reprise:${kind}=([A-Za-z0-9_.:-]{1,100}) -->`, 'g');
  for (const m of body.matchAll(re)) out.push(m[1]!);
  return out;
}
