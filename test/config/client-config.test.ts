/**
 * The command-line clients read the registry, key, network and wallet through one reader: flags
 * win over variables, MARKET_* over SKILLZ_*, variables over the stored login, and a URL that is
 * not http(s) is refused naming where it came from.
 */
import { describe, expect, it } from 'bun:test';
import { DEFAULT_API_URL } from 'skill-market/registry';
import { DEFAULT_NETWORK } from 'skill-market/x402';
import {
  ConfigError,
  readClientChain,
  readConfigDir,
  readDiscovery,
  readRegistryConnection,
  readServeEnv,
  readWalletKey,
} from '../../src/config';

const stored = { apiUrl: 'https://stored.example', apiKey: 'ck_stored' };

describe('the registry a client talks to', () => {
  it('takes the flag, then MARKET_*, then SKILLZ_*, then the stored login, then the default', () => {
    const env = {
      MARKET_API_URL: 'https://market.example',
      SKILLZ_API_URL: 'https://skillz.example',
      MARKET_API_KEY: 'ck_m',
      SKILLZ_API_KEY: 'ck_s',
    };
    expect(readRegistryConnection(env, { 'api-url': 'https://flag.example', 'api-key': 'ck_f' }, stored)).toEqual({
      apiUrl: 'https://flag.example',
      apiKey: 'ck_f',
    });
    expect(readRegistryConnection(env, {}, stored)).toEqual({ apiUrl: 'https://market.example', apiKey: 'ck_m' });
    expect(readRegistryConnection({ SKILLZ_API_URL: 'https://skillz.example', SKILLZ_API_KEY: 'ck_s' }, {}, stored)).toEqual({
      apiUrl: 'https://skillz.example',
      apiKey: 'ck_s',
    });
    expect(readRegistryConnection({ MARKET_API_KEY: '  ' }, {}, stored)).toEqual(stored);
    expect(readRegistryConnection({})).toEqual({ apiUrl: DEFAULT_API_URL, apiKey: undefined });
  });

  it('refuses a URL that is not http(s), naming its source', () => {
    for (const [env, flags, source] of [
      [{ MARKET_API_URL: 'ftp://x' }, {}, 'MARKET_API_URL'],
      [{ SKILLZ_API_URL: 'not a url' }, {}, 'SKILLZ_API_URL'],
      [{}, { 'api-url': 'file:///etc' }, '--api-url'],
    ] as const) {
      const error = (() => {
        try {
          return readRegistryConnection(env, flags);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toStartWith(`${source} must be the registry's http(s) URL`);
    }
  });
});

describe('the rest of a client', () => {
  it('reads network, extra tokens (on the default network unless one is named) and the raw key', () => {
    expect(readClientChain({ MARKET_ASSETS: '0xa, 0xb,' })).toEqual({
      network: undefined,
      assets: [
        { network: DEFAULT_NETWORK, address: '0xa' },
        { network: DEFAULT_NETWORK, address: '0xb' },
      ],
      rpcUrl: undefined,
    });
    expect(readClientChain({ MARKET_NETWORK: 'eip155:84532', MARKET_ASSETS: '0xa' }, { asset: ['0xc'] }).assets).toEqual([
      { network: 'eip155:84532', address: '0xc' },
    ]);
    expect(readWalletKey({ SKILLZ_PRIVATE_KEY: '0x2' })).toBe('0x2');
    expect(readWalletKey({ MARKET_PRIVATE_KEY: '0x1', SKILLZ_PRIVATE_KEY: '0x2' })).toBe('0x1');
  });

  it('reads the other catalogues from --discovery, else MARKET_DISCOVERY, and refuses one that is not http(s)', () => {
    expect(readDiscovery({})).toEqual([]);
    expect(readDiscovery({ MARKET_DISCOVERY: 'https://a.example, http://127.0.0.1:4021' })).toEqual([
      'https://a.example',
      'http://127.0.0.1:4021',
    ]);
    expect(readDiscovery({ MARKET_DISCOVERY: 'https://a.example' }, { discovery: ['https://b.example'] })).toEqual(['https://b.example']);
    expect(() => readDiscovery({ MARKET_DISCOVERY: 'ftp://a.example' })).toThrow(ConfigError);
    expect(() => readDiscovery({}, { discovery: ['nope'] })).toThrow('--discovery');
  });

  it('keeps the login under XDG_CONFIG_HOME, else HOME/.config', () => {
    expect(readConfigDir({ XDG_CONFIG_HOME: '/xdg', HOME: '/home/a' })).toBe('/xdg/skill-market');
    expect(readConfigDir({ XDG_CONFIG_HOME: 'relative', HOME: '/home/a' })).toBe('/home/a/.config/skill-market');
  });

  it('refuses an unknown LOG_LEVEL for the skill server instead of ignoring it', () => {
    expect(readServeEnv({}).logLevel).toBe('info');
    expect(() => readServeEnv({ LOG_LEVEL: 'loud' })).toThrow('LOG_LEVEL must be one of');
  });

  it('reads the skill server’s receipt key from MARKET_RECEIPT_KEY, and none without it', () => {
    const key = `0x${'11'.repeat(32)}`;
    expect(readServeEnv({ MARKET_RECEIPT_KEY: key }).receiptKey).toBe(key);
    expect(readServeEnv({}).receiptKey).toBeUndefined();
  });

  it('reads the proxies whose X-Forwarded-For names a trial client from TRUSTED_PROXIES, none without it', () => {
    expect(readServeEnv({ TRUSTED_PROXIES: '10.0.0.2, ::1' }).trustedProxies).toEqual(['10.0.0.2', '::1']);
    expect(readServeEnv({}).trustedProxies).toEqual([]);
    expect(() => readServeEnv({ TRUSTED_PROXIES: 'proxy.example' })).toThrow('TRUSTED_PROXIES must list IP addresses');
  });
});
