import type { LedgerEvent } from '../ledger-events.js';

const VERDICTS = ['action_required', 'action_suggested', 'inconclusive', 'no_action'] as const;
const OPEN_KINDS = ['recall', 'fresh'] as const;
const ANSWER_KINDS = ['incident', 'runbook'] as const;
const VOTES = ['up', 'down', 'clear'] as const;
const OUTBOX_OPS = ['post', 'reply', 'update', 'answer'] as const;
const NOISE_ACTIONS = ['hold', 'release', 'drop', 'flush', 'mark', 'am_silence', 'admit'] as const;
const FINDING_STATUSES = ['completed', 'exhausted', 'failed', 'skipped', 'cancelled', 'degraded'] as const;

const CURATE_SUBJECTS = ['finding', 'note', 'fix'] as const;
const CURATED_DECISIONS = [
  'recalled',
  'below_bar',
  'duplicate_entry',
  'duplicate_pr',
  'suppressed',
  'novel',
  'pr_comment',
  'concept_pr',
  'fix_pr',
  'failed',
] as const;

type Fields = Record<string, unknown>;

function str(o: Fields, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' && v.length > 0 ? undefined : `${key} must be a non-empty string`;
}

function obj(o: Fields, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? undefined : `${key} must be an object`;
}

function optStr(o: Fields, key: string): string | undefined {
  return o[key] === undefined ? undefined : str(o, key);
}

function time(o: Fields, key: string): string | undefined {
  const v = o[key];
  if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) return `${key} must be an ISO timestamp`;
  return undefined;
}

function oneOf(o: Fields, key: string, allowed: readonly string[], optional = false): string | undefined {
  const v = o[key];
  if (optional && v === undefined) return undefined;
  return typeof v === 'string' && allowed.includes(v) ? undefined : `${key} must be one of ${allowed.join('|')}`;
}

/**
 * Why `value` is not a well-formed ledger event, or undefined when it is. The reducer skips
 * what this rejects (replay never crashes on an old or damaged record) and `Ledger.append`
 * refuses it, so nothing malformed is ever written.
 */
export function ledgerEventProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'event must be an object';
  const o = value as Fields;
  const checks: Array<string | undefined> = [time(o, 'at')];
  switch (o['type']) {
    case 'open':
      checks.push(
        optStr(o, 'id'),
        str(o, 'fingerprint'),
        str(o, 'triggerKey'),
        oneOf(o, 'kind', OPEN_KINDS),
        optStr(o, 'entry'),
        oneOf(o, 'answerKind', ANSWER_KINDS, true),
        typeof o['dupFingerprint'] === 'string' ? undefined : 'dupFingerprint must be a string',
        optStr(o, 'curatedUrl'),
        oneOf(o, 'verdict', VERDICTS),
        typeof o['resolvable'] === 'boolean' ? undefined : 'resolvable must be a boolean',
        optStr(o, 'threadId'),
        optStr(o, 'startsAt'),
        optStr(o, 'source'),
        optStr(o, 'coalesceKey'),
        optStr(o, 'threadOf'),
        o['investigate'] === undefined ? undefined : (obj(o, 'investigate') ?? obj(o['investigate'] as Fields, 'incident')),
        o['alert'] === undefined ? undefined : (obj(o, 'alert') ?? str(o['alert'] as Fields, 'alertname')),
      );
      break;
    case 'resolve':
      checks.push(str(o, 'fingerprint'), o['endsAt'] === undefined ? undefined : time(o, 'endsAt'), optStr(o, 'triggerKey'));
      break;
    case 'feedback':
      checks.push(str(o, 'triggerKey'), str(o, 'user'), oneOf(o, 'vote', VOTES), optStr(o, 'openId'), optStr(o, 'via'), optStr(o, 'eventId'));
      break;
    case 'silence':
      checks.push(
        str(o, 'triggerKey'),
        str(o, 'user'),
        time(o, 'until'),
        optStr(o, 'openId'),
        optStr(o, 'via'),
        optStr(o, 'eventId'),
        o['alertmanager'] === undefined ? undefined : amRequestProblem(o['alertmanager']),
      );
      break;
    case 'delivered':
      checks.push(
        // A private answer belongs to no thread; every other delivery names its open.
        o['openId'] === undefined && o['outboxId'] !== undefined ? undefined : str(o, 'openId'),
        o['openId'] === undefined && o['outboxId'] !== undefined ? optStr(o, 'fingerprint') : str(o, 'fingerprint'),
        str(o, 'transport'),
        str(o, 'messageRef'),
        optStr(o, 'channel'),
        optStr(o, 'outboxId'),
      );
      break;
    case 'outbox':
      checks.push(
        str(o, 'id'),
        str(o, 'transport'),
        oneOf(o, 'op', OUTBOX_OPS),
        optStr(o, 'openId'),
        optStr(o, 'channel'),
        obj(o, 'view'),
        o['detail'] === undefined ? undefined : obj(o, 'detail'),
        o['op'] === 'answer' ? obj(o, 'to') : o['openId'] === undefined ? 'openId must be a non-empty string' : undefined,
        optStr(o, 'eventId'),
      );
      break;
    case 'outbox_failed':
      checks.push(str(o, 'id'), str(o, 'reason'));
      break;
    case 'finding':
      checks.push(
        str(o, 'openId'),
        str(o, 'fingerprint'),
        str(o, 'triggerKey'),
        oneOf(o, 'kind', OPEN_KINDS),
        oneOf(o, 'status', FINDING_STATUSES),
        optStr(o, 'entry'),
        oneOf(o, 'verdict', VERDICTS, true),
        o['resumed'] === undefined || typeof o['resumed'] === 'boolean' ? undefined : 'resumed must be a boolean',
        ...['calls', 'tokensIn', 'tokensOut'].map((k) =>
          typeof o[k] === 'number' && Number.isFinite(o[k]) && (o[k] as number) >= 0 ? undefined : `${k} must be a number ≥ 0`,
        ),
      );
      break;
    case 'note':
      checks.push(str(o, 'triggerKey'), optStr(o, 'openId'), str(o, 'user'), str(o, 'text'), str(o, 'via'), optStr(o, 'eventId'));
      break;
    case 'fix':
      checks.push(str(o, 'triggerKey'), optStr(o, 'openId'), str(o, 'user'), str(o, 'text'), str(o, 'via'), optStr(o, 'eventId'));
      break;
    case 'question':
      checks.push(
        str(o, 'triggerKey'),
        str(o, 'openId'),
        str(o, 'user'),
        str(o, 'via'),
        typeof o['model'] === 'boolean' ? undefined : 'model must be a boolean',
        optStr(o, 'eventId'),
      );
      break;
    case 'noise':
      checks.push(
        oneOf(o, 'action', NOISE_ACTIONS),
        str(o, 'fingerprint'),
        str(o, 'triggerKey'),
        str(o, 'reason'),
        typeof o['detail'] === 'string' ? undefined : 'detail must be a string',
        optStr(o, 'holdId'),
        o['until'] === undefined ? undefined : time(o, 'until'),
        o['incident'] === undefined ? undefined : obj(o, 'incident'),
        o['route'] === undefined ? undefined : obj(o, 'route'),
        optStr(o, 'openId'),
        optStr(o, 'requestId'),
        o['action'] === 'hold' && (o['holdId'] === undefined || o['until'] === undefined || o['incident'] === undefined)
          ? 'a hold needs holdId, until and incident'
          : undefined,
      );
      break;
    case 'curate':
      checks.push(
        str(o, 'id'),
        oneOf(o, 'subject', CURATE_SUBJECTS),
        str(o, 'openId'),
        str(o, 'triggerKey'),
        typeof o['dupFingerprint'] === 'string' ? undefined : 'dupFingerprint must be a string',
        o['subject'] === 'finding' ? obj(o, 'draft') : undefined,
        o['subject'] === 'note' ? obj(o, 'note') : undefined,
        o['subject'] === 'fix' ? (obj(o, 'fix') ?? obj(o['fix'] as Fields, 'alert')) : undefined,
      );
      break;
    case 'curated':
      checks.push(
        optStr(o, 'id'),
        oneOf(o, 'subject', CURATE_SUBJECTS),
        str(o, 'openId'),
        str(o, 'triggerKey'),
        oneOf(o, 'decision', CURATED_DECISIONS),
        optStr(o, 'detail'),
        optStr(o, 'url'),
        o['number'] === undefined || (typeof o['number'] === 'number' && Number.isSafeInteger(o['number'])) ? undefined : 'number must be an integer',
      );
      break;
    case 'confirm':
      checks.push(str(o, 'entry'), typeof o['dupFingerprint'] === 'string' ? undefined : 'dupFingerprint must be a string');
      break;
    default:
      return `unknown event type ${JSON.stringify(o['type'])}`;
  }
  const problems = checks.filter((c): c is string => c !== undefined);
  return problems.length === 0 ? undefined : `${String(o['type'])} event: ${problems.join('; ')}`;
}

function amRequestProblem(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'alertmanager must be an object';
  const o = v as Fields;
  return str(o, 'requestId') ?? str(o, 'openId') ?? str(o, 'who');
}

/** Type guard over {@link ledgerEventProblem}. */
export function isLedgerEvent(value: unknown): value is LedgerEvent {
  return ledgerEventProblem(value) === undefined;
}
