/**
 * Memory-view sessions through one real `reprise serve` (issue 29 item 6): each sign-in is its
 * own session (two sign-ins, two cookies), listed and revoked by `reprise ui sessions` through
 * the control socket and, with the bot stopped, on the store itself (a durable store keeps
 * them across the restart); 100 wrong tokens in a row are refused with Retry-After and every
 * refusal is logged with its request id.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { request } from './helpers/alerts.js';
import { cleanup, makeTmpDir, runCli, spawnBot } from './helpers/spawn-bot.js';

const TOKEN = 'c0ffee11d00d22beef33f00d44cafe55';

afterEach(cleanup);

describe('reprise serve: memory-view sign-in', () => {
  it('two sign-ins are two sessions, listed and revoked by the CLI; 100 wrong tokens are refused and logged', { timeout: 120_000 }, async () => {
    const dir = makeTmpDir();
    const env = { REPRISE_DATA_DIR: dir, REPRISE_UI_TOKEN: TOKEN };
    const bot = await spawnBot({ dataDir: dir, env });
    const signIn = (token: string) =>
      request(bot.url, { path: '/auth/ui', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString() });
    const a = await signIn(TOKEN);
    const b = await signIn(TOKEN);
    expect([a.status, b.status]).toEqual([303, 303]);
    const cookie = (r: { headers: Record<string, unknown> }): string => String(r.headers['set-cookie']).split(';')[0]!;
    expect(cookie(a)).not.toBe(cookie(b));
    expect(cookie(a)).not.toContain(TOKEN);

    const listed = await runCli(['ui', 'sessions', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const sessions = (JSON.parse(listed.stdout) as { sessions: Array<{ id: string }> }).sessions;
    expect(sessions).toHaveLength(2);
    const revoked = await runCli(['ui', 'sessions', 'revoke', sessions[0]!.id], { env });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`revoked 1 session: ${sessions[0]!.id}`);
    const unknown = await runCli(['ui', 'sessions', 'revoke', 'abcdef123456'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no live session has the id abcdef123456/);
    expect((await runCli(['ui', 'sessions', 'revoke'], { env })).code).toBe(2);

    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await signIn(`wrong-token-${i}-xxxxxxxxxxxxxx`)).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(90);
    const limited = await signIn(TOKEN);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    await bot.waitForLog((l) => l.msg === 'memory view request refused' && l['status'] === 429, 10_000);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    const refusals = bot.logs().filter((l) => l.msg === 'memory view request refused');
    expect(refusals.length).toBeGreaterThanOrEqual(101);
    expect(refusals.every((l) => typeof l['requestId'] === 'string' && (l['requestId'] as string).length > 0)).toBe(true);
    expect(bot.stderr()).not.toContain(TOKEN);

    // The store is durable: the session left is still there with the bot stopped, and revoked on the store itself.
    const offline = await runCli(['ui', 'sessions', '--json'], { env });
    expect(offline.code, offline.stderr).toBe(0);
    expect((JSON.parse(offline.stdout) as { sessions: unknown[] }).sessions).toHaveLength(1);
    const all = await runCli(['ui', 'sessions', 'revoke', '--all'], { env });
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain('revoked 1 session');
    expect((await runCli(['ui', 'sessions'], { env })).stdout).toContain('no signed-in sessions');
  });
});
