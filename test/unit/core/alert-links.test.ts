import { describe, expect, it } from 'vitest';
import { checkLinks, hostAllowed, normalizeLink, silencePageUrl, withScheme } from '../../../src/core/alert-links.js';

describe('normalizeLink', () => {
  it.each([
    ['https://runbooks.example.org/KubePodCrashLooping', 'https://runbooks.example.org/KubePodCrashLooping'],
    ['  http://grafana.example.org/d/x?orgId=1  ', 'http://grafana.example.org/d/x?orgId=1'],
    // Written without a scheme: a host (with or without a port) starts it, so it is taken as https.
    ['runbooks.example.org/shop/orders', 'https://runbooks.example.org/shop/orders'],
    ['wiki.example.org', 'https://wiki.example.org/'],
    ['node1.example.org:8443/health', 'https://node1.example.org:8443/health'],
    ['localhost:3000/d/abc', 'https://localhost:3000/d/abc'],
    ['//grafana.example.org/d/abc', 'https://grafana.example.org/d/abc'],
    ['10.0.3.17:9090/graph', 'https://10.0.3.17:9090/graph'],
  ])('%s is the web address %s', (raw, url) => {
    expect(normalizeLink(raw)).toEqual({ ok: true, url });
  });

  it.each([
    ['javascript:alert(document.cookie)', 'not a web link (javascript: scheme)'],
    ['JavaScript:alert(1)', 'not a web link (javascript: scheme)'],
    ['data:text/html,<script>x</script>', 'not a web link (data: scheme)'],
    ['ftp://files.example.org/runbook.txt', 'not a web link (ftp: scheme)'],
    ['/runbooks/KubePodCrashLooping', 'not a web address (no scheme and no host)'],
    ['runbooks/KubePodCrashLooping.md', 'not a web address (no scheme and no host)'],
    ['https://example.org/a b', 'contains spaces or control characters'],
    ['https://example.org/\u0007', 'contains spaces or control characters'],
    ['https://user:secret@example.org/x', 'carries a user name or password'],
    [`https://example.org/${'a'.repeat(2000)}`, 'longer than 2000 characters'],
    ['https://', 'not a valid URL'],
  ])('%s is refused: %s', (raw, reason) => {
    expect(normalizeLink(raw)).toEqual({ ok: false, reason });
  });

  it('says nothing about an empty field', () => {
    expect(normalizeLink(undefined)).toBeUndefined();
    expect(normalizeLink('   ')).toBeUndefined();
  });
});

describe('withScheme (what recall compares a runbook_url by)', () => {
  it('adds https only to a scheme-less address and keeps a written scheme exactly', () => {
    expect(withScheme('runbooks.example.org/x')).toBe('https://runbooks.example.org/x');
    expect(withScheme('//runbooks.example.org/x')).toBe('https://runbooks.example.org/x');
    expect(withScheme('HTTPS://Runbooks.Example.org/X')).toBe('HTTPS://Runbooks.Example.org/X');
    expect(withScheme('javascript:alert(1)')).toBe('javascript:alert(1)');
    expect(withScheme('runbooks/x.md')).toBe('runbooks/x.md');
  });
});

describe('hostAllowed', () => {
  const allowed = ['grafana.example.org', '*.runbooks.example.org', '10.0.3.17', '[2001:db8::1]'];
  it.each([
    ['grafana.example.org', true],
    ['GRAFANA.example.org.', true],
    ['a.runbooks.example.org', true],
    ['deep.a.runbooks.example.org', true],
    // `*.domain` is the hosts under it, not the domain itself, and not a look-alike.
    ['runbooks.example.org', false],
    ['evilrunbooks.example.org', false],
    ['grafana.example.org.evil.test', false],
    ['10.0.3.17', true],
    ['[2001:db8::1]', true],
    ['evil.test', false],
  ])('%s → %s', (host, ok) => {
    expect(hostAllowed(host, allowed)).toBe(ok);
  });

  it('allows every host when the list is empty', () => {
    expect(hostAllowed('anything.test', [])).toBe(true);
  });
});

describe('checkLinks', () => {
  it('keeps the links in order, each URL once, and says why each refused one is not shown', () => {
    const { links, refused } = checkLinks(
      [
        { label: 'source', field: 'generatorURL', raw: 'https://grafana.example.org/alerting/x/view' },
        { label: 'runbook', field: 'runbook_url', raw: 'javascript:alert(1)' },
        { label: 'dashboard', field: 'dashboardURL', raw: 'https://evil.test/d/x' },
        { label: 'dashboard', field: 'dashboard', raw: 'https://grafana.example.org/alerting/x/view' },
        { label: 'panel', field: 'panelURL', raw: '' },
      ],
      { allowedHosts: ['grafana.example.org'] },
    );
    expect(links).toEqual([{ label: 'source', url: 'https://grafana.example.org/alerting/x/view' }]);
    expect(refused).toEqual([
      { field: 'runbook_url', reason: 'not a web link (javascript: scheme)' },
      { field: 'dashboardURL', reason: 'its host is not in links.allowed_hosts' },
    ]);
  });
});

describe('silencePageUrl', () => {
  it('keeps the path prefix of the external URL and matches the identifying labels only', () => {
    const url = silencePageUrl('http://am.example.org/alertmanager/', { alertname: 'NodeDown', instance: 'node1:9100', severity: 'critical', team: 'x"y' });
    expect(url.startsWith('http://am.example.org/alertmanager/#/silences/new?filter=')).toBe(true);
    expect(decodeURIComponent(url.split('filter=')[1]!)).toBe('{alertname="NodeDown",instance="node1:9100"}');
  });
});
