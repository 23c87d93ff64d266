/**
 * The grooming sweeps' hidden markers in pull request / issue bodies and comments (SPEC §10):
 * how the forge itself records what Reprise drafted and did, so sweeps need no state of their
 * own and a re-run is idempotent. Same `<!-- reprise:<kind>=<value> -->` form as the file-time
 * curator's (`markers.ts`, whose `dup` is the DupFingerprint); values are URI-encoded here, so
 * no value can end the comment or forge another marker.
 */

export type MarkerKind =
  /** The DupFingerprint of the finding a KB PR drafts (written by the file-time curator). */
  | 'dup'
  /** A retirement PR for the catalog entry at this path. */
  | 'retire'
  /** A revalidation PR for the catalog entry at this path. */
  | 'revalidate'
  /** A knowledge-gap issue for this trigger key / fingerprint. */
  | 'gap'
  /** A sweep comment: `<action>:<key>`. */
  | 'sweep';

const MARKER = /<!--\s*reprise:([a-z]+)=([^\s>]*)\s*-->/g;

export function marker(kind: MarkerKind, value: string): string {
  return `<!-- reprise:${kind}=${encodeURIComponent(value)} -->`;
}

/** Every value of `kind` in `text`, decoded, in order. */
export function readMarkers(text: string, kind: MarkerKind): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(MARKER)) {
    if (m[1] !== kind) continue;
    try {
      out.push(decodeURIComponent(m[2]!));
    } catch {
      // a malformed value is no marker
    }
  }
  return out;
}

/** The first value of `kind`, if any. */
export function readMarker(text: string, kind: MarkerKind): string | undefined {
  return readMarkers(text, kind)[0];
}

/** True when `text` carries any Reprise marker. */
export function hasAnyMarker(text: string): boolean {
  MARKER.lastIndex = 0;
  return /<!--\s*reprise:[a-z]+=/.test(text);
}

/**
 * Untrusted text (alert text, titles from a human PR) with every marker-like sequence
 * defused, so it cannot forge one when quoted in a body or comment.
 */
export function defuseMarkers(text: string): string {
  return text.replace(/<!--/g, '&lt;!--').replace(/-->/g, '--&gt;');
}
