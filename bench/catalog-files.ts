import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MAX_TITLE_BYTES } from '../src/core/catalog/read-fields.js';
import type { Entry } from '../src/core/types.js';

/** The longest prefix of `text`, cut at a space, that fits `max` UTF-8 bytes. */
function fit(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let out = '';
  for (const word of text.split(' ')) {
    const next = out === '' ? word : `${out} ${word}`;
    if (Buffer.byteLength(next) > max) break;
    out = next;
  }
  return out;
}

/**
 * A synthetic entry as the markdown file a team would write: frontmatter (strings JSON-quoted,
 * which YAML reads back as they are) and a body whose sections an Incident needs (the
 * generator's Diagnosis and Mitigation become Cause and Resolution).
 */
export function entryMarkdown(e: Entry): string {
  const fm = [
    `type: ${e.type}`,
    `title: ${JSON.stringify(fit(e.title, MAX_TITLE_BYTES))}`,
    `description: ${JSON.stringify(e.description)}`,
    e.resource ? `resource: ${JSON.stringify(e.resource.raw)}` : '',
    `tags: ${JSON.stringify(e.tags)}`,
    e.timestamp ? `timestamp: ${e.timestamp}` : '',
    `status: ${e.status}`,
    e.alerts.length > 0 ? `alerts: ${JSON.stringify(e.alerts)}` : '',
  ].filter((l) => l !== '');
  const body = e.body.replace('## Diagnosis', '## Cause').replace('## Mitigation', '## Resolution');
  return `---\n${fm.join('\n')}\n---\n${body}\n`;
}

/** Write `entries` under `dir`, one file per entry at its id. */
export function writeCatalogFiles(dir: string, entries: readonly Entry[]): void {
  for (const e of entries) {
    const path = join(dir, e.id);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, entryMarkdown(e));
  }
}
