/**
 * The one glob dialect of every config field that matches alert values (`trigger.match`,
 * `trigger.ignore`, investigate scope `when` / `allow`): picomatch, case-insensitive, over the
 * whole value. `*` is any run of characters (a `/` in a label value included), `?` one
 * character, `[abc]` one of a set, `{a,b}` either, and a leading `!` negates.
 */
import picomatch from 'picomatch';

const OPTIONS: picomatch.PicomatchOptions = { nocase: true, bash: true, dot: true };

/** The glob as a predicate over one value. */
export function globMatcher(glob: string): (value: string) => boolean {
  return picomatch(glob, OPTIONS);
}
