/** docs/mattermost.md says what the adapter does: every command word, every reaction, every env var. */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, reactionMeaning } from '../../../../src/adapters/mattermost/mattermost-inbound.js';
import { configTree } from '../../../../src/config/schema-fields.js';

const doc = readFileSync(join(resolve(import.meta.dirname, '../../../..'), 'docs/mattermost.md'), 'utf8');

describe('docs/mattermost.md', () => {
  it('names every command the adapter takes', () => {
    for (const c of COMMANDS) expect(doc, c).toContain(`@reprise ${c}`);
  });

  it('names the reactions with the emoji names Mattermost uses, as the adapter reads them', () => {
    const inChannel = doc.slice(doc.indexOf('**In the channel**'));
    const named = [...inChannel.slice(0, inChannel.indexOf('- Commands')).matchAll(/\(`([a-z0-9_+-]+)`\)/g)].map((m) => [m[1]!, reactionMeaning(m[1]!)]);
    expect(named.map(([e]) => e)).toEqual(['+1', '-1', 'no_bell', 'eyes']);
    expect(named.map(([, m]) => m)).toEqual(['up', 'down', 'silence', 'ack']);
  });

  it('documents every environment variable of transport.mattermost', () => {
    const t = configTree().children!.find((c) => c.key === 'transport')!;
    const mm = t.children!.find((c) => c.key === 'mattermost')!;
    const envs = mm.children!.flatMap((c) => c.env ?? []);
    expect(envs).toEqual(['MATTERMOST_URL', 'MATTERMOST_TOKEN', 'MATTERMOST_CHANNEL', 'MATTERMOST_SLASH_TOKEN']);
    for (const e of envs) expect(doc, e).toContain(e);
  });
});
