import { accessSync, constants } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Where the tests' temporary folders go (the bots' stores, git remotes, clones). The embedded
 * store fsyncs every write (WAL, synchronous=FULL); on this machine's disk that is ~1.5 ms a
 * write and far more while other jobs write too, so the 6,000-event Matrix batch took 83 s on
 * /tmp and 33 s on a tmpfs. A tmpfs (/dev/shm) keeps what a kill -9 test needs (the page cache
 * outlives the process) and loses only what no test checks (a power cut). A TMPDIR set by
 * whoever runs the suite wins.
 */
function tmpfs(): string | undefined {
  if (process.env['TMPDIR']) return undefined;
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return undefined;
  }
}

const tmp = tmpfs();

/**
 * One worker more than the cores, at most four: most integration files spend their time waiting
 * (a spawned bot, a stand-in's answer, a timer), so a third file overlaps those waits with the
 * others' CPU. Measured on the 2-core machine, quiet: `vitest run` 258 s with 2 workers, 202 s
 * with 3, every file passing. A suite that needs a quiet machine is a bug in a test, not a reason
 * for fewer workers (tests wait on state, not on time).
 */
const workers = Math.min(4, Math.max(2, availableParallelism() + 1));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: workers,
    /**
     * Files share their worker: the modules under test load once per worker instead of once per
     * file (258 files; measured quiet on the 2-core machine, `vitest run` 253 s isolated → 170 s
     * shared, `test/unit` 74 s → 36 s). test/setup/shared-worker-guard.ts fails any file that
     * leaves the process changed for the next one (environment, working folder, fake timers,
     * signal listeners).
     */
    isolate: false,
    setupFiles: ['test/setup/shared-worker-guard.ts'],
    ...(tmp ? { env: { TMPDIR: tmp } } : {}),
  },
});
