/**
 * Alertmanager as a partner (issue 12), against a real Alertmanager (Debian's
 * prometheus-alertmanager, installed by .ci/run) and the real `reprise serve` with Slack on the
 * Web API fake: a 🔕 "+ Alertmanager" from the card creates a silence there, read back through
 * Alertmanager's own API; an alert silenced in Alertmanager gets its thread marked by the
 * reconciler (interval 1 s here). Skipped where the binary is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackFake, type PostedMessage, type SlackFake } from '../fakes/slack-fake.js';
import { deliver } from '../fakes/slack-requests.js';
import { eventsOf, ledgerEvents, writeConfig } from './helpers/chat-e2e.js';
import { cleanup, makeTmpDir, spawnBot, type BotProcess } from './helpers/spawn-bot.js';
import { waitFor } from '../helpers/wait-for.js';

const BINARY = 'prometheus-alertmanager';
const installed = spawnSync('sh', ['-c', `command -v ${BINARY}`]).status === 0;
const ANN = 'U0ANN';
const CHANNEL = 'C0ONCALL';

let fake: SlackFake;
let am: ChildProcess | undefined;
let amUrl: string;
let bot: BotProcess;
let dataDir: string;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

/** Alertmanager answers `/-/ready` (a connection refused while it starts counts as not yet). */
async function waitForReady(url: string): Promise<void> {
  await waitFor(async () => (await fetch(`${url}/-/ready`)).ok, `Alertmanager ready at ${url}`);
}

const labelsFor = (pod: string) => ({
  alertname: 'KubePodCrashLooping',
  namespace: 'payments',
  pod,
  container: 'checkout-api',
  cluster: 'prod-eu-1',
  severity: 'warning',
});

const started = new Map<string, string>();
async function fire(pod: string, endsAt = new Date(Date.now() + 30 * 60_000).toISOString()): Promise<void> {
  if (!started.has(pod)) started.set(pod, new Date(Date.now() - 60_000).toISOString());
  const alert = {
    labels: labelsFor(pod),
    annotations: { summary: 'Pod is crash looping.' },
    startsAt: started.get(pod),
    endsAt,
  };
  const res = await fetch(`${amUrl}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([alert]) });
  expect(res.status, await res.text()).toBe(200);
}

interface AmSilence {
  id: string;
  status: { state: string };
  matchers: Array<{ name: string; value: string; isRegex: boolean; isEqual?: boolean }>;
  comment: string;
  createdBy: string;
  endsAt: string;
}

async function silences(): Promise<AmSilence[]> {
  const res = await fetch(`${amUrl}/api/v2/silences`);
  expect(res.status).toBe(200);
  return ((await res.json()) as AmSilence[]).filter((s) => s.status.state === 'active');
}

const shown = (m: { text: unknown; blocks: unknown }): string => `${String(m.text)}\n${JSON.stringify(m.blocks)}`;
const roots = (): PostedMessage[] => fake.messages.filter((m) => m.channel === CHANNEL && !m.thread_ts);

beforeAll(async () => {
  if (!installed) return;
  fake = await startSlackFake({ botUserId: 'U0REPRISE' });
  dataDir = makeTmpDir();
  const amPort = await freePort();
  amUrl = `http://127.0.0.1:${amPort}`;
  // The bot first (Alertmanager needs its URL), told where Alertmanager will listen.
  bot = await spawnBot({
    dataDir,
    args: [
      '--config',
      writeConfig(dataDir, `alertmanager:\n  url: ${amUrl}\n  reconcile_interval: 1s\n  timeout: 3s\ntransport:\n  slack:\n    allow_users: [${ANN}]\n`),
    ],
    env: { SLACK_BOT_TOKEN: fake.botToken, SLACK_SIGNING_SECRET: fake.signingSecret, SLACK_CHANNEL: CHANNEL, SLACK_API_URL: fake.apiUrl },
  });
  const config = join(dataDir, 'alertmanager.yml');
  writeFileSync(
    config,
    [
      'route:',
      '  receiver: reprise',
      '  group_by: [alertname, pod]',
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
    [`--config.file=${config}`, `--storage.path=${join(dataDir, 'am')}`, `--web.listen-address=127.0.0.1:${amPort}`, '--cluster.listen-address='],
    { stdio: 'ignore' },
  );
  await waitForReady(amUrl);
}, 60_000);

afterAll(async () => {
  am?.kill('SIGKILL');
  await cleanup();
  await fake?.close();
});

describe.runIf(installed)('Alertmanager as a partner (real Alertmanager)', () => {
  it(
    'a 🔕 "4 h + Alertmanager" on the card creates a silence in Alertmanager matching the alert, its comment naming the thread',
    { timeout: 60_000 },
    async () => {
      await fire('checkout-api-7d9f8c6b5-aaaaa');
      const card = await waitFor(() => roots()[0], { what: 'the card', timeoutMs: 30_000 });
      // The select offers Alertmanager only because it is configured.
      expect(shown(card)).toContain('4 h + Alertmanager');
      const actions = (card.blocks as Array<{ type: string; block_id?: string }>).find((b) => b.type === 'actions')!;
      const res = await deliver(
        `${bot.url}/slack/events`,
        fake.signed.action({ messageTs: card.ts, channel: CHANNEL, actionId: 'reprise_silence', blockId: actions.block_id!, selected: '4h+am', user: ANN }),
      );
      expect(res.status).toBe(200);
      await eventsOf(dataDir, 'silence', 1);
      const [s] = await waitFor(async () => {
        const list = await silences();
        return list.length > 0 ? list : undefined;
      }, 'a silence in Alertmanager');
      expect(s!.matchers.map((m) => [m.name, m.value, m.isRegex]).sort()).toEqual(
        Object.entries(labelsFor('checkout-api-7d9f8c6b5-aaaaa'))
          .map(([k, v]) => [k, v, false])
          .sort(),
      );
      expect(s!.comment).toMatch(/^Silenced from Reprise by \S+\. Thread: https:\/\/slack\.com\/app_redirect\?channel=C0ONCALL \(thread /);
      expect(s!.comment).toContain(card.ts);
      expect(Date.parse(s!.endsAt) - Date.now()).toBeGreaterThan(3.9 * 3_600_000);
      await waitFor(
        () => fake.messages.find((m) => m.thread_ts === card.ts && shown(m).includes('also silenced in Alertmanager')),
        'the thread told of the Alertmanager silence',
      );

      // The silenced alert goes away. Alertmanager sends no resolve for what it silences; it
      // stops listing the alert, and the reconciler concludes its open.
      await fire('checkout-api-7d9f8c6b5-aaaaa', new Date().toISOString());
      const resolve = await waitFor(
        async () => {
          const rows = (await ledgerEvents(dataDir)).filter((r) => r.type === 'resolve');
          return rows.length > 0 ? rows : undefined;
        },
        { what: 'the silenced alert concluded', timeoutMs: 30_000 },
      );
      expect(resolve).toEqual([expect.objectContaining({ reason: 'am_gone' })]);
      await waitFor(
        () => fake.message(CHANNEL, card.ts)?.updates.find((u) => shown(u).includes('no longer firing in Alertmanager')),
        'the card marked no longer firing',
      );
    },
  );

  it('marks the thread of an alert silenced in Alertmanager within a reconcile round, recorded', { timeout: 60_000 }, async () => {
    const before = roots().length;
    await fire('cart-6b8f9c7d4-bbbbb');
    const card = await waitFor(() => roots()[before], { what: 'the second card', timeoutMs: 30_000 });
    expect(shown(card)).toContain('cart');
    // Someone silences it in Alertmanager's own UI (here: its API); no resolve will ever come.
    const matchers = Object.entries(labelsFor('cart-6b8f9c7d4-bbbbb')).map(([name, value]) => ({ name, value, isRegex: false, isEqual: true }));
    const made = await fetch(`${amUrl}/api/v2/silences`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        matchers,
        startsAt: new Date().toISOString(),
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
        createdBy: 'someone',
        comment: 'maintenance',
      }),
    });
    expect(made.status).toBe(200);
    const update = await waitFor(
      () => fake.message(CHANNEL, card.ts)?.updates.find((u) => shown(u).includes('silenced in Alertmanager')),
      'the card marked silenced in Alertmanager',
    );
    expect(shown(update)).toContain('Silenced');
    const marks = await waitFor(async () => {
      const rows = (await ledgerEvents(dataDir)).filter((r) => r.type === 'noise' && r['action'] === 'mark' && r['reason'] !== 'am_gone');
      return rows.length > 0 ? rows : undefined;
    }, 'the mark in the ledger');
    expect(marks).toEqual([expect.objectContaining({ reason: 'am_silenced', detail: 'silenced in Alertmanager' })]);
  });
});
