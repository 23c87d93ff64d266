/**
 * Tokens that protect (issue 20 item 7): short tokens, the docs' own examples and unfilled
 * placeholders are refused at start with the fix; every token example the docs, manifests and
 * README show is one of them, so copying an example never yields a working (guessable) bot.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ConfigError } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import { EXAMPLE_TOKENS, weakTokenReason } from '../../../src/config/token-rule.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('weakTokenReason', () => {
  it.each([
    ['x', /at least 16 characters \(it has 1\); generate one with `openssl rand -hex 24`/],
    ['change-me', /at least 16 characters/],
    ['CHANGE-ME-change-me', /example value from the docs/],
    ['please-change-me-now', /example value from the docs/],
    ['<openssl rand -hex 24>', /placeholder from the docs/],
    ['$(openssl rand -hex 24)', /placeholder from the docs/],
    ['aaaaaaaaaaaaaaaaaaaaaaaa', /too repetitive/],
    ['abababababababababab', /too repetitive/],
  ])('refuses %j', (token, reason) => {
    expect(weakTokenReason(token)).toMatch(reason);
  });

  it('accepts what `openssl rand -hex 24` prints, and other long random tokens', () => {
    let hex = '3f9c1e8b7a6d5c4b3a29181706f5e4d3c2b1a0f9e8d7c6b5';
    try {
      hex = execFileSync('openssl', ['rand', '-hex', '24'], { encoding: 'utf8' }).trim();
    } catch {
      // openssl missing: the sample above is one of its outputs.
    }
    expect(weakTokenReason(hex)).toBeUndefined();
    expect(weakTokenReason('tok-from-the-environment')).toBeUndefined();
  });

  it('never quotes the token it refuses', () => {
    for (const t of ['q7', 'change-me-change-me', '<secret-token-here>', 'zzzzzzzzzzzzzzzzzzzz']) expect(weakTokenReason(t)).not.toContain(t);
  });

  it('refuses every listed example, whatever its case and separators', () => {
    for (const t of EXAMPLE_TOKENS) {
      expect(weakTokenReason(t), t).toBeDefined();
      expect(weakTokenReason(t.toUpperCase().replace(/-/g, '_').padEnd(16, '_')), t).toBeDefined();
    }
  });
});

describe('server.bearer_token in the config', () => {
  it('is refused at start naming the key, masking the value, with the fix', () => {
    for (const [where, text, env] of [
      ['file', 'server:\n  bearer_token: x\n', {}],
      ['env', '', { REPRISE_BEARER_TOKEN: 'change-me' }],
    ] as const) {
      try {
        parseConfigText(text, { env, cwd: '/' });
        expect.unreachable(where);
      } catch (err) {
        const problems = (err as ConfigError).problems;
        expect(problems, where).toEqual([
          expect.objectContaining({ path: 'server.bearer_token', value: '***', rule: expect.stringContaining('openssl rand -hex 24') }),
        ]);
        expect((err as ConfigError).format()).not.toMatch(/: x\b|change-me/);
      }
    }
  });
});

/** Every file a reader copies from: the docs, the manifests, the README and the templates. */
function docFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) docFiles(p, out);
    else if (/\.(md|ya?ml|json|env)$/.test(name)) out.push(p);
  }
  return out;
}

describe('the token examples the docs show', () => {
  it('are each refused by the rule (an example copied as is never starts a bot)', () => {
    const files = [...docFiles(join(ROOT, 'docs')), ...docFiles(join(ROOT, 'manifests')), ...docFiles(join(ROOT, 'templates')), join(ROOT, 'README.md')];
    const KEY = /(?:bearer_token|bearer-token|REPRISE_BEARER_TOKEN|REPRISE_MCP_TOKEN|ui_token|mcp_token)["']?\s*[:=]\s*["']?([^\s"'`|,}]+)/g;
    // The configuration reference lists each key's example in its table row.
    const ROW = /^\| `[a-z_.]*(?:bearer_token|token)` \|.*Example: `([^`]+)`/gm;
    const found: Array<[string, string]> = [];
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(ROW)) if (/bearer|mcp|ui/.test(m[0])) found.push([f.slice(ROOT.length), m[1]!]);
      for (const m of text.matchAll(KEY)) {
        const value = m[1]!;
        // Shell and Kubernetes references to where the value comes from are not values.
        if (/^\$|^\{|^<$|^\*\*\*$|^—$/.test(value) || value === '' || /secretKeyRef|valueFrom/.test(value)) continue;
        found.push([f.slice(ROOT.length), value]);
      }
    }
    expect(found.map(([f]) => f)).toEqual(expect.arrayContaining(['docs/configuration.md', 'manifests/kubernetes/secret.example.yaml']));
    const accepted = found.filter(([, v]) => weakTokenReason(v.replace(/^<.*/, '<placeholder>')) === undefined);
    expect(accepted).toEqual([]);
  });
});
