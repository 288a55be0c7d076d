import { describe, expect, it } from 'bun:test';
import { createLogger } from '../../src/log';

describe('logger', () => {
  it('writes JSON lines at or above its level only', () => {
    const lines: string[] = [];
    const log = createLogger('warn', (l) => lines.push(l));
    log.info('hidden');
    log.warn('shown', { n: 1 });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', msg: 'shown', n: 1 });
  });

  it('masks fields named like secrets, however deep', () => {
    const lines: string[] = [];
    createLogger('debug', (l) => lines.push(l)).info('x', {
      headers: { authorization: 'Bearer abc', Cookie: 'market_token=abc' },
      privateKey: `0x${'ab'.repeat(32)}`,
      apiKey: 'sk_abc',
      nested: { refreshToken: 'r' },
    });
    expect(lines[0]).not.toContain('abc');
    expect(lines[0]).not.toContain('abab');
    expect(JSON.parse(lines[0]!).nested.refreshToken).toBe('[redacted]');
  });

  it('writes nothing at level silent', () => {
    const lines: string[] = [];
    createLogger('silent', (l) => lines.push(l)).error('boom');
    expect(lines).toEqual([]);
  });
});
