/**
 * The process entry: `reprise <command> …` (src/cli/run-reprise.ts) on this process's standard
 * streams, environment, working directory and signals, its status as the exit code. Everything
 * process-wide lives here, so the CLI itself runs the same inside a test's own process.
 */
import { processIO } from './cli/io.js';
import { runReprise } from './cli/run-reprise.js';

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
const argv = process.argv.slice(2);
void runReprise(argv, processIO()).then((code) => {
  process.exitCode = code;
  // `serve` has closed and flushed everything by now. A request left in flight must not hold the
  // exit: the Matrix client's /sync long-poll waits up to 30 s, and the SDK cannot abort it.
  if (argv[0] === 'serve') setTimeout(() => process.exit(), 1000).unref();
});
