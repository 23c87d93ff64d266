/**
 * matrix-bot-sdk logs through a process-wide `LogService` that prints to the console by default.
 * This routes it to the bot's pino logger instead: warnings stay warnings, the SDK's own
 * per-request error lines become debug (the transport reports failures itself, with context).
 */
import { LogLevel, LogService, type ILogger } from 'matrix-bot-sdk';
import type { Logger } from '../../ports/logger.js';

const MAX_MESSAGE = 500;

function text(args: unknown[]): string {
  const s = args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : safeJson(a))).join(' ');
  return s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Sends the SDK's logs to `logger` (a `child({component: 'matrix-bot-sdk'})` of the bot's). */
export function routeSdkLogs(logger: Logger): void {
  const log = logger.child({ component: 'matrix-bot-sdk' });
  const sink: ILogger = {
    trace: (module: string, ...args: unknown[]) => log.debug({ module }, text(args)),
    debug: (module: string, ...args: unknown[]) => log.debug({ module }, text(args)),
    info: (module: string, ...args: unknown[]) => log.debug({ module }, text(args)),
    warn: (module: string, ...args: unknown[]) => log.warn({ module }, text(args)),
    error: (module: string, ...args: unknown[]) => (module === 'MatrixHttpClient' ? log.debug({ module }, text(args)) : log.warn({ module }, text(args))),
  };
  LogService.setLogger(sink);
  LogService.setLevel(LogLevel.INFO);
}
