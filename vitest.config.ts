import { accessSync, constants } from 'node:fs';
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

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    ...(tmp ? { env: { TMPDIR: tmp } } : {}),
  },
});
