import type { z } from 'zod';
import { LEDGER_EVENT_TYPES, ledgerEventSchema, type LedgerEvent } from '../ledger-events.js';

function describeIssue(issue: z.core.$ZodIssue): string {
  return issue.path.length === 0 ? issue.message : `${issue.path.join('.')} ${issue.message}`;
}

/**
 * Why `value` is not a well-formed ledger event, or undefined when it is: the parse of
 * {@link ledgerEventSchema}, as one message (the event's type, then each field and what is wrong
 * with it). The reducer skips what this rejects (replay never crashes on an old or damaged
 * record) and `Ledger.append` refuses it, so nothing malformed is ever written.
 */
export function ledgerEventProblem(value: unknown): string | undefined {
  const parsed = ledgerEventSchema.safeParse(value);
  if (parsed.success) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'event must be an object';
  const type = (value as { type?: unknown }).type;
  if (!(LEDGER_EVENT_TYPES as readonly unknown[]).includes(type)) return `unknown event type ${JSON.stringify(type)}`;
  return `${String(type)} event: ${parsed.error.issues.map(describeIssue).join('; ')}`;
}

/** Type guard over {@link ledgerEventProblem}. */
export function isLedgerEvent(value: unknown): value is LedgerEvent {
  return ledgerEventSchema.safeParse(value).success;
}
