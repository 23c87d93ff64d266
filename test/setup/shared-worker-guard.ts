/**
 * Test files share their worker (vitest.config.ts, `isolate: false`): modules are loaded once
 * per worker, not once per file. That is safe only while no file leaves the process changed for
 * the next one, so this runs around every file and fails the file that does — its environment,
 * working folder, fake timers, or process signal/exit listeners it added and did not remove.
 */
import { afterAll, beforeAll, vi } from 'vitest';

const WATCHED = ['exit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'uncaughtException', 'unhandledRejection'] as const;

let env: Record<string, string | undefined> = {};
let cwd = '';
let listeners: Record<string, number> = {};

const countListeners = (): Record<string, number> => Object.fromEntries(WATCHED.map((e) => [e, process.listenerCount(e)]));

beforeAll(() => {
  env = { ...process.env };
  cwd = process.cwd();
  listeners = countListeners();
});

afterAll(() => {
  const problems: string[] = [];
  const keys = new Set([...Object.keys(env), ...Object.keys(process.env)]);
  for (const k of keys) {
    if (process.env[k] === env[k]) continue;
    problems.push(`process.env.${k} changed (${env[k] === undefined ? 'unset' : 'set'} before the file)`);
    if (env[k] === undefined) delete process.env[k];
    else process.env[k] = env[k];
  }
  if (process.cwd() !== cwd) {
    problems.push(`the working folder moved to ${process.cwd()}`);
    process.chdir(cwd);
  }
  if (vi.isFakeTimers()) {
    problems.push('fake timers are still on');
    vi.useRealTimers();
  }
  const now = countListeners();
  for (const e of WATCHED)
    if ((now[e] ?? 0) > (listeners[e] ?? 0)) problems.push(`${(now[e] ?? 0) - (listeners[e] ?? 0)} process '${e}' listener(s) left behind`);
  if (problems.length > 0) throw new Error(`this test file leaves the shared worker changed for the next file: ${problems.join('; ')}`);
});
