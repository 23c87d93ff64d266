/**
 * The harness itself (issue 30 item 4): `reprise serve` and the CLI run in the test's own
 * process leave nothing process-wide behind — no signal listener, no exit code — and two bots
 * side by side keep their own port, log lines, transcript and stop. What only a process has
 * (the child, a kill) says how to get one.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import { crashLoopPayload, postAlert } from './helpers/alerts.js';
import { cleanup, makeTmpDir, runCli, spawnBot } from './helpers/spawn-bot.js';

afterEach(cleanup);

const listeners = (): number[] => ['SIGTERM', 'SIGINT'].map((s) => process.listenerCount(s));

describe('serve in the test process', () => {
  it('two bots side by side keep their own port, logs, transcript and stop; no signal listener or exit code is left', { timeout: 60_000 }, async () => {
    const before = listeners();
    const exitCode = process.exitCode;
    const a = await spawnBot({ dataDir: makeTmpDir() });
    const b = await spawnBot({ dataDir: makeTmpDir() });
    expect(a.port).not.toBe(b.port);
    expect(listeners(), 'serve waits on the harness, not on process signals').toEqual(before);

    expect((await postAlert(a.url, crashLoopPayload({ status: 'firing' }))).status).toBe(202);
    await a.waitForTranscript((ls) => ls.some((l) => l.kind === 'rca'));
    await b.settled();
    expect(b.transcriptLines(), 'the other bot posted nothing').toEqual([]);
    expect(a.logs().some((l) => l.msg === `listening on http://127.0.0.1:${a.port}`)).toBe(true);
    expect(a.stderr()).not.toContain(`127.0.0.1:${b.port}`);
    expect(b.stderr()).not.toContain(`127.0.0.1:${a.port}`);
    expect(b.logs().some((l) => typeof l.msg === 'string' && l.msg.startsWith('alertmanager webhook'))).toBe(false);

    // What only a child process has says how to get one.
    expect(() => a.child).toThrow(/spawnBot\(\{ \.\.\., process: true \}\)/);
    await expect(a.kill()).rejects.toThrow(/process: true/);
    expect(a.pid).toBe(process.pid);

    expect(await a.stop()).toEqual({ code: 0, signal: null });
    expect(a.alive()).toBe(false);
    expect(b.alive()).toBe(true);
    expect((await fetch(`${b.url}/readyz`)).status, 'the other bot still ready').toBe(200);
    expect(await b.stop()).toEqual({ code: 0, signal: null });
    expect(listeners()).toEqual(before);
    expect(process.exitCode).toBe(exitCode);
  });

  it('a serve that cannot start rejects with its exit status and stderr', { timeout: 60_000 }, async () => {
    const dir = makeTmpDir();
    await expect(spawnBot({ dataDir: dir, args: ['--config', join(dir, 'missing.yaml')] })).rejects.toThrow(
      /serve exited \(2\) before listening:[\s\S]*missing\.yaml/,
    );
    await expect(spawnBot({ dataDir: dir, args: ['--port', 'eighty'] })).rejects.toThrow(/--port must be an integer/);
  });

  it('a CLI serve that overruns its time is reported, then stopped: its store lock is free again', { timeout: 60_000 }, async () => {
    const dataDir = makeTmpDir();
    const before = listeners();
    await expect(runCli(['serve', '--port', '0', '--host', '127.0.0.1'], { env: { REPRISE_DATA_DIR: dataDir }, timeoutMs: 3000 })).rejects.toThrow(
      /reprise serve --port 0 --host 127\.0\.0\.1 did not finish in 3000 ms[\s\S]*listening on/,
    );
    await waitFor(() => !existsSync(join(dataDir, 'serve.json')), 'the overrun serve stopped (its announcement removed)');
    const again = await spawnBot({ dataDir });
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
    expect(listeners()).toEqual(before);
  });
});

describe('the CLI in the test process', () => {
  it('answers with its status and output, as the process would', async () => {
    const exitCode = process.exitCode;
    const version = await runCli(['--version']);
    expect(version).toEqual({ code: 0, signal: null, stdout: 'reprise 0.1.0\n', stderr: '' });
    const unknown = await runCli(['no-such-command']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^reprise: unknown command "no-such-command"/);
    expect(unknown.stdout).toBe('');
    // Input is data: the CLI reads it through its stdin, and what it prints is terminal-safe.
    const recall = await runCli(['recall', '--alert', '-', '--json'], {
      input: JSON.stringify(crashLoopPayload({ status: 'firing', pod: 'checkout-api-\u202e-x' })),
    });
    expect(recall.code, recall.stderr).toBe(0);
    expect(recall.stdout).not.toContain('\u202e');
    expect(process.exitCode).toBe(exitCode);
  });
});
