/**
 * A real Alertmanager (Debian's prometheus-alertmanager, installed by .ci/run) routes an alert
 * to the real `reprise serve`: what it sends — grouping, fingerprints, the v4 payload, the
 * resolve notification — is what the bot is built for. Skipped where the binary is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKOUT_ENTRY, SAMPLE_POD } from './helpers/alerts.js';
import { cleanup, makeTmpDir, spawnBot, waitFor } from './helpers/spawn-bot.js';

const BINARY = 'prometheus-alertmanager';
const installed = spawnSync('sh', ['-c', `command -v ${BINARY}`]).status === 0;

let am: ChildProcess | undefined;
afterEach(async () => {
  am?.kill('SIGKILL');
  am = undefined;
  await cleanup();
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

async function postAlerts(amUrl: string, endsAt: string): Promise<void> {
  const alert = {
    labels: { alertname: 'KubePodCrashLooping', namespace: 'payments', pod: SAMPLE_POD, container: 'checkout-api', cluster: 'prod-eu-1', severity: 'warning' },
    annotations: {
      summary: 'Pod is crash looping.',
      description: `Pod payments/${SAMPLE_POD} (container checkout-api) is in waiting state (reason: "CrashLoopBackOff").`,
    },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
    endsAt,
  };
  const res = await fetch(`${amUrl}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([alert]) });
  expect(res.status, await res.text()).toBe(200);
}

describe.runIf(installed)('a real Alertmanager delivering to reprise serve', () => {
  it('delivers the firing (instant recall) and then the resolve into the same thread', { timeout: 90_000 }, async () => {
    const dir = makeTmpDir();
    const bot = await spawnBot({ dataDir: dir, transcript: join(dir, 't.jsonl') });
    const amPort = await freePort();
    const config = join(dir, 'alertmanager.yml');
    writeFileSync(
      config,
      [
        'route:',
        '  receiver: reprise',
        '  group_by: [alertname, namespace]',
        '  group_wait: 1s',
        '  group_interval: 1s',
        '  repeat_interval: 1h',
        'receivers:',
        '  - name: reprise',
        '    webhook_configs:',
        `      - url: ${bot.url}/webhook/alertmanager`,
        '        send_resolved: true',
        '',
      ].join('\n'),
    );
    am = spawn(
      BINARY,
      [`--config.file=${config}`, `--storage.path=${join(dir, 'am')}`, `--web.listen-address=127.0.0.1:${amPort}`, '--cluster.listen-address='],
      { stdio: 'ignore' },
    );
    const amUrl = `http://127.0.0.1:${amPort}`;
    await waitForReady(amUrl);

    await postAlerts(amUrl, new Date(Date.now() + 10 * 60_000).toISOString());
    const rca = await waitFor(() => bot.transcriptLines().find((l) => l.kind === 'rca'), 'the RCA thread from Alertmanager', 30_000);
    expect(rca.answer).toMatchObject({ kind: 'incident', entry: CHECKOUT_ENTRY });
    expect(rca.text).toContain('🔍 KubePodCrashLooping — prod-eu-1/payments/checkout-api');

    await postAlerts(amUrl, new Date().toISOString());
    const resolved = await waitFor(() => bot.transcriptLines().find((l) => l.kind === 'resolved'), 'the resolve from Alertmanager', 30_000);
    expect(resolved.threadId).toBe(rca.threadId);
    expect(resolved.text).toMatch(/✅ resolved after \d+ min/);
    // Alertmanager may re-send the firing group before the resolve: still one thread.
    expect(bot.transcriptLines().filter((l) => l.kind === 'rca')).toHaveLength(1);
  });
});

async function waitForReady(amUrl: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${amUrl}/-/ready`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Alertmanager did not become ready at ${amUrl}`);
}
