import { describe, expect, it } from 'bun:test';
import { generatePrivateKey } from 'viem/accounts';
import { ConfigError, loadFacilitatorConfig } from '../../src/config';

const key = generatePrivateKey();
const load = (env: Record<string, string>) => loadFacilitatorConfig({ FACILITATOR_PRIVATE_KEY: key, ...env }, '/srv');

function configError(env: Record<string, string>): ConfigError {
  try {
    load(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('facilitator configuration', () => {
  it('defaults to Base mainnet, its public RPC and USDC, port 3001, the embedded database', () => {
    expect(load({})).toMatchObject({
      port: 3001,
      host: '0.0.0.0',
      network: 'eip155:8453',
      rpcUrl: 'https://mainnet.base.org',
      relayerPrivateKeys: [key],
      assets: ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
      receiptTimeoutMs: 10_000,
      pollIntervalMs: 250,
      reconcileIntervalMs: 5_000,
      database: { kind: 'embedded', dataDir: '/srv/.market/data' },
    });
  });

  it('settles one authorization per transaction unless FACILITATOR_BATCH_MAX asks for batches, and bounds both batch settings', () => {
    expect(load({})).toMatchObject({ batchMaxSize: 1, batchWaitMs: 100 });
    expect(load({ FACILITATOR_BATCH_MAX: '20', FACILITATOR_BATCH_MS: '250' })).toMatchObject({ batchMaxSize: 20, batchWaitMs: 250 });
    expect(configError({ FACILITATOR_BATCH_MAX: '0' }).message).toContain('FACILITATOR_BATCH_MAX');
    expect(configError({ FACILITATOR_BATCH_MAX: '201' }).message).toContain('FACILITATOR_BATCH_MAX');
    expect(configError({ FACILITATOR_BATCH_MS: 'soon' }).message).toContain('FACILITATOR_BATCH_MS');
  });

  it('reads live 402s every 5 minutes, of private addresses only in development, and bounds the refresh settings', () => {
    expect(load({})).toMatchObject({ discoveryRefreshMs: 300_000, discoveryTimeoutMs: 5_000, discoveryAllowPrivate: true });
    expect(load({ NODE_ENV: 'production' }).discoveryAllowPrivate).toBe(false);
    expect(load({ NODE_ENV: 'test' }).discoveryAllowPrivate).toBe(false);
    expect(
      load({
        FACILITATOR_DISCOVERY_REFRESH_MS: '60000',
        FACILITATOR_DISCOVERY_TIMEOUT_MS: '2000',
        FACILITATOR_DISCOVERY_ALLOW_PRIVATE: 'false',
      }),
    ).toMatchObject({ discoveryRefreshMs: 60_000, discoveryTimeoutMs: 2_000, discoveryAllowPrivate: false });
    expect(configError({ FACILITATOR_DISCOVERY_REFRESH_MS: '10' }).message).toContain('FACILITATOR_DISCOVERY_REFRESH_MS');
    expect(configError({ FACILITATOR_DISCOVERY_TIMEOUT_MS: 'soon' }).message).toContain('FACILITATOR_DISCOVERY_TIMEOUT_MS');
  });

  it('reads a relayer pool, extra assets (checksummed, deduplicated), a network by v1 name and its default RPC', () => {
    const second = generatePrivateKey();
    const token = '0x1111111111111111111111111111111111111111';
    const config = load({
      FACILITATOR_PRIVATE_KEY: `${key}, ${second}`,
      FACILITATOR_NETWORK: 'base-sepolia',
      FACILITATOR_ASSETS: `${token},${token}`,
      PORT: '4000',
      FACILITATOR_RECEIPT_TIMEOUT_MS: '0',
    });
    expect(config.relayerPrivateKeys).toEqual([key, second]);
    expect(config.network).toBe('eip155:84532');
    expect(config.rpcUrl).toBe('https://sepolia.base.org');
    expect(config.assets).toEqual(['0x036CbD53842c5426634e7929541eC2318f3dCF7e', token]);
    expect(config.port).toBe(4000);
    expect(config.receiptTimeoutMs).toBe(0);
  });

  it('needs FACILITATOR_RPC_URL and FACILITATOR_ASSETS on a chain it does not know', () => {
    expect(configError({ FACILITATOR_NETWORK: 'eip155:31337' }).variable).toBe('FACILITATOR_RPC_URL');
    expect(configError({ FACILITATOR_NETWORK: 'eip155:31337', FACILITATOR_RPC_URL: 'http://127.0.0.1:8545' }).variable).toBe(
      'FACILITATOR_ASSETS',
    );
  });

  it('names the variable of every bad value and never echoes a key', () => {
    const cases: [Record<string, string>, string][] = [
      [{ FACILITATOR_PRIVATE_KEY: '' }, 'FACILITATOR_PRIVATE_KEY'],
      [{ FACILITATOR_PRIVATE_KEY: key.slice(0, 40) }, 'FACILITATOR_PRIVATE_KEY'],
      [{ FACILITATOR_PRIVATE_KEY: `${key},${key}` }, 'FACILITATOR_PRIVATE_KEY'],
      [{ FACILITATOR_NETWORK: 'solana:mainnet' }, 'FACILITATOR_NETWORK'],
      [{ FACILITATOR_RPC_URL: 'ws://node' }, 'FACILITATOR_RPC_URL'],
      [{ FACILITATOR_ASSETS: '0x12' }, 'FACILITATOR_ASSETS'],
      [{ FACILITATOR_AUTHORIZER_KEY: key.slice(0, 40) }, 'FACILITATOR_AUTHORIZER_KEY'],
      [{ FACILITATOR_RECEIPT_TIMEOUT_MS: 'soon' }, 'FACILITATOR_RECEIPT_TIMEOUT_MS'],
      [{ FACILITATOR_POLL_INTERVAL_MS: '0' }, 'FACILITATOR_POLL_INTERVAL_MS'],
      [{ FACILITATOR_RECONCILE_INTERVAL_MS: '-5' }, 'FACILITATOR_RECONCILE_INTERVAL_MS'],
      [{ PORT: '70000' }, 'PORT'],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    ];
    for (const [env, variable] of cases) {
      const error = configError(env);
      expect(error.variable).toBe(variable);
      expect(error.message.startsWith(variable)).toBe(true);
      expect(error.message).not.toContain(key.slice(2, 20));
    }
  });
});
