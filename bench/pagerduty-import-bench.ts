/**
 * How long `reprise import pagerduty --dry-run` takes over a long history, and how many PagerDuty
 * requests it makes (issue 31 item 3): N resolved incidents on the PagerDuty stand-in (a third
 * with a `fix:` note, the rest resolved with a message — half of them only "Resolved through the
 * website."), the built CLI (`dist/main.js`) reading them all. Prints one JSON line of figures;
 * it asserts nothing (timings are not tests). The stand-in answers at once: against PagerDuty
 * itself, the request count over its rate limit (~900 a minute per key) is what bounds a run.
 *
 *   npm run build && node --experimental-transform-types --disable-warning=ExperimentalWarning \
 *     --import ./bench/ts-resolve.js bench/pagerduty-import-bench.ts 3000
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPagerDutyFake } from '../test/fakes/pagerduty-fake.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const N = Number(process.argv[2] ?? 3000);
const now = Date.now();
const incidents = Array.from({ length: N }, (_, i) => ({
  id: `P${i}`,
  incident_number: i,
  title: `Alert ${i % 150} firing on svc ${i % 7}`,
  status: 'resolved',
  created_at: new Date(now - (i + 1) * 3_600_000).toISOString(),
  service: { id: `PS${i % 7}`, summary: `svc${i % 7}` },
}));
const notes: Record<string, unknown[]> = {};
const logEntries: Record<string, unknown[]> = {};
for (const [i, inc] of incidents.entries()) {
  if (i % 3 === 0) notes[inc.id] = [{ content: `looking\n\nfix: restarted worker ${i % 5}`, created_at: inc.created_at, user: { id: 'PU', summary: 'Ann' } }];
  else
    logEntries[inc.id] = [
      { type: 'resolve_log_entry', created_at: inc.created_at, channel: { summary: i % 2 ? 'Resolved through the website.' : `Rolled back svc to v${i % 4}` } },
    ];
}
const fake = await startPagerDutyFake({ token: 'bench-token', history: { incidents, notes, logEntries } });
const dir = mkdtempSync(join(tmpdir(), 'reprise-pd-bench-'));
const t0 = performance.now();
const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
  const child = spawn(process.execPath, [MAIN, 'import', 'pagerduty', '--since', `${Math.ceil(N / 24) + 1}d`, '--dry-run', '--json'], {
    env: { ...process.env, REPRISE_DATA_DIR: dir, REPRISE_PAGERDUTY_TOKEN: 'bench-token', REPRISE_PAGERDUTY_API_URL: fake.apiUrl },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.on('close', (code) => resolve({ code, stdout, stderr }));
});
const wallMs = Math.round(performance.now() - t0);
await fake.close();
rmSync(dir, { recursive: true, force: true });
if (run.code !== 0) {
  process.stderr.write(run.stderr);
  process.exitCode = 1;
} else {
  const out = JSON.parse(run.stdout) as { read: number; fixes: unknown[]; skipped: unknown[] };
  const progress = run.stderr.split('\n').filter((l) => l.startsWith('reading incidents')).length;
  process.stdout.write(
    `${JSON.stringify({ incidents: N, wallMs, requests: fake.requests.length, read: out.read, fixes: out.fixes.length, skipped: out.skipped.length, progressLines: progress })}\n`,
  );
}
