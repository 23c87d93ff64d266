/** Thread views for the Matrix tests: a firing card with recall, its detail, hostile variants. */
import type { CardView, DetailView } from '../../../../src/core/chat/thread-view.js';

export function card(over: Partial<CardView> = {}): CardView {
  return {
    kind: 'card',
    state: 'firing',
    alertname: 'KubePodCrashLooping',
    where: 'prod-eu/checkout/web',
    severity: 'critical',
    verdict: 'action_suggested',
    headline: { answer: 'instant', title: 'checkout OOM after cache warm-up', confidence: 0.86 },
    links: [
      { label: 'source', url: 'https://prometheus.example/graph?g0.expr=up' },
      { label: 'runbook', url: 'https://runbooks.example/checkout-oom' },
      { label: 'dashboard', url: 'https://grafana.example/d/abc' },
      { label: 'silence', url: 'https://alertmanager.example/#/silences/new?filter=%7Balertname%3D%22KubePodCrashLooping%22%7D' },
    ],
    triggerKey: 'kubepodcrashlooping|checkout|deployment|web|prod-eu',
    controlsId: 'inc-1',
    controls: true,
    mentions: [],
    ...over,
  };
}

export function detail(over: Partial<DetailView> = {}): DetailView {
  return {
    kind: 'detail',
    confidence: 'recalled at 0.86 (exact match × track record 0.95)',
    sections: [
      {
        kind: 'instant',
        title: 'checkout OOM after cache warm-up',
        entry: 'incidents/checkout-oom.md',
        entryUrl: 'https://git.example/catalog/incidents/checkout-oom.md',
        cause: [['The cache warm-up loads every SKU; the pod exceeds its ', { code: '512Mi' }, ' limit.']],
        resolution: [['Raise the limit to ', { code: '1Gi' }, ' and roll out.']],
        track: 'resolved 7 of 8 concluded recalls · 👍 3 👎 0',
      },
      {
        kind: 'runbook',
        title: 'CrashLoopBackOff triage',
        entry: 'playbooks/crashloop.md',
        confidence: 0.62,
        steps: [
          { text: ['See the current state and restart count:'], code: 'kubectl -n checkout get pods -l app=web' },
          { text: ['Read the last logs of the previous container'], code: 'kubectl -n checkout logs deploy/web --previous | tail -50' },
          { text: ['Check recent deploys'] },
        ],
        track: '👍 2 👎 0',
      },
      { kind: 'near_miss', entry: 'incidents/web-dns.md', gate: 'structural', reason: 'namespace differs' },
    ],
    facts: [
      ['alert', 'KubePodCrashLooping'],
      ['resource', 'prod-eu/checkout/web'],
      ['started', '2026-01-01T10:00:00Z'],
    ],
    labels: [
      ['alertname', 'KubePodCrashLooping'],
      ['namespace', 'checkout'],
      ['pod', 'web-7d9f8c6b5-x2k4q'],
      ['severity', 'critical'],
    ],
    triggerKey: 'kubepodcrashlooping|checkout|deployment|web|prod-eu',
    ...over,
  };
}

/** Alert text an attacker controls: pings, script, a link, a fake pill, bidi. */
export const HOSTILE = [
  '@room wake up',
  '<script>alert(1)</script>',
  '<a href="https://evil.example">click</a>',
  '<a href="https://matrix.to/#/@admin:hs">@admin:hs</a>',
  '**bold** and `code`',
  'gpj.\u202Eexe',
].join(' ');
