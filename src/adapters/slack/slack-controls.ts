/**
 * The card's controls as Slack names them: the renderer puts them on the card, the inbound
 * side reads clicks back. One module so the two cannot drift apart.
 */
import type { IncidentState } from '../../core/chat/thread-view.js';
import { SLACK_LIMITS } from './slack-limits.js';

/** What a control on the card does (Slack's half of the card; other surfaces use reactions). */
export type ControlAction = 'vote_up' | 'vote_down' | 'silence' | 'ack';

/** `action_id`s of the card's controls (also what the manifest test checks interactivity for). */
export const ACTION_IDS = {
  vote_up: 'reprise_vote_up',
  vote_down: 'reprise_vote_down',
  silence: 'reprise_silence',
  ack: 'reprise_ack',
} as const satisfies Record<ControlAction, string>;

/** The silence durations the select offers, as values and as labels. */
export const SILENCE_CHOICES = [
  { value: '1h', label: '1 h' },
  { value: '4h', label: '4 h' },
  { value: '24h', label: '24 h' },
] as const;

const PREFIX = 'reprise';
const STATES: readonly IncidentState[] = ['firing', 'resolved', 'silenced'];

/**
 * The actions block's `block_id`: it carries the card's `controlsId` back with every click.
 * The state is part of it because Slack wants a new `block_id` when a message is rewritten
 * (a select would otherwise keep showing the last choice). Undefined when the id cannot fit.
 */
export function controlsBlockId(state: IncidentState, controlsId: string): string | undefined {
  const id = `${PREFIX}:${state}:${controlsId}`;
  return id.length <= SLACK_LIMITS.id && controlsId !== '' ? id : undefined;
}

/** The `controlsId` a click's `block_id` carries, if it is one of ours. */
export function parseControlsBlockId(blockId: string | undefined): string | undefined {
  if (!blockId) return undefined;
  const parts = blockId.split(':');
  if (parts.length < 3 || parts[0] !== PREFIX || !STATES.includes(parts[1] as IncidentState)) return undefined;
  const id = parts.slice(2).join(':');
  return id === '' ? undefined : id;
}

/** The control an `action_id` names, if it is one of ours. */
export function controlFor(actionId: string): ControlAction | undefined {
  for (const [action, id] of Object.entries(ACTION_IDS) as Array<[ControlAction, string]>) if (id === actionId) return action;
  return undefined;
}

/** The same durations, silencing in Alertmanager too (offered only when it is configured). */
export const AM_SILENCE_CHOICES = SILENCE_CHOICES.map((c) => ({ value: `${c.value}+am`, label: `${c.label} + Alertmanager` }));

export function isSilenceChoice(value: string | undefined): boolean {
  return SILENCE_CHOICES.some((c) => c.value === value) || AM_SILENCE_CHOICES.some((c) => c.value === value);
}
