/**
 * A local working copy of a catalog kept in step with a remote (SPEC §5 "Sync"). The git
 * adapter (`simple-git`) implements it; the sync service only sees commits and changed paths.
 */

/** One path a commit range touched, relative to the repository root (with `/`). */
export interface MirrorChange {
  /** `A` added, `M` modified, `D` deleted, `T` type changed (file ↔ link); renames come as D + A. */
  status: string;
  path: string;
}

export interface CatalogMirror {
  /** The working tree (repository root). */
  readonly dir: string;
  /** The remote as safe to show: credentials in the URL are masked. */
  readonly remote: string;
  readonly branch: string;
  /** The commit the working tree holds now, or undefined when there is no usable clone yet. */
  localHead(): Promise<string | undefined>;
  /**
   * Brings the working tree to the remote branch's tip: clones when there is no clone, else
   * fetches and resets hard (never merges; local edits are discarded).
   * @returns the commit the working tree holds afterwards.
   * @throws Error (credentials masked) when the remote cannot be reached or read.
   */
  update(): Promise<string>;
  /** Paths that differ between two commits of the clone. */
  changes(from: string, to: string): Promise<MirrorChange[]>;
}
