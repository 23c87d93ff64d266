import type { Rng } from '../src/core/eval/prng.js';

/**
 * Operational words that dominate real runbooks; they take the head of the Zipf distribution
 * so common terms behave like "pod" and "restart" do in a real catalog (high df, low idf).
 */
const OPS_WORDS = `
pod restart memory cpu node disk latency error timeout request service deployment container
cluster namespace volume network connection database queue replica scale limit quota alert
metric log check status ready health probe liveness readiness image pull crash loop kill oom
throttle usage pressure evict schedule taint toleration ingress egress dns certificate expire
tls secret config map rollout rollback version upgrade release job cron backup restore snapshot
storage claim mount filesystem inode space full write read io latency p99 saturation backlog
consumer producer partition lag offset broker topic leader election quorum raft etcd api server
controller webhook admission gateway proxy load balancer target endpoint port socket handshake
reset refused unreachable packet drop retransmit bandwidth throughput spike drift clock sync
ntp kernel panic reboot drain cordon upgrade patch hotfix deploy pipeline build artifact
registry cache hit miss redis postgres mysql kafka rabbitmq elasticsearch shard index replica
lock deadlock migration schema table query slow plan vacuum bloat connection pool exhausted
thread heap gc pause jvm goroutine leak file descriptor limit ulimit rate limit burst
customer checkout payment order invoice ledger billing account user session login auth token
oauth sso permission denied forbidden unauthorized role binding rbac policy firewall rule
route table subnet vpc peering nat instance volume ebs s3 bucket lambda function invocation
throttled concurrency cold start region zone failover replica lag primary standby promote
paging oncall escalate mitigate root cause postmortem impact customer facing degraded outage
`
  .split(/\s+/)
  .filter((w) => w !== '');

const ONSETS = ['b', 'br', 'c', 'ch', 'd', 'dr', 'f', 'g', 'gr', 'h', 'k', 'l', 'm', 'n', 'p', 'pl', 'r', 's', 'st', 't', 'tr', 'v', 'w', 'z'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
const CODAS = ['', '', 'n', 'r', 'l', 'x', 'm', 'nd', 'rt', 'k'];

/**
 * A deterministic vocabulary of `size` distinct lower-case words: real ops words first, then
 * pronounceable pseudo-words. Pseudo-words ending in s/ed/ing are skipped so our stemmer maps
 * each word to a term of its own.
 */
export function buildVocabulary(rng: Rng, size: number): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  const add = (w: string): void => {
    if (words.length < size && !seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  };
  for (const w of OPS_WORDS) add(w);
  let guard = 0;
  while (words.length < size && guard++ < size * 100) {
    const syllables = 2 + Math.floor(rng() * 2);
    let w = '';
    for (let i = 0; i < syllables; i++) {
      w += (ONSETS[Math.floor(rng() * ONSETS.length)] ?? '') + (VOWELS[Math.floor(rng() * VOWELS.length)] ?? '');
    }
    w += CODAS[Math.floor(rng() * CODAS.length)] ?? '';
    if (/(s|ed|ing|ies)$/.test(w)) continue;
    add(w);
  }
  return words;
}

/** Parts alert names are built from, as in kube-prometheus / node-exporter rule names. */
export const ALERT_PARTS = {
  prefix: [
    'Kube',
    'Node',
    'Prometheus',
    'Etcd',
    'Kafka',
    'Postgres',
    'Redis',
    'Nginx',
    'Alertmanager',
    'Cert',
    'Istio',
    'Aws',
    'Rds',
    'Sqs',
    'Elb',
    'Jvm',
    'Http',
    'Grpc',
    'Dns',
    'Ceph',
  ],
  subject: [
    'Pod',
    'Container',
    'Job',
    'Deployment',
    'StatefulSet',
    'Disk',
    'Memory',
    'Cpu',
    'Network',
    'Filesystem',
    'Queue',
    'Replica',
    'Consumer',
    'Connection',
    'Certificate',
    'Target',
    'Volume',
    'Request',
    'Lock',
    'Thread',
  ],
  condition: [
    'CrashLooping',
    'NotReady',
    'Down',
    'High',
    'Full',
    'Lagging',
    'Failing',
    'Throttling',
    'Expiring',
    'Saturated',
    'Errors',
    'Latency',
    'Restarting',
    'Pending',
    'OutOfSpace',
    'Flapping',
    'Missing',
    'Slow',
    'Exhausted',
    'Unreachable',
  ],
} as const;
