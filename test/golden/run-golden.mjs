// `npm run golden [-- --update]`: the golden shift alone; with --update it rewrites the golden
// files (test/golden/*.txt) from what the shift shows now, for a person to read before committing.
import { spawnSync } from 'node:child_process';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const args = process.argv.slice(2);
const update = args.includes('--update') || args.includes('-u');
const vitest = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
const run = spawnSync(process.execPath, [vitest, 'run', 'test/golden', ...args.filter((a) => a !== '--update' && a !== '-u')], {
  stdio: 'inherit',
  env: { ...process.env, REPRISE_GOLDEN_UPDATE: update ? '1' : '0' },
});
process.exitCode = run.status ?? 1;
