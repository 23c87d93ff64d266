/**
 * The one config schema (SPEC §11). Every key has its default and one line of doc here;
 * `reprise config defaults` prints the annotated YAML by walking this schema, so the
 * documentation cannot drift from the code.
 *
 * Durations: YAML holds human strings (`stale_after: 180d`); the parsed config keeps that
 * text and adds the milliseconds beside it (`stale_after_ms: 15552000000`). Code reads the
 * `_ms` field; logs and `config show` read the text.
 */
import { z } from 'zod';
import type { FieldMeta } from './fields.js';
import { block, bool, duration, fraction, glob, httpUrl, int, num, oneOf, str, withMs } from './fields.js';

/** Attaches the one-line doc (and loader facts) to a key. */
function doc<T extends z.ZodType>(schema: T, description: string, meta: FieldMeta = {}): T {
  return schema.meta({ description, ...meta });
}

const dur = (def: string, description: string, opts: { positive?: boolean } = {}) =>
  doc(duration(opts).default(def), description, { duration: true });

const server = z.strictObject({
  port: doc(int(0, 65535, ' (0 = any free port)').default(8080), 'Port the HTTP server (webhooks, Slack events, health, metrics) listens on.', { env: ['PORT'] }),
  host: doc(str().default('0.0.0.0'), 'Address the HTTP server binds to.'),
  bearer_token: doc(str().optional(), 'Token webhook callers must send as `Authorization: Bearer …`; required when a model is configured.', { secret: true, env: ['REPRISE_BEARER_TOKEN'], example: 'change-me' }),
  body_limit_bytes: doc(int(1).default(1_048_576), 'Largest webhook body accepted, in bytes; bigger requests get 413.'),
});

const git = z
  .strictObject({
    url: doc(str(), 'Remote to clone the catalog from (https or ssh); the clone lives in `catalog.dir`.', { example: 'https://github.com/acme/runbooks.git' }),
    branch: doc(str().default('main'), 'Branch to follow.'),
    poll_interval: dur('5m', 'How often to fetch; the index is rebuilt only when HEAD moved.', { positive: true }),
  })
  .transform((v) => withMs(v, ['poll_interval']));

const catalog = z.strictObject({
  dir: doc(str().default('catalog'), 'Folder of markdown entries; relative to the config file (or the working directory without one).', { fsPath: true }),
  git: doc(block(git.optional()), 'Keep `dir` as a clone of a git remote. Omit to read `dir` as is.'),
});

const STORE_URL = /^(sqlite|redis|rediss|memory):\/\//;
const store = z.strictObject({
  url: doc(
    z.string({ error: 'must be a string' }).regex(STORE_URL, { error: 'must start with sqlite://, redis://, rediss:// or memory://' }).optional(),
    'Ledger store: sqlite://path, redis://host:6379 (several replicas) or memory:// (tests). Default: a file store in `data_dir`.',
    { example: 'redis://redis:6379' },
  ),
  data_dir: doc(str().default('./data'), 'Folder for the embedded store and snapshots; relative to the config file.', { fsPath: true, env: ['REPRISE_DATA_DIR'] }),
  snapshot_every: doc(int(1).default(1000), 'Compact the ledger into a snapshot every N events.'),
});

const recall = z
  .strictObject({
    k: doc(int(1).default(20), 'Width of the candidate set taken from the search index before the gates.'),
    min_score: doc(num(0).default(6.0), 'Margin gate (no model): the top BM25 score must reach this. Cross-validated in eval/README.md.'),
    margin_gap: doc(num(0, 1).default(0.05), 'Margin gate: the top score must lead the runner-up by this fraction of the top score (0.05 = 5%). Cross-validated in eval/README.md.'),
    name_boost: doc(num(0).default(3), 'Boost for candidates whose alert name the alert text spells out: score × (1 + name_boost × share of the name\'s words present); 0 = off. Cross-validated in eval/README.md.'),
    solo_floor: doc(num(0).default(8.0), 'Margin gate: the score a lone candidate (no runner-up) must reach; also the bar for scopeless matches. Cross-validated in eval/README.md.'),
    summary_weight: doc(num(0).default(6), 'Query weight of the `summary` annotation (or of the description when there is no summary), relative to the alertname and label values (1). Cross-validated in eval/README.md.'),
    description_weight: doc(num(0).default(0), 'Query weight of the `description` annotation when a `summary` exists too; 0 = the summary speaks for the alert. Cross-validated in eval/README.md.'),
    label_name_weight: doc(num(0).default(1), 'Query weight of label names (`persistentvolumeclaim`, `job_name`); 0 = ignore them. Cross-validated in eval/README.md.'),
    expr_metric_weight: doc(num(0).default(0), 'Query weight of the metric names in the PromQL expression of `generatorURL`; 0 = ignore them (cross-validated: no gain on the dev cases once the summary is weighted; see eval/README.md).'),
    expr_label_weight: doc(num(0).default(0), 'Query weight of that expression\'s label matcher names and positive values; 0 = ignore them (cross-validated, see eval/README.md).'),
    runbook_url_weight: doc(num(0).default(1), 'Query weight of the last path segment and fragment of `runbook_url` (usually the alert\'s name); 0 = ignore. Not calibrated: no dev case carries a runbook_url.'),
    expr_max_terms: doc(int(1).default(200), 'Most distinct names and values read from one PromQL expression (bounds the work on hostile input).'),
    outcome_floor: doc(fraction().default(0.5), 'Outcome gate: reject entries whose track-record factor falls below this.'),
    max_fallbacks: doc(int(0).default(3), 'How many next candidates to try after an outcome-gate rejection.'),
    confidence_cap: doc(fraction().default(0.9), 'Recall confidence never exceeds this.'),
    stale_after: dur('180d', 'An entry not validated for this long has its confidence multiplied by `stale_factor`.', { positive: true }),
    stale_factor: doc(fraction().default(0.75), 'Confidence multiplier for stale entries.'),
    rerank_k: doc(int(1).default(5), 'With a model: how many agreeing candidates the rerank call sees.'),
    rerank_threshold: doc(fraction().default(0.7), 'With a model: the rerank confidence at which recall fires.'),
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
  labels: doc(z.record(z.string(), z.string({ error: 'label values must be strings (quote them)' }), { error: 'must be a map of label → glob' }).optional(), 'Label globs that must all match.'),
});
const rules = (description: string) =>
  doc(z.array(rule, { error: 'must be a list of rules' }).default([]), description, {
    example: [{ severity: 'critical' }, { alertname: 'Kube*', namespace: 'prod-*' }],
  });

const trigger = z
  .strictObject({
    match: rules('Only alerts matching at least one rule are handled (empty = all).'),
    ignore: rules('Alerts matching any rule are dropped (checked after `match`).'),
    dedup_window: dur('0s', 'The same fingerprint re-sent inside this window is dropped (0 = off).'),
    debounce: dur('0s', 'Hold a firing alert this long; drop it if it resolves meanwhile (0 = off).'),
    investigate_after: dur('60s', 'Wait this long before starting an investigation (never for critical); a resolve meanwhile cancels it.'),
  })
  .transform((v) => withMs(v, ['dedup_window', 'debounce', 'investigate_after']));

const ledger = z
  .strictObject({
    recurrence_cooldown: dur('0s', 'A trigger concluded this recently is not re-investigated (0 = off).'),
  })
  .transform((v) => withMs(v, ['recurrence_cooldown']));

const slack = z.strictObject({
  bot_token: doc(str().optional(), 'Bot token (xoxb-…); required when kind is slack.', { secret: true, env: ['SLACK_BOT_TOKEN'] }),
  signing_secret: doc(str().optional(), 'Signing secret that verifies Slack requests; required unless socket_mode.', { secret: true, env: ['SLACK_SIGNING_SECRET'] }),
  app_token: doc(str().optional(), 'App-level token (xapp-…); required with socket_mode.', { secret: true, env: ['SLACK_APP_TOKEN'] }),
  channel: doc(str().optional(), 'Channel id the RCA threads are posted to; required when kind is slack.', { example: 'C0123456789' }),
  api_url: doc(httpUrl().optional(), 'Slack Web API base URL (tests point it at a fake).', { example: 'https://slack.com/api/' }),
  socket_mode: doc(bool().default(false), 'Use Socket Mode (no public ingress) instead of the HTTP receiver.'),
});

const matrix = z.strictObject({
  homeserver_url: doc(httpUrl().optional(), 'Homeserver base URL; required when kind is matrix.', { example: 'https://matrix.example.org' }),
  access_token: doc(str().optional(), 'Access token of the bot user; required when kind is matrix.', { secret: true, env: ['MATRIX_ACCESS_TOKEN'] }),
  room_id: doc(str().optional(), 'Room the RCA threads are posted to; required when kind is matrix.', { example: '!abc123:example.org' }),
});

const TRANSPORTS = ['console', 'slack', 'matrix'] as const;
const transport = z.strictObject({
  kind: doc(oneOf(TRANSPORTS).default('console'), 'Chat surface: console (stdout JSON), slack or matrix.'),
  transcript: doc(str().optional(), 'Also append every outgoing message to this file (JSON lines).', { fsPath: true, env: ['REPRISE_TRANSCRIPT'], example: './transcript.jsonl' }),
  slack: doc(block(slack.prefault({})), 'Slack app settings (used when kind is slack).'),
  matrix: doc(block(matrix.prefault({})), 'Matrix bot settings (used when kind is matrix).'),
});

const model = z
  .strictObject({
    base_url: doc(httpUrl(), 'OpenAI-compatible Chat Completions base URL.', { example: 'https://api.openai.com/v1' }),
    model: doc(str(), 'Model name for investigations and rerank.', { example: 'gpt-4.1-mini' }),
    api_key: doc(str().optional(), 'API key (omit for local servers that need none).', { secret: true, env: ['REPRISE_MODEL_API_KEY', 'OPENAI_API_KEY'] }),
    verify_model: doc(str().optional(), 'Cheaper model for the adversarial verify step (default: `model`).', { example: 'gpt-4.1-nano' }),
    max_steps: doc(int(1).default(20), 'Most model turns per investigation.'),
    max_tokens: doc(int(1).default(400_000), 'Most tokens (in + out) per investigation.'),
    wall_time: dur('5m', 'Longest an investigation may run.', { positive: true }),
    call_timeout: dur('15s', 'Timeout of one tool call.', { positive: true }),
    result_cap_bytes: doc(int(1).default(16_384), 'Tool results are truncated to this many bytes (the truncation is recorded).'),
    daily_token_budget: doc(int(1).optional(), 'Most tokens per UTC day across all investigations (unset = no daily budget).', { example: 5_000_000 }),
    max_concurrent: doc(int(1).default(2), 'Investigations running at once; more wait, never dropped.'),
  })
  .transform((v) => withMs(v, ['wall_time', 'call_timeout']));

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const log = z.strictObject({
  level: doc(oneOf(LOG_LEVELS).default('info'), 'Minimum log level.', { env: ['REPRISE_LOG_LEVEL'] }),
  pretty: doc(bool().default(false), 'Human-readable logs instead of JSON lines.'),
});

/** The whole config file. Every section is optional, so an empty file is a valid config. */
export const configSchema = z
  .strictObject({
    server: doc(block(server.prefault({})), 'HTTP server: webhooks, Slack events, /healthz, /readyz, /metrics.'),
    catalog: doc(block(catalog.prefault({})), 'The knowledge catalog: markdown entries, optionally synced from git.'),
    store: doc(block(store.prefault({})), 'Where the ledger (opens, resolves, feedback, silences) is kept.'),
    recall: doc(block(recall.prefault({})), 'Recall gates and confidence shaping (SPEC §6).'),
    trigger: doc(block(trigger.prefault({})), 'Which alerts are handled and when (SPEC §4).'),
    ledger: doc(block(ledger.prefault({})), 'Ledger-backed gates (SPEC §8).'),
    transport: doc(block(transport.prefault({})), 'Chat surface the RCA threads go to.'),
    model: doc(block(model.optional()), 'Model endpoint for rerank, investigation and verify; needs `server.bearer_token`. Omit to run recall-only.'),
    log: doc(block(log.prefault({})), 'Logging.'),
  })
  .superRefine(crossFieldRules, { when: () => true });

/** Input accepted by the schema (what the YAML may say). */
export type ConfigInput = z.input<typeof configSchema>;
/** The resolved config every component reads. */
export type Config = z.output<typeof configSchema>;
export type ServerConfig = Config['server'];
export type CatalogConfig = Config['catalog'];
export type StoreConfig = Config['store'];
export type RecallConfig = Config['recall'];
export type TriggerConfig = Config['trigger'];
/** One `trigger.match` / `trigger.ignore` rule; `severity` is always a list here. */
export type TriggerRule = TriggerConfig['match'][number];
export type LedgerConfig = Config['ledger'];
export type TransportConfig = Config['transport'];
/** Present only when the file has a `model` block. */
export type ModelConfig = NonNullable<Config['model']>;
export type LogConfig = Config['log'];

/** The loose shape the cross-field rules read; any part may be missing or mistyped. */
interface Loose {
  server?: { bearer_token?: unknown };
  model?: unknown;
  transport?: {
    kind?: unknown;
    slack?: { bot_token?: unknown; signing_secret?: unknown; app_token?: unknown; channel?: unknown; socket_mode?: unknown };
    matrix?: { homeserver_url?: unknown; access_token?: unknown; room_id?: unknown };
  };
}

/**
 * Rules that span keys. Runs even when other keys failed (`when`), so one pass reports
 * every problem; hence it reads its input defensively.
 */
function crossFieldRules(cfg: unknown, ctx: z.RefinementCtx<unknown>): void {
  const need = (ok: unknown, path: string[], message: string): void => {
    if (ok === undefined || ok === '') ctx.addIssue({ code: 'custom', path, message, input: undefined });
  };
  const c = (typeof cfg === 'object' && cfg !== null ? cfg : {}) as Loose;
  if (c?.model !== undefined) {
    need(c.server?.bearer_token, ['server', 'bearer_token'], 'is required when a `model` block is configured (SPEC §4)');
  }
  const t = c?.transport;
  if (t?.kind === 'slack') {
    need(t.slack?.bot_token, ['transport', 'slack', 'bot_token'], 'is required when transport.kind is slack (or set SLACK_BOT_TOKEN)');
    need(t.slack?.channel, ['transport', 'slack', 'channel'], 'is required when transport.kind is slack');
    if (t.slack?.socket_mode === true) {
      need(t.slack.app_token, ['transport', 'slack', 'app_token'], 'is required with socket_mode (or set SLACK_APP_TOKEN)');
    } else {
      need(t.slack?.signing_secret, ['transport', 'slack', 'signing_secret'], 'is required in HTTP mode (or set SLACK_SIGNING_SECRET)');
    }
  }
  if (t?.kind === 'matrix') {
    need(t.matrix?.homeserver_url, ['transport', 'matrix', 'homeserver_url'], 'is required when transport.kind is matrix');
    need(t.matrix?.access_token, ['transport', 'matrix', 'access_token'], 'is required when transport.kind is matrix (or set MATRIX_ACCESS_TOKEN)');
    need(t.matrix?.room_id, ['transport', 'matrix', 'room_id'], 'is required when transport.kind is matrix');
  }
}
