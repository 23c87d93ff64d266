/**
 * The one config schema (SPEC §11). Every key has its default and one line of doc here;
 * `reprise config defaults` prints the annotated YAML by walking this schema, so the
 * documentation cannot drift from the code.
 *
 * Durations: YAML holds human strings (`stale_after: 180d`); the parsed config keeps that
 * text and adds the milliseconds beside it (`stale_after_ms: 15552000000`). Code reads the
 * `_ms` field; logs and `config show` read the text.
 *
 * Over 450 lines on purpose: it is the one config schema, every key beside its default and its doc
 * line; split, `config defaults` and the reference would walk several files and a key could drift
 * from its doc.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import type { FieldMeta } from './fields.js';
import { block, bool, duration, fraction, glob, httpUrl, int, num, oneOf, str, withMs } from './fields.js';
import { weakTokenReason } from './token-rule.js';
import { rotationProblem } from '../core/oncall/rotation.js';

/** Attaches the one-line doc (and loader facts) to a key. */
function doc<T extends z.ZodType>(schema: T, description: string, meta: FieldMeta = {}): T {
  return schema.meta({ description, ...meta });
}

const dur = (def: string, description: string, opts: { positive?: boolean } = {}) => doc(duration(opts).default(def), description, { duration: true });

/** A token that protects something: long, not an example, not a placeholder (token-rule.ts). */
const token = () =>
  str().superRefine((v, ctx) => {
    const why = weakTokenReason(v);
    if (why) ctx.addIssue({ code: 'custom', message: why, input: v });
  });

const genericSource = z
  .strictObject({
    alerts: doc(str().optional(), 'Dot-path of the array of alerts in the body; unset = the body is one alert. The other paths are relative to one alert.'),
    alertname: doc(str(), 'Dot-path of the alert name (required).', { example: 'rule.name' }),
    status: doc(str().optional(), 'Dot-path of the status; unset = every alert is firing.'),
    resolved_values: doc(z.array(str()).default(['resolved', 'ok', 'closed']), 'Status values (any case) that mean resolved.'),
    fingerprint: doc(str().optional(), "Dot-path of the sender's id for the alert (pairs the resolve with its open); unset = derived from name and labels."),
    title: doc(str().optional(), 'Dot-path of a one-line summary.'),
    message: doc(str().optional(), 'Dot-path of the description.'),
    severity: doc(str().optional(), 'Dot-path of the severity.'),
    starts_at: doc(str().optional(), 'Dot-path of the RFC 3339 start time; unset = arrival time.'),
    ends_at: doc(str().optional(), 'Dot-path of the RFC 3339 end time.'),
    labels: doc(z.record(z.string(), str()).default({}), 'Label name → dot-path (e.g. namespace, pod).'),
    hmac_secret: doc(
      str().optional(),
      'When set, requests must carry the hex HMAC-SHA256 of the raw body (optionally `sha256=`-prefixed) in `hmac_header`, and the bearer token is not asked for.',
      { secret: true },
    ),
    hmac_header: doc(str().default('x-signature'), 'Header carrying the HMAC signature.'),
    timestamp_header: doc(
      str().optional(),
      'With `hmac_secret`: header carrying the Unix time (seconds) the sender signed, the signature then covering `<timestamp>.<raw body>`; requests outside `replay_window` are refused and an identical signed delivery inside it is acknowledged and ignored. Unset = replays are recognised by the body alone (`replay_by_digest`).',
      { example: 'x-signature-timestamp' },
    ),
    replay_window: dur(
      '5m',
      'With `timestamp_header`: how far from now a signed timestamp may be, either way. Without it: how long an accepted signed body is remembered, so the same body again is acknowledged and ignored.',
      { positive: true },
    ),
    replay_by_digest: doc(
      bool().default(true),
      'With `hmac_secret` and no `timestamp_header`: an identical signed body inside `replay_window` is acknowledged and ignored (a captured request replayed changes nothing). Set false only for a sender that re-sends identical bodies on purpose and cannot sign a timestamp: then a captured request can be replayed.',
    ),
  })
  .transform((v) => withMs(v, ['replay_window']));

const server = z
  .strictObject({
    port: doc(int(0, 65535, ' (0 = any free port)').default(8080), 'Port the HTTP server (webhooks, Slack events, health, metrics) listens on.', {
      env: ['PORT'],
    }),
    host: doc(str().default('0.0.0.0'), 'Address the HTTP server binds to.'),
    public_url: doc(
      httpUrl().optional(),
      'The URL people and senders reach the bot at (its ingress). Its host is a name the HTTP port answers to: besides it, only loopback names, the address a connection arrived on and `ui.allowed_hosts` are (no DNS rebinding).',
      { env: ['REPRISE_PUBLIC_URL'], example: 'https://reprise.example.org' },
    ),
    bearer_token: doc(
      token().optional(),
      'Token webhook callers must send as `Authorization: Bearer …`; required when a model is configured. At least 16 characters, never an example from the docs: `openssl rand -hex 24`.',
      { secret: true, env: ['REPRISE_BEARER_TOKEN'], example: '<openssl rand -hex 24>' },
    ),
    pagerduty_secret: doc(
      str().optional(),
      'Signing secret of the PagerDuty V3 webhook subscription; `/webhook/pagerduty` verifies `X-PagerDuty-Signature` with it and refuses every request while it is unset.',
      { secret: true, env: ['REPRISE_PAGERDUTY_SECRET'] },
    ),
    generic_webhooks: doc(
      z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be lower-case letters, digits, - or _'), genericSource).optional(),
      "`POST /webhook/generic/<name>` sources: how to read each sender's JSON (dot-paths), and its optional HMAC.",
      { example: { uptime: { alertname: 'check.name', status: 'state', fingerprint: 'check.id', labels: { service: 'check.service' } } } },
    ),
    body_limit_bytes: doc(int(1).default(1_048_576), 'Largest webhook body accepted, in bytes; bigger requests get 413.'),
    body_timeout: dur('10s', 'A request body must have arrived this long after its headers; a slower one is answered 408 and disconnected.', {
      positive: true,
    }),
    max_pending_webhooks: doc(
      int(1).default(256),
      'Requests in progress at once, per route (each webhook source: alertmanager, grafana, pagerduty, generic; and /slack/events); more are answered 503 with Retry-After before their body is read (senders re-send them) instead of queueing until they time out.',
    ),
    max_pending_per_peer: doc(
      int(1).default(64),
      'Requests in progress at once from one address, across routes; more are answered 503 with Retry-After. Behind a proxy every request has its address: raise this, or limit at the proxy.',
    ),
    verify_pool_slots: doc(
      int(1).default(64),
      'Bodies read at once before their signature can be checked (PagerDuty, HMAC generic sources, Slack); when full, the sender there furthest from done (most bytes still to come at its pace) is cut off (503) to make room. Bounds their memory to this × body_limit_bytes.',
    ),
    replay_window: dur(
      '1h',
      'Signed PagerDuty events whose `occurred_at` is further than this from now are refused (400); accepted event ids are remembered twice this long, so a replay is acknowledged and ignored.',
      { positive: true },
    ),
    field_limit_chars: doc(
      int(64).default(8192),
      'Longest alert label or annotation value kept, in characters; longer ones are cut with a "[truncated …]" marker and logged.',
    ),
  })
  .transform((v) => withMs(v, ['body_timeout', 'replay_window']));

const git = z
  .strictObject({
    url: doc(
      str(),
      'Remote to clone the catalog from (https, ssh or a path); credentials in the URL are never logged. Drafted entries are pushed here as branches.',
      { example: 'https://github.com/acme/runbooks.git', env: ['REPRISE_CATALOG_GIT_URL'], opensBlock: true },
    ),
    branch: doc(str().default('main'), 'Branch to follow (fetched and reset to, never merged).', { env: ['REPRISE_CATALOG_GIT_BRANCH'] }),
    poll_interval: dur('5m', 'How often to fetch; the index is rebuilt only when HEAD moved. `reprise catalog sync` fetches at once.', { positive: true }),
    clone_dir: doc(str().optional(), 'Folder of the local clone (default: `catalog-git` in `store.data_dir`); owned by Reprise, local edits are discarded.', {
      fsPath: true,
      example: './data/catalog-git',
    }),
    path: doc(str().default(''), 'Folder of the catalog inside the repository (empty = its root).', { example: 'runbooks' }),
  })
  .transform((v) => withMs(v, ['poll_interval']));

const catalog = z.strictObject({
  dir: doc(str().default('catalog'), 'Folder of markdown entries; relative to the config file (or the working directory without one).', { fsPath: true }),
  git: doc(block(git.optional()), 'Serve the catalog from a git remote, kept in a local clone (then `dir` is not read). Omit to read `dir` as is.'),
});

const STORE_URL = /^(sqlite|redis|rediss|memory):\/\//;
const store = z
  .strictObject({
    url: doc(
      z.string({ error: 'must be a string' }).regex(STORE_URL, { error: 'must start with sqlite://, redis://, rediss:// or memory://' }).optional(),
      'Ledger store: sqlite://path, redis://host:6379 (several replicas) or memory:// (tests). Default: a file store in `data_dir`.',
      { example: 'redis://redis:6379', env: ['REPRISE_STORE_URL'], secret: true },
    ),
    data_dir: doc(str().default('./data'), 'Folder for the embedded store and snapshots; relative to the config file.', {
      fsPath: true,
      env: ['REPRISE_DATA_DIR'],
    }),
    snapshot_every: doc(
      int(1).default(1000),
      'Compact the ledger into a snapshot every N events (a large read model less often: at most one per 4 KB of its last snapshot, so a restart replays a bounded tail).',
    ),
    probe_interval: dur('10s', 'How often `serve` checks the store can still be written; a failure makes /readyz 503.', { positive: true }),
    lease_ttl: dur(
      '10s',
      'Redis only (several replicas): how long the leader lease lasts without renewal (renewed every third of it). A replica that stops renewing loses the lead after this; another takes over.',
      { positive: true },
    ),
  })
  .transform((v) => withMs(v, ['probe_interval', 'lease_ttl']));

const recall = z
  .strictObject({
    k: doc(int(1).default(20), 'Width of the candidate set taken from the search index before the gates.'),
    min_score: doc(num(0).default(6.0), 'Margin gate (no model): the top BM25 score must reach this. Cross-validated in eval/README.md.'),
    margin_gap: doc(
      num(0, 1).default(0.05),
      'Margin gate: the top score must lead the runner-up by this fraction of the top score (0.05 = 5%). Cross-validated in eval/README.md.',
    ),
    name_boost: doc(
      num(0).default(1),
      "Boost for candidates whose alert name the alert text spells out: score × (1 + name_boost × share of the name's words present); 0 = off. Cross-validated in eval/README.md.",
    ),
    sibling_overlap: doc(
      num(0).default(0.5),
      "Sibling rule of the margin gate (runbooks): two agreeing candidates whose names share at least this share of the longer name's words are near-siblings, judged on the words one has and the other lacks — the top fires only when the alert says more of its own than of the other's; above 1 = off. Not calibrated (see eval/README.md).",
    ),
    sibling_window: doc(
      fraction().default(1),
      'Sibling rule: a near-sibling counts when it scores at least (1 − this) × the top score (1 = any agreeing candidate in the top k). Not calibrated (see eval/README.md).',
    ),
    solo_floor: doc(
      num(0).default(8.0),
      'Margin gate: the score a lone candidate (no runner-up) must reach; also the bar for scopeless matches. Cross-validated in eval/README.md.',
    ),
    summary_weight: doc(
      num(0).default(1),
      'Query weight of the `summary` annotation (or of the description when there is no summary), relative to the alertname and label values (1). Cross-validated in eval/README.md.',
    ),
    description_weight: doc(
      num(0).default(0),
      'Query weight of the `description` annotation when a `summary` exists too; 0 = the summary speaks for the alert (the sibling rule still reads the description). Held at 0 by the latency budget: see eval/README.md.',
    ),
    label_name_weight: doc(
      num(0).default(1),
      'Query weight of label names (`persistentvolumeclaim`, `job_name`); 0 = ignore them. Cross-validated in eval/README.md.',
    ),
    expr_metric_weight: doc(
      num(0).default(0.5),
      'Query weight of the metric names in the PromQL expression of `generatorURL`; 0 = ignore them. Cross-validated in eval/README.md.',
    ),
    expr_label_weight: doc(
      num(0).default(1),
      "Query weight of that expression's label matcher names and positive values; 0 = ignore them. Cross-validated in eval/README.md.",
    ),
    runbook_url_weight: doc(
      num(0).default(1),
      "Query weight of the last path segment and fragment of `runbook_url` (usually the alert's name); 0 = ignore. Not calibrated: no dev case carries a runbook_url.",
    ),
    expr_max_terms: doc(int(1).default(200), 'Most distinct names and values read from one PromQL expression (bounds the work on hostile input).'),
    outcome_floor: doc(fraction().default(0.5), 'Outcome gate: reject entries whose track-record factor falls below this.'),
    max_fallbacks: doc(int(0).default(3), 'How many next candidates to try after an outcome-gate rejection.'),
    confidence_cap: doc(fraction().default(0.9), 'Recall confidence never exceeds this.'),
    stale_after: dur('180d', 'An entry not validated for this long has its confidence multiplied by `stale_factor`.', { positive: true }),
    stale_factor: doc(fraction().default(0.75), 'Confidence multiplier for stale entries.'),
    rerank_k: doc(int(1).default(5), 'With a model: how many agreeing candidates the rerank call sees.'),
    rerank_threshold: doc(fraction().default(0.7), 'With a model: the rerank confidence at which recall fires.'),
    rerank_min_score: doc(num(0).default(0.1), 'With a model: skip the rerank call (a miss) when the top agreeing BM25 score is below this.'),
    scopeless_factor: doc(fraction().default(0.6), 'Confidence multiplier when a workload-less incident matches a resource-less entry.'),
    unconfirmed_cap: doc(fraction().default(0.7), 'Confidence cap for an instant recall whose live-state confirm could not run.'),
  })
  .transform((v) => withMs(v, ['stale_after']));

const rule = z.strictObject({
  severity: doc(
    z.preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(str(), { error: 'must be a severity or a list of severities' })).optional(),
    'Severity (or list of severities) the alert must have.',
  ),
  alertname: doc(glob().optional(), 'Glob over the alert name, e.g. "Kube*".'),
  namespace: doc(glob().optional(), 'Glob over the namespace, e.g. "prod-*".'),
  labels: doc(
    z.record(z.string(), z.string({ error: 'label values must be strings (quote them)' }), { error: 'must be a map of label → glob' }).optional(),
    'Label globs that must all match.',
  ),
});
const rules = (description: string) =>
  doc(z.array(rule, { error: 'must be a list of rules' }).default([]), description, {
    example: [{ severity: 'critical' }, { alertname: 'Kube*', namespace: 'prod-*' }],
  });

const coalesce = z
  .strictObject({
    enabled: doc(
      bool().default(true),
      'Coalesce: alerts of one batch become one thread and at most one investigation, each alert keeping its own ledger open (false = one thread per alert).',
    ),
    group: doc(
      bool().default(true),
      'Alerts of one Alertmanager notification group (its `groupKey`, shaped by `group_by`) share one thread while any of them fires; the first is posted at once.',
    ),
    labels: doc(
      z.array(str(), { error: 'must be a list of label names' }).default([]),
      'Alerts whose values of all these labels agree form a batch (checked before the group).',
      { example: ['cluster', 'namespace'] },
    ),
    debounce: dur('30s', 'A correlation-label batch stays open while its alerts arrive at most this far apart.', { positive: true }),
    max_wait: dur('2m', 'A correlation-label batch closes this long after its first alert, however busy the storm.', { positive: true }),
    max_alerts: doc(
      int(1).default(50),
      'Most alerts in one correlation-label thread (and its one investigation); the next starts a new batch. A group is never split.',
    ),
  })
  .transform((v) => withMs(v, ['debounce', 'max_wait']));

const trigger = z
  .strictObject({
    match: rules('Only alerts matching at least one rule are handled (empty = all).'),
    ignore: rules('Alerts matching any rule are dropped (checked after `match`).'),
    dedup_window: dur('0s', 'The same fingerprint re-sent inside this window is dropped (0 = off).'),
    debounce: dur('0s', 'Hold a firing alert this long; drop it if it resolves meanwhile (0 = off; never for critical). Holds survive restarts.'),
    investigate_after: dur('60s', 'Wait this long before starting an investigation (never for critical); a resolve meanwhile cancels it.'),
    max_investigations_per_hour: doc(
      int(0).default(30),
      'Investigations started per rolling hour; the excess is recorded as skipped, never silently lost (0 = no limit).',
    ),
    coalesce: doc(block(coalesce.prefault({})), 'Storm coalescing (SPEC §4).'),
  })
  .transform((v) => withMs(v, ['dedup_window', 'debounce', 'investigate_after']));

const alertmanager = z
  .strictObject({
    url: doc(httpUrl().optional(), 'Alertmanager base URL for its v2 API: a 🔕 can also silence there, and threads are reconciled with its alerts.', {
      example: 'http://alertmanager.monitoring:9093',
      env: ['REPRISE_ALERTMANAGER_URL'],
    }),
    reconcile_interval: dur('60s', 'How often threads still firing are checked against `GET /api/v2/alerts` (silenced, inhibited, no longer firing).', {
      positive: true,
    }),
    timeout: dur('10s', 'Timeout of one Alertmanager API call.', { positive: true }),
  })
  .transform((v) => withMs(v, ['reconcile_interval', 'timeout']));

const pagerduty = z
  .strictObject({
    api_url: doc(httpUrl().default('https://api.pagerduty.com'), "PagerDuty's REST API base URL (v2).", { env: ['REPRISE_PAGERDUTY_API_URL'] }),
    token: doc(
      str().optional(),
      'PagerDuty REST API token: with it and `from`, an ack in chat of a PagerDuty incident acknowledges it in PagerDuty too; `reprise import pagerduty` reads resolved incidents with it (a read-only key is enough there, and `from` is not needed).',
      {
        secret: true,
        env: ['REPRISE_PAGERDUTY_TOKEN'],
      },
    ),
    from: doc(str().optional(), 'Email of the PagerDuty user the acknowledgements are made as (the `From` header PagerDuty requires).', {
      env: ['REPRISE_PAGERDUTY_FROM'],
      example: 'oncall-bot@example.com',
    }),
    timeout: dur('10s', 'Timeout of one PagerDuty API call.', { positive: true }),
    max_attempts: doc(int(1, 50).default(6), 'Attempts of one acknowledge before it is given up (recorded, and said in the thread).'),
    retry_base: dur('2s', 'Wait after the first failed attempt; it doubles each time, up to `retry_max` (a 429 Retry-After wins).', { positive: true }),
    retry_max: dur('5m', 'Longest wait between two attempts.', { positive: true }),
  })
  .transform((v) => withMs(v, ['timeout', 'retry_base', 'retry_max']));

const ledger = z
  .strictObject({
    recurrence_cooldown: dur(
      '0s',
      'A trigger concluded this recently is not re-investigated (0 = off); a never-concluded trigger always goes through, a standing 👎 re-arms it.',
    ),
    resolve_window: dur(
      '24h',
      'A recall still unresolved this long after it was posted counts against its entry; before that it is in progress, neither success nor failure.',
      { positive: true },
    ),
  })
  .transform((v) => withMs(v, ['recurrence_cooldown', 'resolve_window']));

const allowUsers = (surface: string, example: string) =>
  doc(
    z.array(str(), { error: 'must be a list of user ids' }).default([]),
    `${surface} users who may vote, silence, write notes and see incidents through commands (others are told they are not on it); empty = everyone in the channel.`,
    { example: [example] },
  );

const slack = z.strictObject({
  bot_token: doc(str().optional(), 'Bot token (xoxb-…). Slack is on when this is set.', { secret: true, env: ['SLACK_BOT_TOKEN'] }),
  signing_secret: doc(str().optional(), 'Signing secret that verifies Slack requests to /slack/events (HTTP mode); not needed in Socket Mode.', {
    secret: true,
    env: ['SLACK_SIGNING_SECRET'],
  }),
  app_token: doc(str().optional(), 'App-level token (xapp-…): when set, Socket Mode — no public ingress needed.', { secret: true, env: ['SLACK_APP_TOKEN'] }),
  channel: doc(
    str().optional(),
    "Channel id the RCA threads are posted to (unless a routing rule or ?channel= says otherwise); commands are taken here, in routing rules' channels and in incident threads only.",
    {
      example: 'C0123456789',
      env: ['SLACK_CHANNEL'],
    },
  ),
  api_url: doc(httpUrl().optional(), 'Slack Web API base URL (tests point it at a fake).', { example: 'https://slack.com/api/', env: ['SLACK_API_URL'] }),
  allow_users: allowUsers('Slack', 'U0123456789'),
});
const matrix = z.strictObject({
  homeserver_url: doc(httpUrl().optional(), 'Homeserver base URL. Matrix is on when this and the access token are set.', {
    example: 'https://matrix.example.org',
    env: ['MATRIX_HOMESERVER_URL'],
  }),
  access_token: doc(str().optional(), 'Access token of the bot user.', { secret: true, env: ['MATRIX_ACCESS_TOKEN'] }),
  room_id: doc(
    str().optional(),
    "Room the RCA threads are posted to (unless a routing rule or ?room= says otherwise); commands are taken here, in routing rules' rooms and in incident threads only.",
    {
      example: '!abc123:example.org',
      env: ['MATRIX_ROOM_ID'],
    },
  ),
  rooms: doc(
    z.array(str(), { error: 'must be a list of room ids' }).default([]),
    'More rooms the bot may post in and listen to (routing targets); events from any other room are ignored.',
    { example: ['!ops:example.org'] },
  ),
  allow_users: allowUsers('Matrix', '@oncall:example.org'),
});
const people = z
  .strictObject({
    cache_size: doc(int(1).default(5000), 'Display names kept in memory (Slack users.info, Matrix profiles); past this the least recently used is dropped.'),
    ttl: dur('6h', 'How long a looked-up display name is shown before it is asked for again.', { positive: true }),
    retry_after: dur('5m', 'A lookup that failed (not found, refused, unreachable) is not tried again for this long; the id is shown meanwhile.', {
      positive: true,
    }),
    lookup_timeout: dur(
      '3s',
      'Longest wait for one display-name lookup: a card never waits for one; a person first seen on Matrix or Mattermost, a PR body or a postmortem waits at most this long.',
      {
        positive: true,
      },
    ),
  })
  .transform((v) => withMs(v, ['ttl', 'retry_after', 'lookup_timeout']));
const mattermost = z.strictObject({
  url: doc(httpUrl().optional(), 'Server base URL. Mattermost is on when this, the token and the channel are set.', {
    example: 'https://chat.example.org',
    env: ['MATTERMOST_URL'],
  }),
  token: doc(str().optional(), 'Access token of the bot account (System Console → Integrations → Bot Accounts).', { secret: true, env: ['MATTERMOST_TOKEN'] }),
  channel: doc(
    str().optional(),
    "Channel the RCA threads are posted to: its id or `team-name/channel-name` (unless a routing rule says otherwise); commands are taken here, in routing rules' channels and in incident threads only.",
    { example: 'ops/incidents', env: ['MATTERMOST_CHANNEL'] },
  ),
  slash_token: doc(
    str().optional(),
    'Token of a `/reprise` slash command whose request URL is `<server.public_url>/mattermost/command` (taken only with `server.public_url` set; without it there is no slash command).',
    { secret: true, env: ['MATTERMOST_SLASH_TOKEN'] },
  ),
  allow_users: allowUsers('Mattermost', 'k9x3m4c1n7bqdp8rj2w5ty6fze'),
});
const CONSOLE_MODES = ['auto', 'on', 'off'] as const;
const transport = z.strictObject({
  console: doc(oneOf(CONSOLE_MODES).default('auto'), 'Print threads to stdout: auto = only when no chat surface (Slack, Matrix, Mattermost) is configured.'),
  transcript: doc(str().optional(), 'Also append every message sent on every surface (Slack, Matrix, Mattermost, console) to this file (JSON lines).', {
    fsPath: true,
    env: ['REPRISE_TRANSCRIPT'],
    example: './transcript.jsonl',
  }),
  slack: doc(block(slack.prefault({})), 'Slack app settings; see manifests/slack-app.yaml.'),
  matrix: doc(block(matrix.prefault({})), 'Matrix bot settings (end-to-end encrypted rooms are not supported).'),
  mattermost: doc(block(mattermost.prefault({})), 'Mattermost bot settings; see docs/mattermost.md.'),
  people: doc(block(people.prefault({})), 'Display names where text cannot mention a person (PR bodies, postmortems, /ui, the console, the other surface).'),
});

const routeRule = z.strictObject({
  match: doc(rule, 'Matchers (severity, alertname, namespace, labels) the alert must all meet.'),
  ask_fix: doc(z.boolean().optional(), 'Ask "what fixed it?" when a matching incident resolves (absent: `thread.ask_fix`).'),
  slack: doc(str().optional(), 'Slack channel id for matching alerts.', { example: 'C0PAYMENTS' }),
  matrix: doc(str().optional(), 'Matrix room id for matching alerts.', { example: '!payments:example.org' }),
  mattermost: doc(str().optional(), 'Mattermost channel (id or team-name/channel-name) for matching alerts.', { example: 'ops/payments' }),
});
const mentionRule = z.strictObject({
  match: doc(rule, 'Matchers the critical alert must meet.'),
  slack: doc(z.array(str()).default([]), 'Slack user (U…) or user-group (S…) ids to ping.', { example: ['S0ONCALL'] }),
  matrix: doc(z.array(str()).default([]), 'Matrix user ids to ping.', { example: ['@oncall:example.org'] }),
  mattermost: doc(z.array(str()).default([]), 'Mattermost usernames or group names to ping (never channel, here or all).', { example: ['oncall'] }),
});
const thread = z
  .strictObject({
    ask_fix: doc(z.boolean().default(true), 'Ask "what fixed it?" once in the thread when an incident no instant recall answered resolves.'),
    fix_max_bytes: doc(int(64).default(8192), 'Longest `fixed:` reply accepted, in bytes; a longer one is refused with a reply.'),
    fixes_per_thread: doc(int(1).default(5), 'Fixes recorded per incident thread.'),
    questions_per_hour: doc(int(1).default(5), 'Questions answered per incident thread per rolling hour.'),
    refusal_window: dur(
      '10m',
      'A note, fix or question refused (past its cap, too long, empty) is answered to that person privately once per thread in this window, saying further ones are ignored; the rest are not answered, so refusals never crowd the channel.',
      { positive: true },
    ),
  })
  .transform((v) => withMs(v, ['refusal_window']));
const routing = z.strictObject({
  rules: doc(
    z.array(routeRule, { error: 'must be a list of routing rules' }).default([]),
    "Where an incident goes: the first matching rule wins, then the surface default. A webhook's ?channel= / ?room= wins over both.",
    { example: [{ match: { namespace: 'payments*' }, slack: 'C0PAYMENTS' }] },
  ),
  mentions: doc(z.array(mentionRule, { error: 'must be a list of mention rules' }).default([]), 'Whom to ping on critical firings (never on resolves).'),
});

const outbox = z
  .strictObject({
    concurrency: doc(int(1).default(8), "Threads delivered at once; one thread's messages always go in order."),
    window: doc(
      int(1).default(500),
      'Most undelivered messages held in memory while a backlog drains; the rest wait in the store and are read a page at a time.',
    ),
    retry_base: dur('1s', "First retry delay after a failed delivery; doubled per attempt (a surface's Retry-After wins).", { positive: true }),
    retry_max: dur('5m', 'Longest wait between two attempts.', { positive: true }),
    max_age: dur('24h', 'A message still undelivered this long after it was recorded is given up, and that is recorded.', { positive: true }),
    answer_max_age: dur(
      '30m',
      "A private answer (a command's result, a click's acknowledgement) still undelivered this long is given up: the person has moved on, and Slack's response_url lapses after 30 minutes.",
      { positive: true },
    ),
    duplicate_watch: dur(
      '30s',
      'Redis only: a Slack post answered after its replica lost the lead is not recorded; the replica watches the ledger this long and deletes its post if the new leader recorded another. 0s: off.',
    ),
    duplicate_sweep: dur(
      '20s',
      'Redis only: a new leader reads a channel (or thread) again this long after delivering an item the old leader may have sent, and deletes a late duplicate (lease TTL + Slack request timeout). 0s: off.',
    ),
    duplicate_sweep_again: dur('2m', 'The same, a second time this long after the delivery (0s: once only).'),
  })
  .transform((v) => withMs(v, ['retry_base', 'retry_max', 'max_age', 'answer_max_age', 'duplicate_watch', 'duplicate_sweep', 'duplicate_sweep_again']));

const price = z.strictObject({
  input: doc(num(0), 'US dollars per million input (prompt) tokens.'),
  output: doc(num(0), 'US dollars per million output (completion) tokens.'),
});

const model = z
  .strictObject({
    base_url: doc(httpUrl(), 'OpenAI-compatible Chat Completions base URL (OpenAI, Azure, vLLM, Ollama, LiteLLM…).', {
      example: 'https://api.openai.com/v1',
      env: ['REPRISE_MODEL_BASE_URL'],
      opensBlock: true,
    }),
    model: doc(str(), 'Model name for investigations (and rerank/verify unless set below).', {
      example: 'gpt-4.1-mini',
      env: ['REPRISE_MODEL'],
      opensBlock: true,
    }),
    api_key: doc(str().optional(), 'API key (omit for local servers that need none).', { secret: true, env: ['REPRISE_MODEL_API_KEY', 'OPENAI_API_KEY'] }),
    verify_model: doc(str().optional(), 'Cheaper model for the adversarial verify step (default: `model`).', { example: 'gpt-4.1-nano' }),
    rerank_model: doc(str().optional(), 'Model for the rerank call of the match gate (default: `verify_model`, else `model`).', { example: 'gpt-4.1-nano' }),
    fallback_model: doc(str().optional(), 'Model on the same endpoint tried when `model` errors or answers malformed twice; then the answer is degraded.', {
      example: 'gpt-4.1',
    }),
    request_timeout: dur('60s', 'Timeout of one model call.', { positive: true }),
    max_retries: doc(int(0).default(2), 'SDK retries of a failed model call (429, 5xx, connection); 0 in tests.'),
    max_output_tokens: doc(int(1).default(4096), 'Most tokens one model turn may write (or what is left of `max_tokens`, if less).'),
    max_steps: doc(int(1).default(20), 'Most model turns per investigation; reaching it ends the run `exhausted`.'),
    max_tokens: doc(int(1).default(400_000), 'Most tokens (in + out) per investigation; reaching it ends the run `exhausted`.'),
    wall_time: dur('5m', 'Longest an investigation may run; reaching it ends the run `exhausted`.', { positive: true }),
    daily_token_budget: doc(int(1).optional(), 'Most tokens per UTC day across all investigations; new runs past it are `skipped` (unset = no daily budget).', {
      example: 5_000_000,
    }),
    max_concurrent: doc(int(1).default(2), 'Investigations running at once; more wait, never dropped.'),
    resume_max_age: dur(
      '1h',
      'An investigation a restart or a change of leader interrupted is resumed if its alert is at most this old; an older one is recorded as skipped.',
      { positive: true },
    ),
    step_cap_bytes: doc(int(256).default(4096), 'Each recorded Step keeps at most this many bytes of model text or tool output (secrets redacted).'),
    prices: doc(
      z.record(z.string(), price, { error: 'must be a map of model name → {input, output}' }).default({}),
      'Price table for the estimated cost: model name → US dollars per million tokens in and out.',
      { example: { 'gpt-4.1-mini': { input: 0.4, output: 1.6 } } },
    ),
  })
  .transform((v) => withMs(v, ['wall_time', 'request_timeout', 'resume_max_age']));

const ACCESS = ['read', 'write'] as const;
const MCP_TRANSPORTS = ['stdio', 'http'] as const;
const TOOL_SERVER_NAME = /^[a-z][a-z0-9_-]*$/;
const toolServer = z
  .strictObject({
    name: doc(
      z
        .string({ error: 'must be a server name' })
        .regex(TOOL_SERVER_NAME, { error: 'must be lower-case letters, digits, _ or - (tools are offered as <name>__<tool>)' }),
      'Server name; its tools are offered as `<name>__<tool>`.',
    ),
    access: doc(oneOf(ACCESS), "What the server can do: only `read` servers' tools may be used; a mixed server is `write`."),
    transport: doc(oneOf(MCP_TRANSPORTS).default('stdio'), 'How to reach it: stdio (a command) or http (Streamable HTTP).'),
    command: doc(str().optional(), 'stdio: executable to start.'),
    args: doc(z.array(z.string()).default([]), 'stdio: its arguments.'),
    env: doc(z.record(z.string(), z.string()).default({}), 'stdio: extra environment for it.'),
    url: doc(httpUrl().optional(), 'http: the Streamable HTTP endpoint.'),
    headers: doc(z.record(z.string(), z.string()).default({}), 'http: extra request headers (e.g. Authorization).', { secret: true }),
  })
  .superRefine((s, ctx) => {
    if (s.transport === 'stdio' && !s.command)
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'is required when transport is stdio', input: undefined });
    if (s.transport === 'http' && !s.url) ctx.addIssue({ code: 'custom', path: ['url'], message: 'is required when transport is http', input: undefined });
  });

const scopeRule = z.strictObject({
  when: doc(z.record(z.string(), z.string()).default({}), 'Incident label globs that must all match for the rule to apply (empty = every incident).'),
  args: doc(
    z.array(str()).min(1, { error: 'must name at least one tool argument' }),
    'Tool argument names the rule checks (top-level; string or list of strings).',
  ),
  allow: doc(z.array(str()).default([]), "Globs a value must match; `${label}` is the incident's label (namespace and cluster fall back to its workload)."),
  deny: doc(z.array(str()).default([]), 'Globs a value must not match.'),
  required: doc(
    bool().default(false),
    'Refuse a call that leaves out every one of `args` when the tool accepts one of them (e.g. an events list without a namespace reads every namespace).',
  ),
});

const tools = z
  .strictObject({
    servers: doc(z.array(toolServer, { error: 'must be a list of MCP servers' }).default([]), 'MCP tool servers (SPEC §7).', {
      example: [{ name: 'k8s', access: 'read', transport: 'http', url: 'http://mcp-k8s:8080/mcp' }],
    }),
    allow: doc(
      z
        .array(z.string({ error: 'must be a tool name' }).regex(/^[A-Za-z0-9_.-]+$/, { error: 'must be a tool name like k8s__pod_status (no wildcards)' }))
        .default(['kb_search', 'kb_get', 'prior_findings', 'recurrence']),
      'Tools an investigation may call, by full name (`<server>__<tool>` or a built-in); no wildcards.',
    ),
    confirm: doc(
      z.array(str()).max(2, { error: 'must name at most 2 tools' }).default([]),
      'One or two read-only tools run to confirm an instant recall against live state (e.g. pod status, events), scoped to the namespace; each must be on `allow` too.',
      { example: ['k8s__pod_status', 'k8s__events'] },
    ),
    call_timeout: dur('15s', 'Timeout of one tool call; a timeout is recorded and the run goes on.', { positive: true }),
    connect_timeout: dur('10s', 'Timeout of connecting to an MCP server and listing its tools (a stdio server is started first).', { positive: true }),
    result_cap_bytes: doc(int(1).default(16_384), 'Tool results are truncated to this many bytes (the truncation is recorded).'),
    review_cap_bytes: doc(
      int(256).default(4096),
      "Bytes of live-state output (confirm, or the investigation's tools) the verify reviewer sees in all; keeps the recall path cheap.",
    ),
    scope: doc(
      z.array(scopeRule, { error: 'must be a list of scope rules' }).default([]),
      'Rules bounding what an investigation may read, checked on tool arguments before each call.',
      {
        example: [
          { args: ['namespace'], allow: ['${namespace}'] },
          { when: { env: 'prod' }, args: ['cluster', 'namespace'], deny: ['*staging*'] },
        ],
      },
    ),
  })
  .superRefine((t, ctx) => {
    t.confirm.forEach((name, i) => {
      if (!t.allow.includes(name))
        ctx.addIssue({ code: 'custom', path: ['confirm', i], message: `is not on tools.allow (add ${name} there)`, input: undefined });
    });
  })
  .transform((v) => withMs(v, ['call_timeout', 'connect_timeout']));

const forge = z
  .strictObject({
    repo: doc(
      z.string({ error: 'must be owner/name' }).regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, { error: 'must be owner/name, e.g. acme/runbooks' }),
      'GitHub repository (owner/name) of the catalog, where knowledge drafts become pull requests.',
      { example: 'acme/runbooks', env: ['REPRISE_GITHUB_REPO'], opensBlock: true },
    ),
    token: doc(
      str().optional(),
      'GitHub token with write access to contents, pull requests and issues of `repo`; also used to push draft branches over https.',
      { secret: true, env: ['GITHUB_TOKEN'] },
    ),
    api_url: doc(httpUrl().default('https://api.github.com'), 'GitHub API root; for GitHub Enterprise https://HOST/api/v3.', {
      env: ['REPRISE_GITHUB_API_URL'],
    }),
    app_id: doc(str().optional(), 'GitHub App id (instead of a token).', { env: ['REPRISE_GITHUB_APP_ID'] }),
    app_private_key: doc(str().optional(), 'GitHub App private key (PEM).', { secret: true, env: ['REPRISE_GITHUB_APP_PRIVATE_KEY'] }),
    app_installation_id: doc(int(1).optional(), "GitHub App installation id on the repository's owner.", { env: ['REPRISE_GITHUB_APP_INSTALLATION_ID'] }),
    work_dir: doc(str().optional(), 'Work clone for draft branches (never the served catalog clone). Default: `forge-work` in `store.data_dir`.', {
      fsPath: true,
    }),
    labels: doc(z.array(str()).default(['reprise', 'kb-draft']), 'Labels on every draft pull request.'),
    min_confidence: doc(fraction().default(0.75), 'Quality bar: a Finding below this confidence is not drafted.'),
    dup_score: doc(num(0).default(8), 'A catalog entry scoring at least this (BM25) against a Finding already holds that knowledge: no draft.'),
    writes_per_hour: doc(int(1).default(30), 'Most forge write calls (pull requests, comments, labels) per hour; more wait, never dropped.'),
    retry_base: dur('30s', 'First retry after a forge or git failure; doubled per attempt (a rate-limit reset wins).', { positive: true }),
    retry_max: dur('30m', 'Longest wait between two attempts.', { positive: true }),
    max_age: dur('7d', 'Forge work still not done this long after it was recorded is given up (recorded, and the thread told).', { positive: true }),
  })
  .transform((v) => withMs(v, ['retry_base', 'retry_max', 'max_age']));

const SWEEP_MODES = ['dry-run', 'apply'] as const;
const curate = z
  .strictObject({
    interval: dur('6h', 'How often `serve` runs the grooming sweeps when a forge is configured (first run a minute after start).', { positive: true }),
    mode: doc(
      oneOf(SWEEP_MODES).default('dry-run'),
      'Scheduled sweeps only plan and audit (`dry-run`) or act on the forge (`apply`). `reprise curate --apply` acts either way.',
    ),
    stale_after: dur('30d', 'A Reprise PR with no forge activity this long and no human label is closed with a back-reference comment (0 = never).'),
    title_similarity: doc(fraction().default(0.8), 'Title word overlap (Jaccard) at which two PRs without fingerprint markers are duplicates.'),
    recurrence_threshold: doc(
      int(2).default(3),
      'Occurrences of an unanswered trigger (or of a finding a human rejected) before one knowledge-gap issue is opened.',
    ),
    min_observations: doc(int(1).default(3), 'Observations an entry needs before a retirement PR is proposed (its factor below `recall.outcome_floor`).'),
    retirement: doc(bool().default(true), 'Propose `status: retired` PRs for entries whose track record collapsed (needs catalog.git).'),
    revalidation: doc(bool().default(true), 'Propose `last_validated` PRs for entries whose recall resolved an incident (needs catalog.git).'),
    revalidation_min_interval: dur('720h', 'A revalidation must move `last_validated` forward by at least this much.', { positive: true }),
    revalidation_max_open: doc(int(1).default(5), 'Revalidation PRs awaiting review at once, at most.'),
  })
  .transform((v) => withMs(v, ['interval', 'stale_after', 'revalidation_min_interval']));

const identity = z.strictObject({
  labels: doc(
    z
      .array(z.string({ error: 'must be a label name' }).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a Prometheus label name'), {
        error: 'must be a list of label names',
      })
      .default([]),
    'Your own identifying labels: alerts that differ in any of them never share a trigger (silence, recurrence, votes). Added to the identity docs/identity.md describes; changing the list starts new triggers for alerts that carry them.',
    { example: ['env', 'component'] },
  ),
});

/** `grafana.example.org`, `10.0.3.17`, `[2001:db8::1]`, or `*.example.org` for any host under a domain. */
const HOST_PATTERN =
  /^(\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.?$|^\[[0-9A-Fa-f:.]+\]$|^[0-9A-Fa-f]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*$/;
const links = z.strictObject({
  allowed_hosts: doc(
    z
      .array(
        z.string({ error: 'must be a host name' }).regex(HOST_PATTERN, 'must be a host name (grafana.example.org) or *.domain, without scheme, port or path'),
        {
          error: 'must be a list of host names',
        },
      )
      .default([]),
    'Hosts the links taken from alerts (source, runbook_url, dashboards, panel, silence, image) may point to; `*.example.org` allows any host under it. Others are not shown (the thread says which and why). Empty = any host.',
    { example: ['grafana.example.org', '*.runbooks.example.org'] },
  ),
});

/** An IPv4/IPv6 address, or a CIDR block (`10.0.0.0/8`, `fd00::/8`). */
function isAddressOrCidr(v: string): boolean {
  const [addr = '', bits, extra] = v.split('/');
  const family = isIP(addr);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d{1,3}$/.test(bits) && n >= 0 && n <= (family === 4 ? 32 : 128);
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const ui = z
  .strictObject({
    enabled: doc(
      bool().default(true),
      'Serve the read-only memory view at `/ui` on the HTTP port (docs/memory-view.md): from loopback only unless `token` or `trusted_header` is set.',
    ),
    token: doc(
      token().optional(),
      'Lets remote browsers into `/ui`: sent as `Authorization: Bearer …`, or typed once into `/ui/login` (each sign-in gets a random session cookie, kept server-side with `session_idle` / `session_max` and revocable with `reprise ui sessions revoke`; never the token). At least 16 characters, never an example from the docs: `openssl rand -hex 24`.',
      { secret: true, env: ['REPRISE_UI_TOKEN'], example: '<openssl rand -hex 24>' },
    ),
    allowed_hosts: doc(
      z
        .array(
          z
            .string({ error: 'must be a host name' })
            .regex(HOST_PATTERN, 'must be a host name (reprise.monitoring.svc) or *.domain, without scheme, port or path'),
          { error: 'must be a list of host names' },
        )
        .default([]),
      'More host names the HTTP port answers to (every route, webhooks too), besides loopback names, the address a connection arrived on and `server.public_url`: e.g. the Service names in-cluster senders use. A request naming any other host in `Host` or `Origin` is refused (403). From the environment: comma-separated.',
      { env: ['REPRISE_UI_ALLOWED_HOSTS'], example: ['reprise.monitoring.svc', 'reprise.monitoring.svc.cluster.local'] },
    ),
    trusted_header: doc(
      str().regex(HEADER_NAME, 'must be an HTTP header name').optional(),
      'Header an authenticating proxy (oauth2-proxy) sets to the signed-in user; believed only when the TCP peer is one of `trusted_proxies`.',
      { env: ['REPRISE_UI_TRUSTED_HEADER'], example: 'X-Forwarded-User' },
    ),
    trusted_proxies: doc(
      z
        .array(str().refine(isAddressOrCidr, 'must be an IP address or a CIDR block (10.0.0.0/8)'), { error: 'must be a list of addresses or CIDR blocks' })
        .default([]),
      "Addresses or CIDR blocks of the proxies whose `trusted_header` is believed (both or neither); the peer address is the TCP connection's, never a forwarded header. Once any is set, loopback gets no implicit pass: every request needs the header from a listed proxy, or the token. From the environment: comma-separated.",
      { env: ['REPRISE_UI_TRUSTED_PROXIES'], example: ['10.0.0.0/8'] },
    ),
    session_idle: dur('2h', 'A signed-in session unused this long is refused (sign in again); each sign-in is its own session, kept in the configured store.', {
      positive: true,
    }),
    session_max: dur('12h', 'A session is refused this long after its sign-in, however much it is used.', { positive: true }),
    sign_in_attempts: doc(
      int(1, 1000).default(5),
      'Wrong tokens one address may try (at `/auth/ui` or as a bearer on `/ui`) before each further try must wait: 1 s, doubling, up to `sign_in_backoff_max` (429 with Retry-After); a right one resets it.',
    ),
    sign_in_backoff_max: dur('15m', 'Longest wait between two sign-in tries from one address after too many wrong tokens.', { positive: true }),
  })
  .transform((v) => withMs(v, ['session_idle', 'session_max', 'sign_in_backoff_max']))
  .superRefine((v, ctx) => {
    // Half a proxy setup is never what was meant: a header believed from nobody, or proxies
    // whose traffic (loopback's, for a sidecar) gets in with no way to tell who sent it.
    if (v.trusted_header !== undefined && v.trusted_proxies.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['trusted_proxies'],
        message:
          "must name the proxy addresses when `trusted_header` is set (e.g. [127.0.0.1] for a sidecar, the ingress controller pods' CIDR behind an ingress; REPRISE_UI_TRUSTED_PROXIES), or remove `trusted_header`",
        input: v.trusted_proxies,
      });
    if (v.trusted_header === undefined && v.trusted_proxies.length > 0)
      ctx.addIssue({
        code: 'custom',
        path: ['trusted_header'],
        message:
          'is required when `trusted_proxies` is set: name the header the proxy puts the signed-in user in (X-Forwarded-User for oauth2-proxy, X-Auth-Request-User through ingress-nginx; REPRISE_UI_TRUSTED_HEADER), or remove `trusted_proxies`',
        input: undefined,
      });
  });

const oncallPerson = z.strictObject({
  name: doc(str(), 'How the person is named on cards and by `/reprise oncall`; rotations and overrides name people by it.'),
  email: doc(str().optional(), "Email: matches a provider's person to this entry, and Slack (and Mattermost) ids are looked up by it.", {
    example: 'ann@example.org',
  }),
  slack: doc(str().optional(), 'Slack user id (U…): used as is instead of `users.lookupByEmail`.', { example: 'U0ANN' }),
  matrix: doc(str().optional(), 'Matrix user id: Matrix has no lookup by email, so a Matrix card mentions only people mapped here.', {
    example: '@ann:example.org',
  }),
  mattermost: doc(str().optional(), 'Mattermost user id: used as is instead of `GET /users/email/{email}`.'),
});
const oncallOverride = z.strictObject({
  from: doc(str(), 'ISO instant the override starts.', { example: '2026-12-24T18:00:00Z' }),
  to: doc(str(), 'ISO instant it ends (exclusive).', { example: '2026-12-26T09:00:00Z' }),
  person: doc(str(), 'Who is on call meanwhile (a name in `oncall.people`, or any name).'),
});
const oncallRotation = z
  .strictObject({
    people: doc(z.array(str(), { error: 'must be a list of names' }).min(1, 'must name at least one person'), 'Names, in rotation order.', {
      example: ['ann', 'bob'],
    }),
    every: doc(oneOf(['daily', 'weekly']).default('weekly'), 'How often the pager passes to the next person.'),
    handoff: doc(str().default('09:00'), 'Local handoff time (HH:MM) in `timezone`.'),
    timezone: doc(str().default('UTC'), 'IANA time zone of the handoff.', { example: 'Europe/Berlin' }),
    start: doc(str(), "Local date (YYYY-MM-DD) whose handoff starts the first person's first shift.", { example: '2026-11-30' }),
    overrides: doc(
      z.array(oncallOverride, { error: 'must be a list of overrides' }).default([]),
      'Swaps and cover: who is on call from/to, ahead of the rotation.',
    ),
  })
  .superRefine((v, ctx) => {
    const why = rotationProblem(v);
    if (why) ctx.addIssue({ code: 'custom', message: why, input: v });
    for (const [i, o] of v.overrides.entries())
      if (!(Date.parse(o.from) < Date.parse(o.to)))
        ctx.addIssue({ code: 'custom', path: ['overrides', i], message: 'must have ISO instants with `from` before `to`', input: o });
  });
const oncallSourceShape = {
  rotation: doc(oncallRotation.optional(), 'The embedded rotation: needs no service.'),
  pagerduty: doc(
    z
      .strictObject({
        escalation_policy: doc(str().optional(), "Escalation policy id; unset: the PagerDuty service's of the incident (PagerDuty-sourced incidents only)."),
      })
      .optional(),
    'PagerDuty `GET /oncalls` (`pagerduty.token` and `pagerduty.api_url`).',
  ),
  grafana: doc(
    z.strictObject({ schedule: doc(str(), 'Grafana OnCall schedule id.') }).optional(),
    'Grafana OnCall / IRM `on_call_now` of a schedule (`oncall.grafana_url`).',
  ),
};
function oneSource(v: { rotation?: unknown; pagerduty?: unknown; grafana?: unknown }, ctx: z.RefinementCtx): void {
  const n = [v.rotation, v.pagerduty, v.grafana].filter((x) => x !== undefined).length;
  if (n > 1) ctx.addIssue({ code: 'custom', message: 'must name one source: rotation, pagerduty or grafana', input: v });
}
const oncallRoute = z
  .strictObject({
    name: doc(str(), 'The route name `/reprise oncall <name>` asks about.', { example: 'payments' }),
    match: doc(rule, 'Matchers (severity, alertname, namespace, labels) the alert must all meet.'),
    ...oncallSourceShape,
  })
  .superRefine(oneSource);
const oncall = z
  .strictObject({
    ...oncallSourceShape,
    routes: doc(
      z.array(oncallRoute, { error: 'must be a list of on-call routes' }).default([]),
      'Per-team sources, first match wins; the source above is the `default` route.',
    ),
    people: doc(
      z.array(oncallPerson, { error: 'must be a list of people' }).default([]),
      'Who may be on call, and their chat ids (a provider person is matched by email, else by name).',
    ),
    remind_after: dur(
      '10m',
      'A critical card nobody acknowledged this long after it was posted mentions the person on call once more in its thread. 0s: no reminder.',
    ),
    timeout: dur('1500ms', 'Longest a critical card waits for the on-call answer; past it the card says "on call: unknown (…)" and is not held up.', {
      positive: true,
    }),
    cache: dur('5m', 'How long an answer without a shift end (Grafana OnCall), or an unknown one, is kept before it is asked again.', { positive: true }),
    grafana_url: doc(httpUrl().optional(), 'Grafana OnCall API base URL (for IRM, its plugin resources URL).', {
      env: ['REPRISE_GRAFANA_ONCALL_URL'],
      example: 'https://oncall-prod-eu-west-0.grafana.net/oncall',
    }),
    grafana_token: doc(str().optional(), 'Grafana OnCall API token.', { secret: true, env: ['REPRISE_GRAFANA_ONCALL_TOKEN'] }),
  })
  .superRefine((v, ctx) => {
    oneSource(v, ctx);
    const grafana = v.grafana !== undefined || v.routes.some((r) => r.grafana !== undefined);
    if (grafana && (v.grafana_url === undefined || v.grafana_token === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [v.grafana_url === undefined ? 'grafana_url' : 'grafana_token'],
        message: 'is required when a Grafana OnCall schedule is a source (or set REPRISE_GRAFANA_ONCALL_URL / REPRISE_GRAFANA_ONCALL_TOKEN)',
        input: undefined,
      });
  })
  .transform((v) => withMs(v, ['remind_after', 'timeout', 'cache']));

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const log = z.strictObject({
  level: doc(oneOf(LOG_LEVELS).default('info'), 'Minimum log level.', { env: ['REPRISE_LOG_LEVEL'] }),
  pretty: doc(bool().default(false), 'Human-readable logs instead of JSON lines.'),
});

/** The whole config file. Every section is optional, so an empty file is a valid config. */
const configShape = z.strictObject({
  server: doc(block(server.prefault({})), 'HTTP server: webhooks, Slack events, /healthz, /readyz, /metrics.'),
  catalog: doc(block(catalog.prefault({})), 'The knowledge catalog: markdown entries, optionally synced from git.'),
  store: doc(block(store.prefault({})), 'Where the ledger (opens, resolves, feedback, silences) is kept.'),
  recall: doc(block(recall.prefault({})), 'Recall gates and confidence shaping (SPEC §6).'),
  trigger: doc(block(trigger.prefault({})), 'Which alerts are handled and when (SPEC §4).'),
  identity: doc(block(identity.prefault({})), 'What makes two alerts the same trigger (docs/identity.md).'),
  links: doc(block(links.prefault({})), 'Links the cards take from alerts: which hosts they may point to (docs/security.md).'),
  ledger: doc(block(ledger.prefault({})), 'Ledger-backed gates (SPEC §8).'),
  alertmanager: doc(block(alertmanager.prefault({})), 'Alertmanager as a partner: silences there, and reconciling threads with its alerts.'),
  pagerduty: doc(block(pagerduty.prefault({})), "PagerDuty's REST API as a partner: a chat ack acknowledges the PagerDuty incident too."),
  transport: doc(
    block(transport.prefault({})),
    'Chat surfaces: each is on when its credentials are set (Slack, Matrix and Mattermost can run at once); the console otherwise.',
  ),
  routing: doc(block(routing.prefault({})), 'Which channel or room an incident goes to, and whom critical firings ping.'),
  oncall: doc(block(oncall.prefault({})), 'Who is on call (docs/oncall.md): named and mentioned on critical cards, reminded once, `/reprise oncall`.'),
  thread: doc(block(thread.prefault({})), 'What people do in an incident thread: say what fixed it, ask a question (issue 21).'),
  outbox: doc(block(outbox.prefault({})), 'Delivery of chat messages: recorded first, delivered after, retried across restarts.'),
  model: doc(block(model.optional()), 'Model endpoint for rerank, investigation and verify; needs `server.bearer_token` to serve. Omit to run recall-only.'),
  forge: doc(
    block(forge.optional()),
    'Knowledge curation on GitHub (SPEC §10): drafts and notes become pull requests on the catalog repository; needs `catalog.git.url`. Omit to keep notes in the ledger only.',
  ),
  tools: doc(block(tools.prefault({})), 'Tools an investigation may use: MCP servers, the allowlist, confirm tools and scope rules (SPEC §7).'),
  curate: doc(block(curate.prefault({})), "Grooming sweeps over the forge's knowledge PRs (SPEC §10); dry run unless told to apply."),
  ui: doc(block(ui.prefault({})), 'The read-only memory view at `/ui`: overview, knowledge, incidents, gaps (docs/memory-view.md).'),
  log: doc(block(log.prefault({})), 'Logging.'),
});

/** The whole config file, with the rules that span keys. */
export const configSchema = configShape.superRefine(crossFieldRules, { when: () => true });

/**
 * The config for a one-shot command that serves nothing (`reprise investigate`): rules tagged
 * `serveOnly` (the webhook bearer token) do not apply to it.
 */
export function parseOneShot(raw: unknown): ReturnType<typeof configSchema.safeParse> {
  const full = configSchema.safeParse(raw);
  if (full.success) return full;
  const rest = full.error.issues.filter((i) => !(i.code === 'custom' && (i.params as { serveOnly?: boolean } | undefined)?.serveOnly));
  if (rest.length > 0) return { success: false, error: new z.ZodError(rest) } as ReturnType<typeof configSchema.safeParse>;
  return configShape.safeParse(raw) as ReturnType<typeof configSchema.safeParse>;
}

/** The resolved config every component reads. */
export type Config = z.output<typeof configSchema>;
/** Present only when the file has a `model` block. */
export type ModelConfig = NonNullable<Config['model']>;
export type ToolsConfig = Config['tools'];

/** The loose shape the cross-field rules read; any part may be missing or mistyped. */
interface Loose {
  forge?: { token?: unknown; app_id?: unknown; app_private_key?: unknown; app_installation_id?: unknown };
  catalog?: { git?: { url?: unknown } };
  server?: { bearer_token?: unknown };
  model?: unknown;
  transport?: {
    slack?: { bot_token?: unknown; signing_secret?: unknown; app_token?: unknown; channel?: unknown };
    matrix?: { homeserver_url?: unknown; access_token?: unknown; room_id?: unknown };
    mattermost?: { url?: unknown; token?: unknown; channel?: unknown };
  };
}

/**
 * Rules that span keys. Runs even when other keys failed (`when`), so one pass reports
 * every problem; hence it reads its input defensively.
 */
function crossFieldRules(cfg: unknown, ctx: z.RefinementCtx<unknown>): void {
  // `about`: the section a rule belongs to when its key is in another (a forge needs catalog.git.url).
  const need = (ok: unknown, path: string[], message: string, about?: string): void => {
    if (ok === undefined || ok === '') ctx.addIssue({ code: 'custom', path, message, input: undefined, ...(about ? { params: { about } } : {}) });
  };
  const c = (typeof cfg === 'object' && cfg !== null ? cfg : {}) as Loose;
  if (c?.model !== undefined && (c.server?.bearer_token === undefined || c.server.bearer_token === '')) {
    // Tagged: it guards the webhook port, so one-shot commands that serve nothing may drop it.
    ctx.addIssue({
      code: 'custom',
      path: ['server', 'bearer_token'],
      message: 'is required when a `model` block is configured (SPEC §4)',
      input: undefined,
      params: { serveOnly: true },
    });
  }
  const f = c?.forge;
  if (f && typeof f === 'object') {
    const app = [f.app_id, f.app_private_key, f.app_installation_id].filter((v) => v !== undefined && v !== '').length;
    if ((f.token === undefined || f.token === '') && app === 0)
      need(undefined, ['forge', 'token'], 'is required when a forge is configured (set GITHUB_TOKEN), or give app_id, app_private_key and app_installation_id');
    else if (app > 0 && app < 3) {
      need(f.app_id, ['forge', 'app_id'], 'is required for GitHub App auth (or set REPRISE_GITHUB_APP_ID)');
      need(f.app_private_key, ['forge', 'app_private_key'], 'is required for GitHub App auth (or set REPRISE_GITHUB_APP_PRIVATE_KEY)');
      need(f.app_installation_id, ['forge', 'app_installation_id'], 'is required for GitHub App auth (or set REPRISE_GITHUB_APP_INSTALLATION_ID)');
    }
    need(
      c.catalog?.git?.url,
      ['catalog', 'git', 'url'],
      'is required when a forge is configured: drafts are pushed there as branches (set REPRISE_CATALOG_GIT_URL)',
      'forge',
    );
  }
  const pd = (c as { pagerduty?: { token?: string; from?: string } } | undefined)?.pagerduty;
  // Tagged: only the serving bot acknowledges; a command that only reads PagerDuty (`reprise import pagerduty`) needs no `From`.
  if (pd?.token !== undefined && pd.token !== '' && (pd.from === undefined || pd.from === ''))
    ctx.addIssue({
      code: 'custom',
      path: ['pagerduty', 'from'],
      message: "is required with pagerduty.token: PagerDuty needs the acknowledging user's email in `From` (or set REPRISE_PAGERDUTY_FROM)",
      input: undefined,
      params: { serveOnly: true },
    });
  const oc = (c as { oncall?: { pagerduty?: unknown; routes?: unknown } } | undefined)?.oncall;
  const pdOnCall =
    oc?.pagerduty !== undefined || (Array.isArray(oc?.routes) && oc.routes.some((r) => (r as { pagerduty?: unknown } | null)?.pagerduty !== undefined));
  if (pdOnCall)
    need(pd?.token, ['pagerduty', 'token'], 'is required when PagerDuty is an on-call source (oncall.pagerduty; or set REPRISE_PAGERDUTY_TOKEN)', 'oncall');
  const t = c?.transport;
  const sl = t?.slack;
  if (sl?.bot_token !== undefined && sl.bot_token !== '') {
    need(sl.channel, ['transport', 'slack', 'channel'], 'is required when Slack is on (or set SLACK_CHANNEL)');
    if ((sl.app_token === undefined || sl.app_token === '') && (sl.signing_secret === undefined || sl.signing_secret === '')) {
      ctx.addIssue({
        code: 'custom',
        path: ['transport', 'slack', 'signing_secret'],
        message: 'is required for HTTP mode (or set SLACK_SIGNING_SECRET); for Socket Mode set app_token (SLACK_APP_TOKEN) instead',
        input: undefined,
      });
    }
  } else if (
    sl &&
    ['signing_secret', 'app_token', 'channel'].some((k) => (sl as Record<string, unknown>)[k] !== undefined && (sl as Record<string, unknown>)[k] !== '')
  ) {
    need(undefined, ['transport', 'slack', 'bot_token'], 'is required: Slack settings are given but no bot token (set SLACK_BOT_TOKEN)');
  }
  const mx = t?.matrix;
  const mxSet = ['homeserver_url', 'access_token', 'room_id'].filter(
    (k) => mx && (mx as Record<string, unknown>)[k] !== undefined && (mx as Record<string, unknown>)[k] !== '',
  );
  if (mxSet.length > 0 && mxSet.length < 3) {
    need(mx?.homeserver_url, ['transport', 'matrix', 'homeserver_url'], 'is required when Matrix is on (or set MATRIX_HOMESERVER_URL)');
    need(mx?.access_token, ['transport', 'matrix', 'access_token'], 'is required when Matrix is on (or set MATRIX_ACCESS_TOKEN)');
    need(mx?.room_id, ['transport', 'matrix', 'room_id'], 'is required when Matrix is on (or set MATRIX_ROOM_ID)');
  }
  const mm = t?.mattermost;
  const mmSet = ['url', 'token', 'channel'].filter((k) => mm && (mm as Record<string, unknown>)[k] !== undefined && (mm as Record<string, unknown>)[k] !== '');
  if (mmSet.length > 0 && mmSet.length < 3) {
    need(mm?.url, ['transport', 'mattermost', 'url'], 'is required when Mattermost is on (or set MATTERMOST_URL)');
    need(mm?.token, ['transport', 'mattermost', 'token'], 'is required when Mattermost is on (or set MATTERMOST_TOKEN)');
    need(mm?.channel, ['transport', 'mattermost', 'channel'], 'is required when Mattermost is on (or set MATTERMOST_CHANNEL)');
  }
}
