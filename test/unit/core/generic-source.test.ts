import { describe, expect, it } from 'vitest';
import { genericSignature, getPath, parseGenericPayload, verifyGenericSignature } from '../../../src/core/generic-source.js';

const mapping = { alertname: 'name', status: 'state', resolved_values: ['resolved', 'ok'], fingerprint: 'id', labels: { namespace: 'where.ns' } };

describe('generic source', () => {
  it('reads dot-paths, array indexes included, and never walks the prototype', () => {
    const body = { a: { b: [{ c: 'x' }] } };
    expect(getPath(body, 'a.b.0.c')).toBe('x');
    expect(getPath(body, 'a.missing.c')).toBeUndefined();
    expect(getPath(body, '__proto__.constructor')).toBeUndefined();
    expect(getPath(body, 'a.constructor')).toBeUndefined();
  });

  it('maps one alert body; a resolved status value resolves; numbers become strings', async () => {
    const firing = await parseGenericPayload({ name: 'DiskFull', state: 'alerting', id: 42, where: { ns: 'payments' } }, mapping, {
      receivedAt: '2026-12-01T00:00:00.000Z',
      source: 'generic:x',
    });
    expect(firing.incidents[0]).toMatchObject({
      source: 'generic:x',
      status: 'firing',
      alertname: 'DiskFull',
      fingerprint: '42',
      labels: { namespace: 'payments' },
      startsAtEstimated: true,
    });
    const resolved = await parseGenericPayload({ name: 'DiskFull', state: 'OK', id: 42, where: { ns: 'payments' } }, mapping, {
      receivedAt: '2026-12-01T00:00:00.000Z',
    });
    expect(resolved.incidents[0]?.status).toBe('resolved');
  });

  it('rejects a body without the alertname path, and a non-array alerts path', async () => {
    await expect(parseGenericPayload({ state: 'x' }, mapping, {})).rejects.toMatchObject({ code: 'invalid_payload' });
    await expect(parseGenericPayload({ list: 'x' }, { ...mapping, alerts: 'list' }, {})).rejects.toMatchObject({
      code: 'invalid_payload',
      message: expect.stringContaining('list must be an array'),
    });
  });

  it('checks the HMAC of the raw body, with or without a sha256= prefix', () => {
    const body = Buffer.from('{"a":1}');
    const sig = genericSignature('s', body);
    expect(verifyGenericSignature('s', body, sig, 'x-signature')).toEqual({ ok: true });
    expect(verifyGenericSignature('s', body, `sha256=${sig}`, 'x-signature')).toEqual({ ok: true });
    expect(verifyGenericSignature('s', body, genericSignature('t', body), 'x-signature').ok).toBe(false);
    expect(verifyGenericSignature('s', body, undefined, 'x-signature')).toMatchObject({ ok: false, reason: 'missing x-signature header' });
  });
});

describe('generic source config', () => {
  it("masks each source's hmac_secret in config show", async () => {
    const { parseConfigText, maskSecrets } = await import('../../../src/config/load-config.js');
    const cfg = parseConfigText('server:\n  generic_webhooks:\n    up:\n      alertname: name\n      hmac_secret: gen-very-secret\n', {
      env: {},
      cwd: process.cwd(),
    });
    expect(cfg.server.generic_webhooks?.['up']?.hmac_secret).toBe('gen-very-secret');
    expect(JSON.stringify(maskSecrets(cfg))).not.toContain('gen-very-secret');
  });
});
