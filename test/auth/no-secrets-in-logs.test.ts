import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { DatabaseHandle } from '../../src/db';
import { authTestConfig, bearer, createKey, jsonPost, newWallet, providerKeys, providerToken } from '../support/auth';
import { openTestDatabase } from '../support/database';
import { registryWith } from '../support/registry';

describe('logs', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase('embedded');
  });
  afterAll(() => database.close());

  it('never contain a key, token, refresh token or signature, whatever the flow', async () => {
    const keys = await providerKeys();
    const config = authTestConfig(keys.publicKeyPem, { logLevel: 'debug' });
    const registry = registryWith(database, config);
    const secrets: string[] = [];

    const wallet = newWallet();
    const { message } = (await (await registry.request('/auth/challenge', jsonPost({ address: wallet.address }))).json()) as any;
    const signature = await wallet.signMessage({ message });
    secrets.push(signature);
    const session = (await (await registry.request('/auth/verify', jsonPost({ message, signature }))).json()) as any;
    secrets.push(session.token, session.refreshToken);
    await registry.request('/auth/verify', jsonPost({ message, signature }));
    const refreshed = (await (await registry.request('/auth/refresh', jsonPost({ refreshToken: session.refreshToken }))).json()) as any;
    secrets.push(refreshed.token, refreshed.refreshToken);
    await registry.request('/auth/refresh', jsonPost({ refreshToken: session.refreshToken }));
    const providerJwt = await providerToken(keys.privateKey, { wallet: newWallet().address });
    secrets.push(providerJwt);
    const provider = (await (await registry.request('/auth/privy', { method: 'POST', headers: bearer(providerJwt) })).json()) as any;
    secrets.push(provider.token, provider.refreshToken);
    const apiKey = await createKey(registry.request, provider.token);
    secrets.push(apiKey.key);
    await registry.request('/creators/me', { headers: bearer(apiKey.key) });
    await registry.request(`/creators/me?token=${apiKey.key}`, { headers: { cookie: `market_token=${provider.token}` } });
    await registry.request('/creators/me', { headers: bearer(`${apiKey.key}x`) });

    await registry.settled(); // every request's access-log line is written
    const text = JSON.stringify(registry.logs);
    expect(registry.logs.filter((l) => l.msg === 'request').length).toBeGreaterThanOrEqual(10);
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(20);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(-24));
    }
  });
});
