/**
 * What an answer says to do about an alert: a leaf, so the ledger's event schema and the chat
 * views both name it without importing each other.
 */
import { z } from 'zod';

export const VERDICTS = ['action_required', 'action_suggested', 'inconclusive', 'no_action'] as const;
export const verdictSchema = z.enum(VERDICTS, { error: `must be one of ${VERDICTS.join('|')}` });
export type Verdict = z.infer<typeof verdictSchema>;
