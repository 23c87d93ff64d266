/**
 * The docs say what the code does (issue 28 item 5): each claim below is read from the docs and
 * checked against the code that decides it — the coalescing default, what `npm run lint` runs,
 * the source layout, what `reprise doctor` checks on Slack, and what a Matrix room answers to
 * (every reaction and command). A change to either side that makes them disagree fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, reactionMeaning } from '../../src/adapters/matrix/matrix-inbound.js';
import { defaultConfig } from '../../src/config/load-config.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (f: string): string => readFileSync(join(ROOT, f), 'utf8');
const README = read('README.md');
const flat = (s: string): string => s.replace(/\s+/g, ' ');

describe('README', () => {
  it('says storm coalescing is on by default wherever it names it, as the config schema has it', () => {
    const c = defaultConfig().trigger.coalesce;
    expect(c.enabled).toBe(true);
    expect(c.group).toBe(true);
    const text = flat(README);
    expect(text).not.toMatch(/coalesce[^)]{0,40}\)?,? off by default/i);
    for (const m of text.matchAll(/`trigger\.coalesce(?:\.enabled)?`,? (on|off) by default/g)) expect(m[1], m[0]).toBe('on');
    expect(text).toMatch(/`trigger\.coalesce`, on by default/);
    // The defaults it quotes are the schema's.
    expect(text).toContain(`\`coalesce.max_alerts\` (${c.max_alerts})`);
    expect(text).toContain(`\`coalesce.debounce\` (${c.debounce_ms / 1000} s)`);
  });

  it("describes `npm run lint` as the script it is: every step of package.json's lint script", () => {
    const script = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts['lint']!;
    const dev = README.slice(README.indexOf('## Development'));
    const line = flat(dev.slice(dev.indexOf('`npm run lint`'), dev.indexOf('`npm run bench`')));
    const steps: Array<[RegExp, RegExp]> = [
      [/tsc .*--noEmit/, /type-check/],
      [/eslint/, /ESLint/],
      [/prettier --check/, /prettier --check/],
      [/npm run build/, /build/],
      [/catalog lint catalog/, /catalog lint catalog/],
    ];
    for (const [inScript, inDocs] of steps) {
      expect(script, `package.json lint runs ${inScript}`).toMatch(inScript);
      expect(line, `the README names ${inDocs}`).toMatch(inDocs);
    }
  });

  it('names every folder of src/ in its layout', () => {
    const layout = flat(README.slice(README.indexOf('Layout:')));
    for (const d of readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()))
      expect(layout, `src/${d.name} in the README layout`).toContain(`\`src/${d.name}\``);
    for (const d of ['unit', 'integration', 'browser']) expect(layout).toContain(`\`test/${d}\``);
  });

  it('does not claim Slack double-posts on every retry, and says encrypted Matrix rooms are not supported', () => {
    const limits = flat(README.slice(README.indexOf('## Limits of this build'), README.indexOf('## Development')));
    expect(limits).not.toMatch(/can be posted twice when the outbox retries/);
    expect(limits).toMatch(/reads the channel or thread back/);
    expect(limits).toMatch(/End-to-end encrypted Matrix rooms are not supported/);
  });
});

describe('docs/slack.md', () => {
  it("says what `reprise doctor` checks on Slack: auth.test and the default channel's membership, not every routed channel", () => {
    const doctor = read('src/cli/doctor.ts');
    const check = doctor.slice(doctor.indexOf('async function checkSlack'), doctor.indexOf('\n}\n', doctor.indexOf('async function checkSlack')));
    const calls = [...check.matchAll(/client\.([a-z]+\.[a-zA-Z]+)\(/g)].map((m) => m[1]);
    expect(calls).toEqual(['auth.test', 'conversations.info']);
    expect(check).toContain('s.channel');
    expect(check, 'doctor reads no routing rule').not.toMatch(/config\.routing|\.routes\b|\.rules\b/);
    const slack = flat(read('docs/slack.md'));
    expect(slack).not.toMatch(/member of every channel it posts to/);
    expect(slack).toMatch(/`reprise doctor`: it calls `auth\.test` .*`conversations\.info`/);
  });
});

describe('docs/matrix.md', () => {
  const matrix = flat(read('docs/matrix.md'));
  it('names every reaction a Matrix room answers to', () => {
    for (const emoji of ['👍', '👎', '🔕', '👀']) {
      expect(reactionMeaning(emoji), emoji).toBeDefined();
      expect(matrix).toContain(emoji);
    }
    expect(matrix).toMatch(/👀 on it/);
  });

  it('names every !reprise command, and fixed: and postmortem in a thread', () => {
    for (const c of COMMANDS) expect(matrix, `!reprise ${c}`).toContain(`!reprise ${c}`);
    expect(matrix).toContain('!reprise fixed: ');
    expect(matrix).toContain('`!reprise postmortem`');
  });
});
