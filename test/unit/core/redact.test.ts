import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { configRedactor, configSecrets } from '../../../src/config/config-secrets.js';
import { configSchema } from '../../../src/config/schema.js';
import { createRedactor, maskUrl, redactText, REDACTED } from '../../../src/core/redact.js';
import { createLogger } from '../../../src/runtime/create-logger.js';

describe('the one redactor', () => {
  const r = createRedactor(['pd-rest-token-0123456789', 'Bearer mcp-header-token-abcdef', undefined, 'short']);

  it('masks known secrets raw, URL-encoded and JSON-escaped, and an Authorization value by its credential too', () => {
    const t = r.text('a pd-rest-token-0123456789 b pd-rest-token-0123456789 c mcp-header-token-abcdef');
    expect(t).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED}`);
    const q = createRedactor(['p@ss/w"rd-secret']);
    expect(q.text(`?k=${encodeURIComponent('p@ss/w"rd-secret')}`)).not.toContain('w%22rd');
    expect(q.text(JSON.stringify({ k: 'p@ss/w"rd-secret' }))).not.toContain('rd-secret');
    // A short value is an ordinary word, not searched for.
    expect(r.text('short answer')).toBe('short answer');
  });

  it.each([
    ['Authorization: Token token=abcdef123456', 'abcdef123456'],
    ['{"headers":{"authorization":"Token token=zz9zz9zz9zz9"}}', 'zz9zz9zz9zz9'],
    ['Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijk', 'eyJzdWIi'],
    ['proxy said: Bearer AbCdEf0123456789xyz', 'AbCdEf0123456789'],
    ['password=hunter22&user=x', 'hunter22'],
    ['"api_key": "k-123456789"', 'k-123456789'],
    ['GET /x?access_token=qwertyuiop HTTP/1.1', 'qwertyuiop'],
    ['x-api-key: 0a1b2c3d4e5f', '0a1b2c3d4e5f'],
    ['redis://:s3cret-pass@redis:6379/0', 's3cret-pass'],
    ['https://x-access-token:ghs_abcdefghijklmnop@github.com/o/r.git', 'ghs_abcdefghijklmnop'],
    ['slack xoxb-1234567890-abcdefghij and xapp-1-A0-12345-abcdef', 'xoxb-1234567890'],
    ['github ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'ghp_abc'],
    ['key sk-abcdefghijklmnop1234 and sk-proj-AbCdEfGhIjKlMnOpQrStUv', 'sk-'],
    ['aws AKIAABCDEFGHIJKLMNOP', 'AKIAABCDEFGHIJKLMNOP'],
    ['matrix syt_Ym90_abcdefghij_123', 'syt_'],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----', 'MIIEow'],
  ])('masks %j', (text, secret) => {
    expect(redactText(text)).not.toContain(secret);
  });

  it('leaves identifiers, counts and prose alone', () => {
    for (const t of [
      'kubepodcrashlooping|sk-payments-api-eu-west-1|deployment|web|prod',
      'tokens in/out 1200/340 · token budget 400k',
      'see https://example.com/a@b and git@github.com:org/repo.git and @ann:matrix.org',
      'fp 3f2a9c0d1e7b4a55 · U0ANN · 1700000000.000100',
      '{"secret":true,"token_budget":5}',
    ])
      expect(redactText(t)).toBe(t);
  });

  it('keeps a JSON line JSON (a mask adds no quote or backslash), with the key kept', () => {
    const line = JSON.stringify({ msg: 'PagerDuty answered 401', detail: '{"error":"Authorization: Token token=abcdef123456"}', secret: true, n: 1 });
    const out = JSON.parse(redactText(line)) as Record<string, unknown>;
    expect(out['detail']).toBe(`{"error":"Authorization: Token token=${REDACTED}"}`);
    expect(out['secret']).toBe(true);
  });

  it('masks every string of a value, keeps its shape, and returns the same object when nothing changed', () => {
    const v = { a: ['Token token=abcdef123456', 2], b: { c: 'pd-rest-token-0123456789' }, d: null };
    expect(r.value(v)).toEqual({ a: [`Token token=${REDACTED}`, 2], b: { c: REDACTED }, d: null });
    const clean = { a: ['x'], b: { c: 'y' } };
    expect(r.value(clean)).toBe(clean);
  });

  it('keeps the ids a surface or the bot made exactly, even one that reads like a key; the text beside it is still masked', () => {
    // A real shape of Matrix event id: base64url, and now and then `-sk-` plus mixed case.
    const eventId = '$fzB-sk-8qAPiJXyWoAHWmRle1ZK6TYls3Cp3TRGFBGo';
    expect(redactText(eventId)).not.toBe(eventId);
    const vote = {
      type: 'feedback',
      eventId,
      user: 'matrix:@rk-AbCdEfGhIjKlMnOpQr:hs',
      messageRef: eventId,
      note: `seen ${eventId} with sk-AbCdEfGhIjKlMnOp1234`,
    };
    const out = r.value(vote);
    expect(out.eventId).toBe(eventId);
    expect(out.messageRef).toBe(eventId);
    expect(out.user).toBe(vote.user);
    expect(out.note).not.toContain('sk-AbCdEfGhIjKlMnOp1234');
    // Only the event's own id fields: deeper down (alert labels, a view) `id` or `user` is anybody's text.
    expect(r.value({ view: { text: 'pd-rest-token-0123456789' } })).toEqual({ view: { text: REDACTED } });
    expect(r.value({ labels: { id: 'pd-rest-token-0123456789', user: 'sk-AbCdEfGhIjKlMnOp1234' } })).toEqual({ labels: { id: REDACTED, user: REDACTED } });
  });

  it('masks a URL’s credentials only', () => {
    expect(maskUrl('https://user:pw@git.example.com/o/r.git')).toBe('https://***@git.example.com/o/r.git');
    expect(maskUrl('redis://redis:6379')).toBe('redis://redis:6379');
  });
});

describe('the config’s secrets', () => {
  const config = configSchema.parse({
    server: { bearer_token: 'bearer-0123456789abcdef', generic_webhooks: { up: { alertname: 'a', hmac_secret: 'generic-hmac-0123456789' } } },
    ui: { token: 'ui-token-0123456789abcdef' },
    pagerduty: { token: 'pd-token-0123456789', from: 'bot@example.com' },
    store: { url: 'redis://:redis-pass-123456@redis:6379' },
    tools: {
      servers: [{ name: 'k8s', access: 'read', transport: 'http', url: 'http://mcp:8080/mcp', headers: { Authorization: 'Bearer mcp-token-0123456789' } }],
    },
  });

  it('are every secret field, record and list item included, and the credentials of URLs', () => {
    const s = configSecrets(config);
    for (const v of [
      'bearer-0123456789abcdef',
      'generic-hmac-0123456789',
      'ui-token-0123456789abcdef',
      'pd-token-0123456789',
      'redis-pass-123456',
      'Bearer mcp-token-0123456789',
    ])
      expect(s).toContain(v);
    const text = configRedactor(config).text('ui-token-0123456789abcdef mcp-token-0123456789 generic-hmac-0123456789');
    expect(text).toBe(`${REDACTED} ${REDACTED} ${REDACTED}`);
  });

  it('never reach a log line, whatever key or message carries them', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = createLogger({ level: 'info', destination, redactor: configRedactor(config) }).child({ component: 't' });
    log.warn(
      { err: new Error('PagerDuty answered 401 (Authorization: Token token=pd-token-0123456789)'), note: 'ui-token-0123456789abcdef' },
      'with bearer-0123456789abcdef',
    );
    await new Promise((r) => setImmediate(r));
    const all = lines.join('');
    expect(all).toContain('PagerDuty answered 401');
    for (const s of configSecrets(config)) expect(all).not.toContain(s);
    for (const l of lines) expect(() => JSON.parse(l) as unknown).not.toThrow();
  });
});
