/**
 * The process entry: `reprise <command> …` (src/cli/run-reprise.ts) on this process's standard
 * streams, environment, working directory and signals, its status as the exit code. Everything
 * process-wide lives here, so the CLI itself runs the same inside a test's own process.
 */
import * as nodeModule from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { processIO } from './runtime/cli-io.js';
import { runReprise } from './cli/run-reprise.js';

/**
 * Node's on-disk cache of compiled modules (Node ≥ 22.1): a start compiles the few hundred
 * modules `serve` loads once, later starts read them back — a tenth of a start's time. In the
 * user's own cache folder, never a shared /tmp another user could fill. `NODE_COMPILE_CACHE`
 * (another folder) and `NODE_DISABLE_COMPILE_CACHE=1` work as Node documents; a folder that
 * cannot be written only means no cache.
 */
function compileCache(): void {
  const enable = (nodeModule as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
  if (typeof enable !== 'function' || process.env['NODE_COMPILE_CACHE'] || process.env['NODE_DISABLE_COMPILE_CACHE']) return;
  try {
    enable(join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'reprise', 'node-compile-cache'));
  } catch {
    // no cache: every start compiles, as without one
  }
}

/**
 * node:sqlite (the embedded ledger store) is stable enough for us but still flagged
 * experimental in Node 22; its one-line warning on every start only confuses operators.
 * Every other warning is still printed.
 */
function quietSqliteWarning(): void {
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    if (w.name === 'ExperimentalWarning' && /SQLite/i.test(w.message)) return;
    process.stderr.write(`${w.name}: ${w.message}\n`);
  });
}

quietSqliteWarning();
compileCache();
const argv = process.argv.slice(2);
void runReprise(argv, processIO()).then((code) => {
  process.exitCode = code;
  // `serve` has closed and flushed everything by now. A request left in flight must not hold the
  // exit: the Matrix client's /sync long-poll waits up to 30 s, and the SDK cannot abort it.
  if (argv[0] === 'serve') setTimeout(() => process.exit(), 1000).unref();
});
