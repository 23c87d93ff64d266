/**
 * The domain stays free of SDKs (STYLE.md "Layout"): src/core and src/ports import no chat,
 * model, forge, storage, search, git or logging library. Adapters translate.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FORBIDDEN = [
  '@slack/',
  'matrix-bot-sdk',
  'openai',
  '@octokit/',
  'keyv',
  '@keyv/',
  'flexsearch',
  'simple-git',
  'pino',
  '@modelcontextprotocol/',
  'prom-client',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && /\.(m|c)?[jt]sx?$/.test(d.name))
    .map((d) => join(d.parentPath, d.name));
}

/** Every module specifier a file names: static/dynamic imports, re-exports, require. */
function importSpecifiers(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) out.push(m[1]!);
  return out;
}

function isForbidden(spec: string): boolean {
  const bare = spec.startsWith('node:') || spec.startsWith('.') ? '' : spec;
  return FORBIDDEN.some((f) => (f.endsWith('/') ? bare.startsWith(f) : bare === f || bare.startsWith(`${f}/`)));
}

describe('architecture', () => {
  it('finds the imports it is meant to police', () => {
    const sample = [
      "import Keyv from 'keyv';",
      "import type { App } from '@slack/bolt';",
      "export { x } from 'flexsearch';",
      "import 'pino';",
      "const o = await import('openai');",
      "import {\n  Octokit,\n} from '@octokit/rest';",
      "// import x from 'simple-git';",
      "import { z } from 'zod';",
    ].join('\n');
    const specs = importSpecifiers(sample);
    expect(specs.filter(isForbidden).sort()).toEqual(['@octokit/rest', '@slack/bolt', 'flexsearch', 'keyv', 'openai', 'pino']);
    expect(isForbidden('zod')).toBe(false);
    expect(isForbidden('yaml')).toBe(false);
    expect(isForbidden('./keyv-store.js')).toBe(false);
    expect(isForbidden('@keyv/redis')).toBe(true);
    expect(isForbidden('@modelcontextprotocol/sdk/client/index.js')).toBe(true);
    expect(isForbidden('pino-pretty')).toBe(false);
    // Metrics reach the core through ports/loop-observer; prom-client stays in the shell.
    expect(isForbidden('prom-client')).toBe(true);
  });

  it('keeps src/core and src/ports free of SDK imports', () => {
    const files = [...sourceFiles(join(ROOT, 'src/core')), ...sourceFiles(join(ROOT, 'src/ports'))];
    expect(files.length).toBeGreaterThan(20);
    const offences: string[] = [];
    for (const file of files) {
      for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
        if (isForbidden(spec)) offences.push(`${relative(ROOT, file)} imports ${spec}`);
      }
    }
    expect(offences).toEqual([]);
  });

  it('keeps src/core and src/ports from importing adapters', () => {
    const files = [...sourceFiles(join(ROOT, 'src/core')), ...sourceFiles(join(ROOT, 'src/ports'))];
    const offences = files.flatMap((file) =>
      importSpecifiers(readFileSync(file, 'utf8'))
        .filter((s) => /(^|\/)adapters\//.test(s))
        .map((s) => `${relative(ROOT, file)} imports ${s}`),
    );
    expect(offences).toEqual([]);
  });
});
