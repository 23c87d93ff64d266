import { describe, expect, it } from 'vitest';
import { describeListen } from '../../../src/runtime/start-bot.js';
import { controlSocketPath } from '../../../src/runtime/serve-owner.js';

describe('serve says where it listens', () => {
  it('calls 0.0.0.0 and :: every interface, not localhost', () => {
    expect(describeListen('0.0.0.0', 8080)).toBe('port 8080 on all interfaces (0.0.0.0); locally http://127.0.0.1:8080');
    expect(describeListen('::', 9)).toBe('port 9 on all interfaces (::); locally http://127.0.0.1:9');
    expect(describeListen('127.0.0.1', 8080)).toBe('http://127.0.0.1:8080');
    expect(describeListen('::1', 8080)).toBe('http://[::1]:8080');
  });

  it('puts the control socket in the data dir, or in the temp dir when that path is too long for a socket', () => {
    expect(controlSocketPath('/var/lib/reprise')).toBe('/var/lib/reprise/reprise.sock');
    const deep = `/data/${'x'.repeat(120)}`;
    const p = controlSocketPath(deep);
    expect(Buffer.byteLength(p)).toBeLessThanOrEqual(107);
    expect(p).toMatch(/reprise-[0-9a-f]{16}\.sock$/);
    expect(controlSocketPath(deep)).toBe(p); // stable, so the CLI finds it again
  });
});
