import { ConsoleTransport } from '../adapters/console/console-transport.js';
import { createStore } from '../adapters/keyv/keyv-store.js';
import { parseAlertmanagerPayload } from '../core/alertmanager.js';
import { incidentIntents } from '../core/bot/intent.js';
import { Routing } from '../core/bot/routing.js';
import { buildLoop } from '../runtime/build-loop.js';
import { Ledger } from '../core/ledger/ledger.js';
import { ManualClock } from '../ports/clock.js';
import { silentLogger } from '../ports/logger.js';
import { parseCli } from './args.js';
import { BUNDLED_CATALOG, loadSnapshot } from '../runtime/open-catalog.js';
import type { CliCommand } from '../runtime/cli-io.js';
import { recallOptions } from '../runtime/recall-options.js';

/** The past incident the demo replays: it ships in the starter catalog. */
const DEMO_ENTRY = 'incidents/checkout-api-oomkilled.md';
const MAX_UNRESOLVED = 6;

function alert(status: 'firing' | 'resolved', pod: string, at: string) {
  const labels = { alertname: 'KubePodCrashLooping', namespace: 'payments', pod, container: 'checkout-api', cluster: 'prod-eu-1', severity: 'warning' };
  return {
    version: '4',
    status,
    receiver: 'reprise',
    groupLabels: { alertname: 'KubePodCrashLooping' },
    commonLabels: labels,
    commonAnnotations: {},
    alerts: [
      {
        status,
        labels,
        annotations: {
          summary: 'Pod is crash looping.',
          description: `Pod payments/${pod} (container checkout-api) is in waiting state (reason: "CrashLoopBackOff").`,
        },
        startsAt: at,
        endsAt: status === 'resolved' ? at : '0001-01-01T00:00:00Z',
        fingerprint: `demo-${pod}`,
      },
    ],
  };
}

/**
 * `reprise demo`: the learning loop in-process on the bundled catalog, narrated. Nothing is
 * written outside memory; the clock is simulated so the story takes a second, not a week.
 */
export const demo: CliCommand = async (argv, io) => {
  const parsed = parseCli(
    argv,
    { catalog: { type: 'string', description: 'catalog directory (default: the configured or bundled catalog)', valueName: 'DIR' } },
    'reprise demo [--catalog DIR]\n\nPlays the learning loop in memory on the bundled catalog, narrated; writes nothing.',
    io,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const say = (text: string): void => io.stdout(`\n▶ ${text}\n`);
  const { snapshot } = await loadSnapshot(values.catalog ?? BUNDLED_CATALOG);
  if (!snapshot.byId.has(DEMO_ENTRY)) {
    io.stderr(`reprise demo: the catalog has no ${DEMO_ENTRY}; run the demo on the bundled catalog\n`);
    return 1;
  }
  const clock = new ManualClock('2026-11-29T03:00:00Z');
  const store = createStore('memory://', '');
  const ledger = await Ledger.open(store);
  const opts = recallOptions();
  const console = new ConsoleTransport({ write: io.stdout, runId: 'demo' });
  const transports = new Map([[console.name, console]]);
  // Delivery is immediate here: the demo waits for the outbox after each step so the story reads in order.
  const { bot, outbox } = buildLoop({
    ledger,
    catalog: () => snapshot,
    clock,
    logger: silentLogger,
    recall: opts,
    routing: new Routing({ transports: [{ name: 'console', defaultChannel: 'console', param: 'console' }], rules: [], mentions: [] }),
    transports,
  });
  outbox.start();
  const send = async (status: 'firing' | 'resolved', pod: string) => {
    const [out] = await bot.handle(incidentIntents(parseAlertmanagerPayload(alert(status, pod, clock.now().toISOString())).incidents));
    await outbox.idle();
    return out!;
  };
  const fire = (pod: string) => send('firing', pod);
  const track = () => ledger.read.trackRecord(DEMO_ENTRY, 'incident', clock.now());
  const window = `${Math.round(ledger.resolveWindowMs / 3_600_000)} h`;

  say(`Reprise demo — the learning loop on the bundled catalog (${snapshot.entries.length} entries), simulated clock, in memory.`);
  say(
    '03:00 KubePodCrashLooping fires for payments/checkout-api-7d9f8c6b5-x2k4q. The pod name reduces to the Deployment checkout-api, which a past incident in the catalog is scoped to.',
  );
  const first = await fire('checkout-api-7d9f8c6b5-x2k4q');
  if (first.status !== 'posted' || first.answer?.kind !== 'incident') {
    io.stderr('reprise demo: expected an instant recall on the first firing; the catalog or gates changed\n');
    return 1;
  }
  say(
    `Instant recall from ${first.answer.entry} at ${first.answer.confidence} — no investigation. The entry has no track record yet: nothing has graded it, so it neither gains nor loses confidence.`,
  );

  clock.advance(14 * 60_000);
  say('03:14 Alertmanager sends the resolve. It pairs with the open recorded for that fingerprint:');
  await send('resolved', 'checkout-api-7d9f8c6b5-x2k4q');
  let t = track();
  say(
    `Track record now: resolved ${t.resolved} of ${t.resolved + t.failed} concluded recalls → rate ${t.rate.toFixed(2)} = (resolved ${t.resolved} + 👍 ${t.up} + 1) / (concluded ${t.resolved + t.failed} + 👍 ${t.up} + 👎 ${t.down} + 2), ` +
      `which the outcome gate compares with its floor ${opts.outcomeFloor}; confidence is multiplied by (… + 1) / (… + 1) = ${t.factor.toFixed(2)} — a success never lowers it.`,
  );

  clock.advance(24 * 3_600_000);
  say('Day 2, 03:14: it happens again on another pod; the same entry is recalled, and 9 minutes later the incident resolves again.');
  const second = await fire('checkout-api-7d9f8c6b5-k8q2w');
  if (second.status === 'posted' && second.answer?.kind === 'incident') {
    clock.advance(9 * 60_000);
    await send('resolved', 'checkout-api-7d9f8c6b5-k8q2w');
    t = track();
    say(
      `The track record rises: resolved ${t.resolved} of ${t.resolved + t.failed} → rate ${t.rate.toFixed(2)}, confidence factor still ${t.factor.toFixed(2)}. Trust is earned from outcomes, not asserted.`,
    );
  }

  for (let n = 1; n <= MAX_UNRESOLVED; n++) {
    clock.advance(24 * 3_600_000);
    const before = track();
    const lapsed = n > 1 ? ` Yesterday's recall is still unresolved ${window} later, so it now counts as a failure.` : '';
    say(
      `Day ${n + 2}: the alert fires again (pod checkout-api-7d9f8c6b5-r${n}x9z).${lapsed} Track record going in: resolved ${before.resolved}, failed ${before.failed} → rate ${before.rate.toFixed(2)} (floor ${opts.outcomeFloor}), confidence factor ${before.factor.toFixed(2)}.`,
    );
    const out = await fire(`checkout-api-7d9f8c6b5-r${n}x9z`);
    if (out.status !== 'posted') break;
    if (out.answer?.kind === 'incident') {
      say(
        `Recalled again at ${out.answer.confidence}, but this time the recalled fix does not resolve it. While the incident is in progress it counts neither way; if no resolve comes within the resolve window (${window}), it is a failure.`,
      );
      continue;
    }
    const refusal = out.recall.trace.find((s) => s.gate === 'outcome' && s.entry === DEMO_ENTRY && !s.passed);
    say(`Recall refused. Gate trace: ${refusal ? `${refusal.gate} — ${refusal.reason}` : 'no outcome step found'}.`);
    say(
      'The thread above fell through: no trusted memory, so the bot shows recurrence facts and the runbook instead of a diagnosis, clearly marked. With a model configured this is where the investigation starts. A 👍, or a recall that resolves, would lift the entry back above the floor.',
    );
    await outbox.stop();
    await ledger.close();
    await store.close();
    return 0;
  }
  io.stderr(`reprise demo: the entry never fell below the floor after ${MAX_UNRESOLVED} unresolved recalls\n`);
  return 1;
};
