/** Views the Slack renderer tests share: a realistic incident, and hostile variants of it. */
import type { CardView, DetailView } from '../../../../src/core/chat/thread-view.js';

export function card(over: Partial<CardView> = {}): CardView {
  return {
    kind: 'card',
    state: 'firing',
    alertname: 'KubePodCrashLooping',
    where: 'prod-eu-1/payments/checkout-api',
    severity: 'critical',
    verdict: 'action_required',
    headline: { answer: 'instant', title: 'Checkout OOM after deploy', confidence: 0.86 },
    links: [
      { label: 'Source', url: 'https://prometheus.example.com/graph?g0.expr=up' },
      { label: 'Runbook', url: 'https://runbooks.example.com/checkout' },
      { label: 'Silence', url: 'https://alertmanager.example.com/#/silences/new?filter=%7Balertname%3D%22KubePodCrashLooping%22%7D' },
    ],
    triggerKey: 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1',
    controlsId: 'inc-42',
    controls: true,
    mentions: [],
    ...over,
  };
}

export function detail(over: Partial<DetailView> = {}): DetailView {
  return {
    kind: 'detail',
    confidence: 'recalled at 0.86; entry 0.90 × track record 0.95',
    sections: [
      {
        kind: 'instant',
        title: 'Checkout OOM after deploy',
        entry: 'incidents/checkout-oom',
        entryUrl: 'https://git.example.com/catalog/incidents/checkout-oom.md',
        cause: [['The new build raised the heap; the pod limit was not raised with it.']],
        resolution: [['Roll back: ', { code: 'kubectl -n payments rollout undo deploy/checkout-api' }]],
        triedBefore: [['Restarting the pod (it OOMs again within minutes).']],
        track: 'resolved 7 of 8 concluded recalls · 👍 3 👎 0',
      },
      {
        kind: 'runbook',
        title: 'Crash-looping pods',
        entry: 'runbooks/crashloop',
        confidence: 0.62,
        steps: [
          { text: ['See the current state and restart count:'], code: 'kubectl -n payments get pods -l app=checkout-api' },
          { text: ['Read the last logs of the crashed container:'], code: 'kubectl -n payments logs deploy/checkout-api --previous' },
          { text: ['Check recent deploys.'] },
        ],
        track: '👍 2 👎 0',
      },
      { kind: 'near_miss', entry: 'incidents/checkout-db-pool', gate: 'margin', reason: 'too close to the best match (0.03)' },
    ],
    facts: [
      ['Alert', 'KubePodCrashLooping'],
      ['Resource', 'prod-eu-1/payments/checkout-api'],
      ['Started', '2026-11-29 03:12 UTC'],
      ['Recurrence', '🔁 #4 · last 2 d ago'],
    ],
    labels: [
      ['alertname', 'KubePodCrashLooping'],
      ['namespace', 'payments'],
      ['pod', 'checkout-api-7d9f8c6b5-x2k4q'],
      ['severity', 'critical'],
    ],
    triggerKey: 'kubepodcrashlooping|payments|deployment|checkout-api|prod-eu-1',
    ...over,
  };
}

/** What an attacker can put in an alert's labels and annotations, or a catalog entry. */
export const HOSTILE = [
  '<!channel>',
  '<!here>',
  '<!everyone>',
  '<@U1>',
  '<@U0BADBAD|admin>',
  '<!subteam^S123>',
  '<#C123|general>',
  '<http://evil.example.com|click here>',
  '<script>alert(1)</script>',
  '*bold* _it_ ~strike~ `code`',
  '@everyone @channel @here',
  '&lt;!channel&gt;',
] as const;
