/** A Logger that records what it was told (bindings merged in), for tests that assert on logs. */
import type { Logger } from '../../src/ports/logger.js';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg: string | undefined;
}

export function recordingLogger(lines: LogLine[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: LogLine['level']) =>
    (obj: object | string, msg?: string): void => {
      if (typeof obj === 'string') lines.push({ level, fields: { ...bindings }, msg: obj });
      else lines.push({ level, fields: { ...bindings, ...(obj as Record<string, unknown>) }, msg });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (b) => recordingLogger(lines, { ...bindings, ...b }) };
}
