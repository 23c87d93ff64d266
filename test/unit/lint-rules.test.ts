/**
 * The shape STYLE.md describes is held by eslint.config.js alone (one boundary mechanism, the
 * one `npm run lint` runs). These fixtures prove each rule fails when it is broken: a domain
 * module importing runtime/ (or config, http, cli, adapters), an SDK, or loading a module at
 * run time; ports importing core/bot; and an import cycle, type-only or not through a run-time
 * import. A clean domain module passes, so the rules are not failing everything.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CONFIG = fileURLToPath(new URL('../../eslint.config.js', import.meta.url));

const FIXTURES: Record<string, string> = {
  'src/core/clean.ts': "import { z } from 'zod';\nimport type { Clock } from '../ports/clock.js';\nexport const schema = z.string();\nexport type C = Clock;\n",
  'src/ports/clock.ts': 'export interface Clock {\n  now(): Date;\n}\n',
  'src/runtime/open-thing.ts': 'export const openThing = (): number => 1;\n',
  'src/core/uses-runtime.ts': "import { openThing } from '../runtime/open-thing.js';\nexport const x = openThing();\n",
  'src/core/deep/uses-config.ts': "import type { Config } from '../../config/schema.js';\nexport type X = Config;\n",
  'src/config/schema.ts': 'export interface Config {\n  a: string;\n}\n',
  'src/core/uses-sdk.ts': "import OpenAI from 'openai';\nexport const o = OpenAI;\n",
  'src/core/loads-late.ts': "export const load = async (): Promise<unknown> => import('pino');\n",
  'src/ports/uses-bot.ts': "import type { Bot } from '../core/bot/bot.js';\nexport type B = Bot;\n",
  'src/core/bot/bot.ts': 'export interface Bot {\n  a: string;\n}\n',
  'src/core/cycle-a.ts': "import { b } from './cycle-b.js';\nexport const a = (): number => b() + 1;\n",
  'src/core/cycle-b.ts': "import { a } from './cycle-a.js';\nexport const b = (): number => (typeof a === 'function' ? 1 : 0);\n",
  'src/runtime/lazy-a.ts': "export const lazy = async (): Promise<number> => (await import('./lazy-b.js')).n;\nexport const m = 1;\n",
  'src/runtime/lazy-b.ts': "import { m } from './lazy-a.js';\nexport const n = m + 1;\n",
  'src/cli/command.ts': 'export const command = (): number => 1;\n',
  'src/runtime/uses-cli.ts': "import { command } from '../cli/command.js';\nexport const c = command();\n",
  'src/adapters/x/uses-cli.ts': "import type { command } from '../../cli/command.js';\nexport type C = typeof command;\n",
};

let dir: string;
const results = new Map<string, Array<{ ruleId: string | null; message: string }>>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reprise-lint-'));
  for (const [path, text] of Object.entries(FIXTURES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  // The repository's own config, with the fixture folder as the project root (its src/ patterns apply there).
  const eslint = new ESLint({ cwd: dir, overrideConfigFile: CONFIG });
  for (const r of await eslint.lintFiles(['src/**/*.ts'])) results.set(relative(dir, r.filePath), r.messages);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rules = (path: string): string[] =>
  (results.get(path) ?? []).map((m) => m.ruleId ?? `fatal: ${m.message}`).filter((r) => r !== 'import-x/no-extraneous-dependencies');

describe('lint rules (eslint.config.js)', () => {
  it('lints every fixture, and passes a domain module that imports only ports and allowed libraries', () => {
    expect([...results.keys()].sort()).toEqual(Object.keys(FIXTURES).sort());
    expect(rules('src/core/clean.ts')).toEqual([]);
    expect(rules('src/ports/clock.ts')).toEqual([]);
  });

  it('fails core/ importing runtime/ and the other shell layers', () => {
    expect(rules('src/core/uses-runtime.ts')).toEqual(['no-restricted-imports']);
    expect(rules('src/core/deep/uses-config.ts')).toEqual(['no-restricted-imports']);
    expect(results.get('src/core/uses-runtime.ts')![0]!.message).toMatch(/core\/ and ports\/ depend on ports only/);
  });

  it('fails the domain importing an SDK or loading a module at run time, and ports importing core/bot', () => {
    expect(rules('src/core/uses-sdk.ts')).toEqual(['no-restricted-imports']);
    expect(rules('src/core/loads-late.ts')).toEqual(['no-restricted-syntax']);
    expect(rules('src/ports/uses-bot.ts')).toEqual(['no-restricted-imports']);
  });

  it('fails runtime/ and adapters/ importing the command layer (cli/)', () => {
    expect(rules('src/runtime/uses-cli.ts')).toEqual(['no-restricted-imports']);
    expect(rules('src/adapters/x/uses-cli.ts')).toEqual(['no-restricted-imports']);
    expect(results.get('src/runtime/uses-cli.ts')![0]!.message).toMatch(/cli\/ is the command layer/);
    expect(rules('src/cli/command.ts')).toEqual([]);
  });

  it('fails an import cycle, a lazily loaded one too', () => {
    expect(rules('src/core/cycle-a.ts')).toContain('import-x/no-cycle');
    expect(rules('src/core/cycle-b.ts')).toContain('import-x/no-cycle');
    expect([...rules('src/runtime/lazy-a.ts'), ...rules('src/runtime/lazy-b.ts')]).toContain('import-x/no-cycle');
    // Outside the domain a runtime/ import is fine: only the cycle is reported.
    expect(rules('src/runtime/open-thing.ts')).toEqual([]);
  });
});
