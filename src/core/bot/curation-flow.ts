/**
 * What the curation worker came back with from the forge, decided like every other intent: the
 * `curated` outcome that settles a `curate` intent (with the card's KB line for a Finding, a
 * reply for a note), or — once per note — word in the thread that the forge is down and the note
 * is kept.
 */
import type { Inline, RichText } from '../chat/thread-view.js';
import { curationLine } from '../curate/curation-line.js';
import { fixNotice, noteNotice, postmortemNotice, type Outcome } from '../curate/file-item.js';
import type { CurateItem } from '../ledger/ledger-types.js';
import { notify, enqueue, recordedRun, type Ctx } from './bot-context.js';

export type CurationResult =
  /** The forge answered (or refused for good): the intent is settled. */
  | { type: 'curation_result'; item: CurateItem; outcome: Outcome }
  /** The forge is unreachable: the note is kept and retried; the thread is told once. */
  | { type: 'curation_retrying'; item: CurateItem; message: string };

/** Who a notice about this item names: the person who wrote the note or the fix (a person run), else the one who asked. */
const named = (item: CurateItem): Inline => {
  const who = item.note ?? item.fix ?? (item.postmortem ? { user: item.postmortem.user } : undefined);
  return who ? recordedRun(who) : 'someone';
};

export function decideCuration(c: Ctx, e: CurationResult): { status: 'recorded'; decision?: string } {
  const { item } = e;
  const thread = c.read.thread(item.openId);
  const reply = (icon: string, text: RichText): void => notify(c, item.openId, thread?.transports ?? [], { topic: 'note', icon, text });
  if (e.type === 'curation_retrying') {
    reply('⏳', [
      `${item.subject === 'fix' ? 'fix' : item.subject === 'postmortem' ? 'postmortem request' : 'note'} from `,
      named(item),
      ` kept: the knowledge base forge is not reachable right now (${e.message.slice(0, 160)}); it will be filed when it is back`,
    ]);
    return { status: 'recorded' };
  }
  const { outcome } = e;
  c.tx.record({ type: 'curated', id: item.id, subject: item.subject, openId: item.openId, triggerKey: item.triggerKey, ...outcome, at: c.now.toISOString() });
  if (thread && item.subject === 'finding') {
    const line = curationLine(outcome);
    for (const transport of thread.transports)
      enqueue(c.tx, c.now, { transport, op: 'update', openId: thread.openId, view: { kind: 'card_patch', curation: line } }, c.out);
  } else if (item.subject === 'note') reply(outcome.decision === 'failed' ? '⚠️' : '📝', noteNotice(named(item), outcome));
  else if (item.subject === 'fix') reply(outcome.decision === 'failed' ? '⚠️' : '🛠', fixNotice(named(item), outcome));
  else if (item.subject === 'postmortem') reply(outcome.decision === 'failed' ? '⚠️' : '📄', postmortemNotice(outcome));
  c.log.info(
    { curateId: item.id, subject: item.subject, trigger: item.triggerKey, decision: outcome.decision, detail: outcome.detail, url: outcome.url },
    `curation: ${outcome.decision}`,
  );
  return { status: 'recorded', decision: outcome.decision };
}
