/** The SSRF guard of skill-health probes and webhook deliveries: which addresses count as public. */
import { describe, expect, it } from 'bun:test';
import { checkHost, isPublicAddress } from '../../src/net';

describe('skill health address guard', () => {
  const nonPublic = [
    '127.0.0.1',
    '127.255.0.9',
    '0.0.0.0',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'fd00::1',
    'fe80::1',
    'ff02::1',
    'not-an-address',
  ];
  for (const address of nonPublic) {
    it(`treats ${address} as not public`, () => expect(isPublicAddress(address)).toBe(false));
  }

  for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:93.184.216.34']) {
    it(`treats ${address} as public`, () => expect(isPublicAddress(address)).toBe(true));
  }

  it('refuses a name when any of its addresses is not public, and reports a name that does not resolve', async () => {
    const resolve = async (host: string) =>
      ({ ok: ['93.184.216.34'], mixed: ['93.184.216.34', '10.0.0.8'], none: [] as string[] })[host as 'ok'] ??
      Promise.reject(new Error('ENOTFOUND'));
    expect(await checkHost('ok', resolve)).toEqual({ type: 'public', address: '93.184.216.34' });
    expect(await checkHost('mixed', resolve)).toEqual({
      type: 'refused',
      reason: 'refused: mixed resolves to the non-public address 10.0.0.8',
    });
    expect((await checkHost('none', resolve)).type).toBe('unresolved');
    expect((await checkHost('gone', resolve)).type).toBe('unresolved');
  });

  it('checks a bracketed IPv6 literal as the address it is', async () => {
    const { resolveWithDns } = await import('../../src/net');
    expect((await checkHost('[::1]', resolveWithDns)).type).toBe('refused');
    expect((await checkHost('127.0.0.1', resolveWithDns)).type).toBe('refused');
  });
});
