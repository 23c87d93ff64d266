/**
 * Bolt, the Web API client and the Socket Mode client log through our pino logger instead of
 * their console logger. Their chatter (every request at debug, reconnect notes at info) is kept
 * one level down so a healthy bot's log stays about the bot.
 */
import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Logger } from '../../ports/logger.js';

const RANK: Record<LogLevel, number> = { [LogLevel.DEBUG]: 0, [LogLevel.INFO]: 1, [LogLevel.WARN]: 2, [LogLevel.ERROR]: 3 };

function message(parts: unknown[]): { msg: string; err?: Error } {
  const err = parts.find((p): p is Error => p instanceof Error);
  const msg = parts
    .filter((p) => !(p instanceof Error))
    .map((p) => (typeof p === 'string' ? p : JSON.stringify(p)))
    .join(' ');
  return err ? { msg: msg || err.message, err } : { msg };
}

export function boltLogger(log: Logger, level: LogLevel = LogLevel.INFO): SlackLogger {
  let current = level;
  let name = 'slack';
  const emit = (at: LogLevel, to: 'debug' | 'info' | 'warn' | 'error', parts: unknown[]): void => {
    if (RANK[at] < RANK[current]) return;
    const { msg, err } = message(parts);
    log[to](err ? { sdk: name, err } : { sdk: name }, msg);
  };
  return {
    debug: (...m: unknown[]) => emit(LogLevel.DEBUG, 'debug', m),
    info: (...m: unknown[]) => emit(LogLevel.INFO, 'debug', m),
    warn: (...m: unknown[]) => emit(LogLevel.WARN, 'warn', m),
    error: (...m: unknown[]) => emit(LogLevel.ERROR, 'error', m),
    setLevel: (l: LogLevel) => {
      current = l;
    },
    getLevel: () => current,
    setName: (n: string) => {
      name = n;
    },
  };
}
