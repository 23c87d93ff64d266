import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderDefaultsYaml } from '../../../src/config/defaults-yaml.js';
import { defaultConfig, parseConfigText } from '../../../src/config/load-config.js';
import { configSchema } from '../../../src/config/schema.js';
import { configFields } from '../../../src/config/schema-fields.js';

describe('renderDefaultsYaml', () => {
  const text = renderDefaultsYaml();

  it('parses back through the schema to exactly the defaults', () => {
    expect(configSchema.parse(parse(text))).toEqual(configSchema.parse({}));
    expect(configSchema.parse(parse(text))).toEqual(defaultConfig());
  });

  it('prints every key of the schema, each under a doc comment', () => {
    const lines = text.split('\n');
    for (const f of configFields()) {
      if (f.path.includes('[]')) continue; // rule keys are documented by the list's example
      expect(f.description, `${f.path} has no doc`).toBeTruthy();
      const at = lines.findIndex((l, i) => new RegExp(`^\\s*(# )?\\s*(# )?${f.key}:`).test(l) && lines[i - 1]?.includes(f.description ?? '\u0000'));
      expect(at, `${f.path} is not printed under its doc`).toBeGreaterThan(0);
    }
  });

  it('prints the documented numbers with their defaults', () => {
    expect(text).toMatch(/\n {2}port: 8080\n/);
    expect(text).toMatch(/\n {2}k: 20\n/);
    expect(text).toMatch(/\n {2}stale_after: 180d\n/);
    expect(text).toMatch(/\n {2}confidence_cap: 0\.9\n/);
    expect(text).toMatch(/\n#\s+max_tokens: 400000\n/);
    expect(text).toContain('env: REPRISE_MODEL_API_KEY or OPENAI_API_KEY');
    expect(text).toContain('env: SLACK_BOT_TOKEN');
  });

  it('the commented-out model block becomes a valid config once uncommented', () => {
    const lines = text.split('\n');
    const start = lines.indexOf('# model:');
    expect(start).toBeGreaterThan(0);
    const block: string[] = [];
    for (const l of lines.slice(start)) {
      if (!l.startsWith('#')) break;
      block.push(l.slice(2));
    }
    const cfg = parseConfigText(block.join('\n') + '\nserver:\n  bearer_token: t-long-enough-token-value\n', { env: {}, cwd: '/' });
    expect(cfg.model).toMatchObject({ base_url: 'https://api.openai.com/v1', max_steps: 20, wall_time_ms: 300_000 });
    expect(cfg.model?.api_key).toBeUndefined();
  });
});
