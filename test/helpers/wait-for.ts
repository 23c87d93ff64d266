/**
 * The one way a test waits: for a named condition, polled, with a generous deadline (a loaded
 * 2-core machine runs several suites at once). A test never sleeps a fixed time to conclude that
 * something did or did not happen; it waits for the signal that the work finished (a ledger
 * event, a log line, the bot's `/readyz` outbox figures — see `settled` in
 * test/integration/helpers/spawn-bot.ts) and then asserts.
 */

export interface WaitOptions {
  /** What is waited for, as the failure names it: "the card edited to resolved". */
  what: string;
  /** How long before the wait fails (default {@link DEFAULT_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Between two looks (default 25 ms). */
  intervalMs?: number;
}

/** Long enough for a spawned bot on a machine running other suites; a pass never waits it out. */
export const DEFAULT_TIMEOUT_MS = 20_000;

/** Thrown by a probe to end the wait at once (the condition can no longer hold: the process exited). */
export class GiveUp extends Error {}

/** What a probe answers when the condition does not hold yet. */
type NotYet = undefined | null | false;

/**
 * Polls `condition` (sync or async) until it returns something other than undefined, null or
 * false, and resolves with that. A probe that throws counts as "not yet" (a file half written, a
 * server not listening yet); its last error is in the failure message — except {@link GiveUp},
 * which ends the wait with that error. `opts` may be just what
 * is waited for, with the timeout as a third argument.
 * @throws after the timeout, naming what it waited for.
 */
export async function waitFor<T>(condition: () => T | NotYet | Promise<T | NotYet>, opts: WaitOptions | string, timeout?: number): Promise<T> {
  const o: WaitOptions = typeof opts === 'string' ? { what: opts, ...(timeout === undefined ? {} : { timeoutMs: timeout }) } : opts;
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await condition();
      if (v !== undefined && v !== null && v !== false) return v;
    } catch (err) {
      if (err instanceof GiveUp) throw err;
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last === undefined ? '' : ` (last probe failed: ${last instanceof Error ? last.message : String(last)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${o.what}${why}`);
    }
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 25));
  }
}
