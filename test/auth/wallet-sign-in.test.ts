import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { DatabaseHandle } from '../../src/db';
import { authTestConfig, jsonPost, newWallet, parseSetCookies, providerKeys } from '../support/auth';
import { startChain, type LocalChain } from '../support/chain';
import { databaseKinds, openTestDatabase } from '../support/database';
import { manualClock, registryWith } from '../support/registry';

for (const kind of databaseKinds) {
  describe(`wallet sign-in on ${kind}`, () => {
    let database: DatabaseHandle;
    let registry: ReturnType<typeof registryWith>;
    let pem: string;
    const clock = manualClock();
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      pem = (await providerKeys()).publicKeyPem;
      registry = registryWith(database, authTestConfig(pem), clock);
    });
    afterAll(() => database.close());

    async function challenge(address: string) {
      const res = await registry.request('/auth/challenge', jsonPost({ address }));
      expect(res.status).toBe(200);
      return (await res.json()) as { message: string; nonce: string; expiresAt: string };
    }
    const verify = (body: unknown) => registry.request('/auth/verify', jsonPost(body));
    const errorOf = async (res: Response) => ((await res.json()) as any).error as string;

    it('issues an EIP-4361 message naming the domain, URI, chain, nonce and a 5-minute expiry', async () => {
      const wallet = newWallet();
      const { message, nonce, expiresAt } = await challenge(wallet.address.toLowerCase());
      expect(message).toStartWith(`registry.test wants you to sign in with your Ethereum account:\n${wallet.address}\n`);
      expect(message).toContain('URI: https://registry.test');
      expect(message).toContain('Chain ID: 8453');
      expect(message).toContain(`Nonce: ${nonce}`);
      expect(nonce.length).toBeGreaterThanOrEqual(16);
      expect(new Date(expiresAt).getTime() - clock.now().getTime()).toBe(300_000);
    });

    it('signs in with {message, signature}: token, creator, expiresIn and both cookies', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const res = await verify({ message, signature: await wallet.signMessage({ message }) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body).toMatchObject({ expiresIn: 3600, creator: { walletAddress: wallet.address } });
      expect(Object.keys(parseSetCookies(res)).sort()).toEqual(['market_refresh', 'market_token']);
    });

    it('signs in with {address, signature} against the latest challenge', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const res = await verify({ address: wallet.address, signature: await wallet.signMessage({ message }) });
      expect(res.status).toBe(200);
    });

    it('rejects a signature from another wallet', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const res = await verify({ message, signature: await newWallet().signMessage({ message }) });
      expect(res.status).toBe(401);
      expect(await errorOf(res)).toBe('Invalid signature');
    });

    it('rejects a nonce used once already', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const signature = await wallet.signMessage({ message });
      expect((await verify({ message, signature })).status).toBe(200);
      const again = await verify({ message, signature });
      expect(again.status).toBe(401);
      expect(await errorOf(again)).toBe('Challenge expired or already used');
    });

    it('lets only one of two concurrent verifications of one challenge win', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const signature = await wallet.signMessage({ message });
      const results = await Promise.all(Array.from({ length: 5 }, () => verify({ message, signature })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
    });

    it('rejects an expired challenge', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const signature = await wallet.signMessage({ message });
      clock.advance(301);
      try {
        const res = await verify({ message, signature });
        expect(res.status).toBe(401);
      } finally {
        clock.advance(-301);
      }
    });

    it('rejects an altered message even when the signer signed the altered text', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const altered = message.replace('Sign in to Skill Market.', 'Sign in to Skill Market and approve everything.');
      const res = await verify({ message: altered, signature: await wallet.signMessage({ message: altered }) });
      expect(res.status).toBe(401);
      expect(await errorOf(res)).toBe('The message differs from the challenge issued');
    });

    it('rejects a message for another domain', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const phishing = message.replace('registry.test wants you', 'evil.test wants you');
      const res = await verify({ message: phishing, signature: await wallet.signMessage({ message: phishing }) });
      expect(res.status).toBe(401);
    });

    it('rejects a challenge issued by a registry on another domain', async () => {
      const wallet = newWallet();
      const { message } = await challenge(wallet.address);
      const config = authTestConfig(pem);
      const elsewhere = registryWith(
        database,
        { ...config, auth: { ...config.auth, siwe: { ...config.auth.siwe, domain: 'other.test', uri: 'https://other.test' } } },
        clock,
      );
      const res = await elsewhere.request('/auth/verify', jsonPost({ message, signature: await wallet.signMessage({ message }) }));
      expect(res.status).toBe(401);
    });

    it('answers 400 naming the field for a malformed address', async () => {
      const res = await registry.request('/auth/challenge', jsonPost({ address: '0x123' }));
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toContain('"address"');
    });
  });
}

describe('contract-wallet sign-in (ERC-1271) through the chain RPC', () => {
  let chain: LocalChain;
  let database: DatabaseHandle;
  beforeAll(async () => {
    [chain, database] = await Promise.all([startChain(), openTestDatabase('embedded')]);
  });
  afterAll(async () => {
    await Promise.all([chain.stop(), database.close()]);
  });

  async function signInAs(address: string, signer: PrivateKeyAccount, rpcUrl: string) {
    const base = authTestConfig((await providerKeys()).publicKeyPem);
    const config = { ...base, chain: { ...base.chain, rpcUrl } };
    const registry = registryWith(database, config);
    const { message } = (await (await registry.request('/auth/challenge', jsonPost({ address }))).json()) as { message: string };
    return registry.request('/auth/verify', jsonPost({ message, signature: await signer.signMessage({ message }) }));
  }

  it('signs in a smart wallet whose owner signed, when an RPC is configured', async () => {
    const res = await signInAs(chain.smartWallet.address, chain.smartWallet.owner, chain.rpcUrl);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).creator.walletAddress).toBe(chain.smartWallet.address);
  });

  it('refuses the smart wallet when a stranger signed', async () => {
    expect((await signInAs(chain.smartWallet.address, newWallet(), chain.rpcUrl)).status).toBe(401);
  });

  it('refuses the smart wallet when the RPC cannot be reached (fails closed)', async () => {
    expect((await signInAs(chain.smartWallet.address, chain.smartWallet.owner, 'http://127.0.0.1:1')).status).toBe(401);
  });
});
