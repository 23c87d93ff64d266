import type { Entry } from '../../../src/core/types.js';

export interface EntryText {
  title?: string;
  description?: string;
  tags?: string[];
  alerts?: string[];
  body?: string;
  status?: Entry['status'];
  source?: string;
}

/** An Entry with just the searchable text set (the index reads nothing else). */
export function makeEntry(id: string, text: EntryText): Entry {
  return {
    id,
    type: 'Playbook',
    title: text.title ?? '',
    description: text.description ?? '',
    tags: text.tags ?? [],
    status: text.status ?? 'active',
    alerts: (text.alerts ?? []).map((a) => a.toLowerCase()),
    ...(text.alerts && text.alerts.length > 0 ? { alertNames: text.alerts } : {}),
    ...(text.source ? { source: text.source } : {}),
    sections: {},
    body: text.body ?? '',
    foreign: false,
  };
}
