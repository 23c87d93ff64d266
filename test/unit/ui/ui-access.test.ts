/**
 * Trusted proxies are exact (issue 29 deliverable 2): a peer is a proxy only if it is listed
 * (an address, or inside a listed block); once any proxy is configured, loopback — any of
 * 127.0.0.0/8, `::1`, their mapped forms — gets no implicit pass; half a proxy setup is a
 * config error that says how to fix it.
 */
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { accessGate, type AccessOptions } from '../../../src/http/ui/ui-access.js';

const TOKEN = 'aa11cc33ee55ff77f3a9c1d7e5b24680';
const HEADER = 'X-Forwarded-User';

async function ask(opts: AccessOptions, peer: string | undefined, headers: Record<string, string> = {}) {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return accessGate(opts)({ peer, header: (n) => lower[n.toLowerCase()] });
}

describe('trusted proxies', () => {
  it('a sidecar listed as 127.0.0.1: every other loopback peer is a stranger, with or without the header', async () => {
    const sidecar = { trustedHeader: HEADER, trustedProxies: ['127.0.0.1'] };
    for (const peer of ['127.0.0.2', '127.1.1.1', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.2']) {
      expect((await ask(sidecar, peer)).ok, peer).toBe(false);
      expect((await ask(sidecar, peer, { [HEADER]: 'mallory' })).ok, `${peer} with the header`).toBe(false);
    }
    expect((await ask(sidecar, '127.0.0.1')).ok).toBe(false);
    expect((await ask(sidecar, '127.0.0.1', { [HEADER]: '  ' })).ok).toBe(false);
    expect(await ask(sidecar, '127.0.0.1', { [HEADER]: 'dave' })).toMatchObject({ ok: true, who: 'dave' });
    // The same peer, as an IPv6 socket on `::` reports it.
    expect(await ask(sidecar, '::ffff:127.0.0.1', { [HEADER]: 'dave' })).toMatchObject({ ok: true, who: 'dave' });
  });

  it('a proxy elsewhere: loopback is no longer let in without credentials; the block is exact', async () => {
    const ingress = { trustedHeader: HEADER, trustedProxies: ['10.0.0.0/24', 'fd00:1::/64'] };
    for (const peer of ['127.0.0.1', '::1', '10.0.1.1', '10.0.0.0.1', '9.255.255.255', 'fd00:2::1', undefined])
      expect((await ask(ingress, peer, { [HEADER]: 'mallory' })).ok, String(peer)).toBe(false);
    for (const peer of ['10.0.0.0', '10.0.0.255', '::ffff:10.0.0.7', 'fd00:1::abcd'])
      expect((await ask(ingress, peer, { [HEADER]: 'carol' })).ok, peer).toBe(true);
    expect((await ask(ingress, '127.0.0.1')).ok).toBe(false);
  });

  it('a proxy listed in its mapped form is the IPv4 peer it stands for', async () => {
    expect((await ask({ trustedHeader: HEADER, trustedProxies: ['::ffff:10.0.0.9'] }, '10.0.0.9', { [HEADER]: 'erin' })).ok).toBe(true);
  });

  it('the token still lets anyone in, loopback included, when proxies are configured', async () => {
    const both = { token: TOKEN, trustedHeader: HEADER, trustedProxies: ['127.0.0.1'] };
    expect((await ask(both, '127.0.0.2', { authorization: `Bearer ${TOKEN}` })).ok).toBe(true);
    expect((await ask(both, '203.0.113.9', { authorization: `bearer   ${TOKEN}` })).ok).toBe(true);
    expect((await ask(both, '127.0.0.2', { authorization: `Bearer ${TOKEN.slice(1)}` })).ok).toBe(false);
  });

  it('without any proxy, loopback is the operator and a user header means nothing', async () => {
    expect(await ask({}, '127.0.0.1')).toEqual({ ok: true });
    expect(await ask({}, '::1', { [HEADER]: 'mallory' })).toEqual({ ok: true });
    expect((await ask({}, '10.0.0.1', { [HEADER]: 'mallory' })).ok).toBe(false);
  });
});

describe('the proxy keys come in pairs', () => {
  const problems = (ui: unknown) => {
    const r = configSchema.safeParse({ ui });
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('trusted_proxies without trusted_header is an error naming the header to set', () => {
    const p = problems({ trusted_proxies: ['127.0.0.1'] });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(
      /^ui\.trusted_header: is required when `trusted_proxies` is set: .*X-Forwarded-User.*REPRISE_UI_TRUSTED_HEADER.*or remove `trusted_proxies`/,
    );
  });

  it('trusted_header without trusted_proxies is an error naming the addresses to list', () => {
    const p = problems({ trusted_header: HEADER });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^ui\.trusted_proxies: must name the proxy addresses .*127\.0\.0\.1.*REPRISE_UI_TRUSTED_PROXIES.*or remove `trusted_header`/);
  });

  it('refuses what is not an address or a block', () => {
    for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.0/8/8', '::1/129', '10.0.0.0/x', ''])
      expect(problems({ trusted_header: HEADER, trusted_proxies: [bad] }).length, bad).toBeGreaterThan(0);
    expect(problems({ trusted_header: HEADER, trusted_proxies: ['10.0.0.0/8', '::1', 'fd00::/8'] })).toEqual([]);
  });
});
