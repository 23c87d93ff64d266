/**
 * "Silence in Alertmanager too" (issue 12): how a 🔕 asks for it on each surface — a Slack
 * select value `4h+am`, a Matrix / thread command `silence 4h am` — and how the silence made
 * there links back to the thread.
 */
import type { ThreadInfo } from './bot-context.js';

/** Where the thread is, for the silence's comment in Alertmanager (plain text, no markup). */
export function threadLink(thread: ThreadInfo): string {
  const parts: string[] = [];
  for (const [transport, root] of Object.entries(thread.roots)) {
    if (transport === 'matrix') parts.push(`https://matrix.to/#/${encodeURIComponent(root.channel)}/${encodeURIComponent(root.id)}`);
    else if (transport === 'slack') parts.push(`https://slack.com/app_redirect?channel=${encodeURIComponent(root.channel)} (thread ${root.id})`);
    else parts.push(`${transport} thread ${root.id}`);
  }
  return parts.length > 0 ? parts.join(' · ') : `trigger ${thread.triggerKey}`;
}

export function silenceComment(thread: ThreadInfo, who: string): string {
  return `Silenced from Reprise by ${who}. Thread: ${threadLink(thread)}`;
}
