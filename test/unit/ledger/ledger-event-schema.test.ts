/**
 * The one schema of ledger events (`ledgerEventSchema`): what the writers write passes, the
 * malformed shapes are refused with one message naming the event type, the field and what is
 * wrong, unknown fields are tolerated and kept, and an export line is checked by the same rule.
 */
import { describe, expect, it } from 'vitest';
import { LEDGER_EVENT_TYPES, ledgerEventSchema } from '../../../src/core/ledger-events.js';
import { isLedgerEvent, ledgerEventProblem } from '../../../src/core/ledger/ledger-event-problem.js';
import { exportEventSchema } from '../../../src/core/ledger/ledger-export-format.js';
import { applyEvent, createLedgerState, replayEvents } from '../../../src/core/ledger/ledger-state.js';
import { realisticEvents } from './backup-events.js';
import { randomEvents } from './random-events.js';

const T = '2026-01-01T00:00:00.000Z';

/** One event of every kind and variant the writers produce, with every optional field they set. */
const everyKind: Record<string, unknown>[] = [
  {
    type: 'open',
    id: 'i',
    fingerprint: 'f',
    triggerKey: 't',
    kind: 'recall',
    entry: 'e',
    answerKind: 'incident',
    dupFingerprint: '',
    curatedUrl: 'u',
    verdict: 'no_action',
    resolvable: true,
    threadId: 'th',
    startsAt: T,
    source: 'alertmanager',
    coalesceKey: 'c',
    threadOf: 'o',
    investigate: { incident: {} },
    alert: { alertname: 'A', title: 'a', message: 'm', resource: 'ns/x', where: 'c/ns/x' },
    at: T,
  },
  { type: 'resolve', fingerprint: 'f', triggerKey: 't', endsAt: T, at: T },
  { type: 'feedback', triggerKey: 't', user: 'u', vote: 'clear', openId: 'o', via: 'slack', eventId: 'e', at: T },
  {
    type: 'silence',
    triggerKey: 't',
    user: 'u',
    until: T,
    openId: 'o',
    via: 'slack',
    eventId: 'e',
    alertmanager: { requestId: 'r', openId: 'o', who: 'w' },
    at: T,
  },
  { type: 'confirm', entry: 'e', dupFingerprint: '', at: T },
  { type: 'delivered', openId: 'o', fingerprint: 'f', transport: 'slack', messageRef: 'm', channel: 'c', outboxId: 'x', root: true, at: T },
  { type: 'delivered', outboxId: 'x', transport: 'slack', messageRef: 'm', at: T },
  { type: 'outbox', id: 'a', transport: 'slack', op: 'post', openId: 'o', channel: 'c', view: { kind: 'card' }, detail: { kind: 'detail' }, at: T },
  { type: 'outbox', id: 'b', transport: 'slack', op: 'answer', view: { kind: 'ephemeral' }, to: { kind: 'response_url', url: 'u' }, eventId: 'e', at: T },
  { type: 'outbox_failed', id: 'a', reason: 'channel_not_found', at: T },
  { type: 'note', triggerKey: 't', openId: 'o', user: 'u', text: 'x', via: 'cli', eventId: 'e', at: T },
  {
    type: 'finding',
    openId: 'o',
    fingerprint: 'f',
    triggerKey: 't',
    kind: 'fresh',
    status: 'completed',
    entry: 'e',
    confidence: 0.5,
    verdict: 'inconclusive',
    summary: 's',
    topCause: 'c',
    checked: ['a'],
    reason: 'r',
    calls: 1,
    tokensIn: 2,
    tokensOut: 3,
    costUsd: 0.1,
    resumed: false,
    at: T,
  },
  {
    type: 'noise',
    action: 'hold',
    fingerprint: 'f',
    triggerKey: 't',
    reason: 'debounce',
    detail: '',
    holdId: 'h',
    until: T,
    incident: {},
    route: { a: 'b' },
    at: T,
  },
  { type: 'noise', action: 'am_silence', fingerprint: 'f', triggerKey: 't', reason: 'am_silenced', detail: 'd', openId: 'o', requestId: 'r', at: T },
  { type: 'curate', id: 'c', subject: 'finding', openId: 'o', triggerKey: 't', dupFingerprint: 'd', draft: { title: 't' }, at: T },
  { type: 'curate', id: 'c', subject: 'note', openId: 'o', triggerKey: 't', dupFingerprint: 'd', note: { user: 'u', name: 'n', via: 'v', text: 't' }, at: T },
  { type: 'curated', id: 'c', subject: 'finding', openId: 'o', triggerKey: 't', decision: 'novel', detail: 'd', url: 'u', number: 3, at: T },
  { type: 'fix', triggerKey: 't', openId: 'o', user: 'u', text: 'x', via: 'slack', eventId: 'e', at: T },
  { type: 'question', triggerKey: 't', openId: 'o', user: 'u', via: 'slack', model: false, eventId: 'e', at: T },
  {
    type: 'curate',
    id: 'c',
    subject: 'fix',
    openId: 'o',
    triggerKey: 't',
    dupFingerprint: 'd',
    fix: { user: 'u', name: 'n', via: 'v', text: 't', at: T, alert: { alertname: 'A', title: 'a' }, triedAndFailed: [] },
    at: T,
  },
  { type: 'curated', id: 'c', subject: 'fix', openId: 'o', triggerKey: 't', decision: 'fix_pr', url: 'u', number: 4, at: T },
  { type: 'question_answered', triggerKey: 't', openId: 'o', status: 'answered', model: 'm', calls: 1, tokensIn: 2, tokensOut: 3, costUsd: 0.1, at: T },
  { type: 'postmortem', triggerKey: 't', openId: 'o', user: 'u', via: 'slack', eventId: 'e', at: T },
  {
    type: 'curate',
    id: 'c',
    subject: 'postmortem',
    openId: 'o',
    triggerKey: 't',
    dupFingerprint: '',
    postmortem: { user: 'u', at: T, triggerKey: 't', alert: { alertname: 'A', title: 'a' }, said: [], triedAndFailed: [] },
    at: T,
  },
  {
    type: 'ack',
    triggerKey: 't',
    user: 'slack:U1',
    name: 'alice',
    via: 'slack',
    openId: 'o',
    eventId: 'e',
    pagerduty: { requestId: 'r', incidentId: 'P1' },
    at: T,
  },
  { type: 'pagerduty_call', requestId: 'r', incidentId: 'P1', action: 'acknowledge', outcome: 'done', attempt: 1, openId: 'o', at: T },
  { type: 'oncall_reminder', triggerKey: 'k', openId: 'o', at: T },
  { type: 'oncall_found', triggerKey: 'k', openId: 'o', at: T },
  { type: 'refusal', triggerKey: 'k', openId: 'o', user: 'slack:U1', via: 'slack', kind: 'question', eventId: 'e', at: T },
];

describe('ledgerEventSchema', () => {
  it('covers every event type', () => {
    expect(new Set(everyKind.map((e) => e['type']))).toEqual(new Set(LEDGER_EVENT_TYPES));
    expect(LEDGER_EVENT_TYPES).toHaveLength(22);
  });

  it('accepts every event the writers produce', () => {
    for (const e of [...everyKind, ...realisticEvents(), ...randomEvents(500, 3)]) expect(ledgerEventProblem(e), JSON.stringify(e)).toBeUndefined();
  });

  it.each([
    [{ ...everyKind[0], fingerprint: '' }, 'open event: fingerprint must be a non-empty string'],
    [{ ...everyKind[0], kind: 'guess' }, 'open event: kind must be one of recall|fresh'],
    [{ ...everyKind[0], resolvable: 'yes', at: 'soon' }, 'open event: resolvable must be a boolean; at must be an ISO timestamp'],
    [{ ...everyKind[0], investigate: { incident: [] } }, 'open event: investigate.incident must be an object'],
    [{ ...everyKind[3], alertmanager: { requestId: 'r', openId: 'o' } }, 'silence event: alertmanager.who must be a non-empty string'],
    [
      { type: 'delivered', transport: 'slack', messageRef: 'm', at: T },
      'delivered event: openId must be a non-empty string; fingerprint must be a non-empty string',
    ],
    [{ ...everyKind[7], openId: undefined }, 'outbox event: openId must be a non-empty string'],
    [{ ...everyKind[8], to: 'someone' }, 'outbox event: to must be an object'],
    [{ ...everyKind[7], view: [] }, 'outbox event: view must be an object'],
    [{ ...everyKind[11], tokensIn: -1 }, 'finding event: tokensIn must be a number ≥ 0'],
    [{ ...everyKind[11], calls: Infinity }, 'finding event: calls must be a number ≥ 0'],
    [{ ...everyKind[12], incident: undefined }, 'noise event: a hold needs holdId, until and incident'],
    [{ ...everyKind[14], draft: undefined }, 'curate event: draft must be an object'],
    [{ ...everyKind[15], note: 'text' }, 'curate event: note must be an object'],
    [{ ...everyKind[16], number: 1.5 }, 'curated event: number must be an integer'],
    [
      { ...everyKind[16], decision: 'merged' },
      'curated event: decision must be one of recalled|below_bar|duplicate_entry|duplicate_pr|suppressed|novel|pr_comment|concept_pr|fix_pr|postmortem_pr|amend_pr|pr_update|failed',
    ],
    [{ ...everyKind[17], text: '' }, 'fix event: text must be a non-empty string'],
    [{ ...everyKind[18], model: 'yes', openId: undefined }, 'question event: openId must be a non-empty string; model must be a boolean'],
    [{ ...everyKind[19], fix: undefined }, 'curate event: fix must be an object'],
    [{ ...everyKind[23], postmortem: undefined }, 'curate event: postmortem must be an object'],
    [{ ...everyKind[22], openId: '' }, 'postmortem event: openId must be a non-empty string'],
    [{ ...everyKind[21], tokensIn: -1, status: 'maybe' }, 'question_answered event: status must be one of answered|failed; tokensIn must be a number ≥ 0'],
    [{ ...everyKind[0], alert: { title: 't' } }, 'open event: alert.alertname must be a non-empty string'],
    [{ type: 'explode', at: T }, 'unknown event type "explode"'],
    [{ at: T }, 'unknown event type undefined'],
    [null, 'event must be an object'],
    [[everyKind[1]], 'event must be an object'],
    ['resolve', 'event must be an object'],
  ])('refuses %j: %s', (value, message) => {
    expect(ledgerEventProblem(value)).toBe(message);
    expect(isLedgerEvent(value)).toBe(false);
  });

  it('holds every human action to one base: who, through which surface, on which trigger, when', () => {
    const human = everyKind.filter((e) => ['feedback', 'silence', 'note', 'fix', 'question', 'postmortem', 'ack'].includes(e['type'] as string));
    expect(human).toHaveLength(7);
    for (const e of human) {
      const type = e['type'] as string;
      expect(ledgerEventProblem({ ...e, user: '' })).toBe(`${type} event: user must be a non-empty string`);
      expect(ledgerEventProblem({ ...e, triggerKey: undefined })).toBe(`${type} event: triggerKey must be a non-empty string`);
      expect(ledgerEventProblem({ ...e, eventId: '' })).toBe(`${type} event: eventId must be a non-empty string`);
      expect(ledgerEventProblem({ ...e, at: 'yesterday' })).toBe(`${type} event: at must be an ISO timestamp`);
      // A vote or silence recorded before the surface was has none; every other action names it.
      const noVia = { ...e, via: undefined };
      expect(ledgerEventProblem(noVia)).toBe(type === 'feedback' || type === 'silence' ? undefined : `${type} event: via must be a non-empty string`);
    }
  });

  it('checks no more than the ledger always did: fields it never checked load as written', () => {
    // An old record whose NaN confidence JSON wrote as null, an outbox view of any shape: applied, not skipped.
    const finding = { ...everyKind[11], confidence: null, checked: 'one line', costUsd: 'n/a' };
    const outbox = { ...everyKind[7], view: { legacy: true }, to: 'ignored on a post' };
    const delivered = { ...everyKind[5], root: 'yes' };
    for (const e of [finding, outbox, delivered]) expect(ledgerEventProblem(e)).toBeUndefined();
  });

  it('tolerates unknown fields and keeps them: the value checked is the value replayed and exported', () => {
    const value = JSON.parse(`{"type":"resolve","fingerprint":"f","at":"${T}","addedLater":{"x":1},"__proto__":{"polluted":true}}`) as Record<string, unknown>;
    expect(ledgerEventProblem(value)).toBeUndefined();
    const state = createLedgerState();
    applyEvent(state, value, 1);
    expect(state.applied).toBe(1);
    const line = exportEventSchema.parse({ kind: 'event', seq: 1, event: value });
    expect(line.event).toBe(value);
    expect(JSON.stringify(line.event)).toBe(JSON.stringify(value));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('a parse would drop unknown fields, which is why callers check and keep the value read', () => {
    const value = { ...everyKind[1], addedLater: 1 };
    expect(ledgerEventSchema.parse(value)).not.toHaveProperty('addedLater');
    expect(replayEvents([value as never]).applied).toBe(1);
  });

  it('an export line is refused by the same rule, naming the event and the field', () => {
    const r = exportEventSchema.safeParse({ kind: 'event', seq: 1, event: { ...everyKind[2], vote: 'meh' } });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toBe('feedback event: vote must be one of up|down|clear');
  });
});
