import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderConfigReference } from '../../../src/config/reference-md.js';
import { configFields } from '../../../src/config/schema-fields.js';

const REGENERATE = 'docs/configuration.md is out of date: run `npm run build && node dist/main.js config reference > docs/configuration.md`';

describe('the configuration reference', () => {
  const text = renderConfigReference();

  it('is what docs/configuration.md holds (generated, never edited by hand)', () => {
    expect(readFileSync('docs/configuration.md', 'utf8'), REGENERATE).toBe(text);
  });

  it('has one row per key of the schema, with its doc, default and env', () => {
    const rows = text.split('\n').filter((l) => l.startsWith('| `'));
    const paths = rows.map((r) => /^\| `([^`]+)`/.exec(r)?.[1]);
    for (const f of configFields()) {
      if (f.path.split('.').length === 1) continue; // a section: its own heading
      const row = rows[paths.indexOf(f.path)];
      expect(row, `${f.path} has no row`).toBeDefined();
      expect(row, `${f.path} row lacks its doc`).toContain((f.description ?? '').slice(0, 30).replace(/\|/g, '\\|'));
      for (const env of f.env ?? []) expect(row, `${f.path} row lacks ${env}`).toContain(`\`${env}\``);
    }
    expect(new Set(paths).size, 'a key appears twice').toBe(paths.length);
  });

  it('shows defaults as YAML and marks secrets and required keys', () => {
    expect(text).toMatch(/\| `server\.port` \| `8080` \| `PORT` \|/);
    expect(text).toMatch(/\| `recall\.stale_after` \| `180d` \|/);
    expect(text).toMatch(/\| `model\.api_key` \| — \| `REPRISE_MODEL_API_KEY` or `OPENAI_API_KEY` \| .*Secret/);
    expect(text).toMatch(/\| `tools\.servers\[\]\.name` \| — \|.*\*\*Required\*\* in each item/);
    expect(text).toMatch(/\| `forge\.repo` \|.*\*\*Required\*\* when its block is present/);
  });
});
