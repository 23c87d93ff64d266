/**
 * The root logger (STYLE.md "Logging"): pino to stderr, with one redaction list for every
 * command — a secret in a config object, a request or an error never reaches a log line. Keys
 * are censored by path; every line is then put through the one redactor (src/core/redact.ts),
 * so a configured secret or a credential quoted inside a message or an upstream error body is
 * masked wherever it sits.
 */
import { pino } from 'pino';
import { shapeRedactor, type Redactor } from '../core/redact.js';
import type { Logger } from '../ports/logger.js';

/** Keys whose values are secrets wherever they appear (one level deep in a logged object, or at its top). */
const SECRET_KEYS = [
  'bearer_token',
  'pagerduty_secret',
  'hmac_secret',
  'secret',
  'api_key',
  'apiKey',
  'access_token',
  'accessToken',
  'bot_token',
  'botToken',
  'app_token',
  'appToken',
  'signing_secret',
  'signingSecret',
  'token',
  'password',
  'private_key',
  'app_private_key',
  'privateKey',
  'authorization',
  'Authorization',
];

/** Paths pino censors: each key at the top of a log object and one level inside it. */
export const REDACT_PATHS: readonly string[] = SECRET_KEYS.flatMap((k) => [k, `*.${k}`]);

/**
 * The root logger: JSON lines to stderr, or to `destination` (a test harness running the bot in
 * its own process reads them as it would read a child's stderr).
 */
export function createLogger(opts: {
  level: string;
  env?: Readonly<Record<string, string | undefined>>;
  destination?: { write(line: string): void };
  /** Masks every line (the config's secrets and every secret shape); default: shapes only. */
  redactor?: Redactor;
}): Logger & { flush(): void } {
  const redactor = opts.redactor ?? shapeRedactor;
  return pino(
    {
      level: opts.env?.['REPRISE_LOG_LEVEL'] ?? opts.level,
      base: { app: 'reprise' },
      redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
      // The serialized JSON line: a mask never adds a quote or a backslash, so it stays JSON.
      hooks: { streamWrite: (line) => redactor.text(line) },
    },
    opts.destination ?? pino.destination(2),
  );
}
