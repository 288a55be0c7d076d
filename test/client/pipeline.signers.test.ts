/**
 * One signer abstraction for every key holder: a 0x private key, a viem account, an account
 * opened from a keystore file, and a browser wallet over EIP-1193 (a provider that signs with a
 * real key, as an injected wallet would). Each pays the same call through the pipeline, and each
 * signs `exact`'s EIP-3009 authorization so that the payer's own address recovers from it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address, Hex, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { eip1193Signer, exactScheme, PaymentPipeline, toPaymentSigner, type PaymentSigner, type Skill } from 'skill-market/client';
import { encryptKeystore, loadSpendingWallet, writeKeystoreFile } from 'skill-market/wallet';
import { buildPaymentTerms, getKnownNetwork, recoverAuthorizationSigner, type PaymentPayloadV2 } from 'skill-market/x402';
import { TALLY_NETWORK } from '../support/schemes/tally';
import { tallyListing, tallyScheme } from '../support/schemes/tally-client';
import { startTallyServer, type TallyServer } from './support/tally';

const CHAIN_ID = 84532;
let folder: string;
let server: TallyServer;
let skill: Skill;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'pipeline-signers-'));
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  server = startTallyServer(payTo, 1_000n);
  skill = tallyListing(server.url, payTo, 1_000n);
});
afterAll(async () => {
  server?.close();
  await rm(folder, { recursive: true, force: true });
});

/** An injected browser wallet holding `account`, on `chainId` until asked to switch; it can decline the next signature. */
function browserWallet(account: LocalAccount, chainId: number) {
  const wallet = {
    chainId,
    methods: [] as string[],
    declineNext: false,
    async request({ method, params }: { method: string; params?: unknown[] | Record<string, unknown> }): Promise<unknown> {
      wallet.methods.push(method);
      const list = (params ?? []) as unknown[];
      switch (method) {
        case 'eth_chainId':
          return `0x${wallet.chainId.toString(16)}`;
        case 'wallet_switchEthereumChain':
          wallet.chainId = Number.parseInt((list[0] as { chainId: string }).chainId, 16);
          return null;
        case 'eth_signTypedData_v4': {
          if (wallet.declineNext) {
            wallet.declineNext = false;
            throw Object.assign(new Error('User rejected the request.'), { code: 4001 });
          }
          const [address, json] = list as [string, string];
          if (address.toLowerCase() !== account.address.toLowerCase()) throw new Error('asked to sign for another address');
          const { domain, types, primaryType, message } = JSON.parse(json);
          const { EIP712Domain: _, ...rest } = types;
          return account.signTypedData({ domain, types: rest, primaryType, message });
        }
        default:
          throw new Error(`unexpected ${method}`);
      }
    },
  };
  return wallet;
}

async function keystoreAccount(key: Hex): Promise<LocalAccount> {
  const path = join(folder, `${crypto.randomUUID()}.json`);
  await writeKeystoreFile(path, await encryptKeystore(key, 'a long passphrase', { scrypt: { n: 1024 } }));
  return loadSpendingWallet({ keystorePath: path, passphrase: 'a long passphrase' });
}

const variants: [string, (key: Hex) => Promise<PaymentSigner>][] = [
  ['a 0x private key', async (key) => toPaymentSigner(key)],
  ['a viem account', async (key) => toPaymentSigner(privateKeyToAccount(key))],
  ['an account opened from a keystore file', async (key) => toPaymentSigner(await keystoreAccount(key))],
  [
    'a browser wallet over EIP-1193',
    async (key) => eip1193Signer(browserWallet(privateKeyToAccount(key), CHAIN_ID), privateKeyToAccount(key).address),
  ],
];

describe('every signer', () => {
  for (const [what, signerOf] of variants) {
    it(`pays through the pipeline and signs exact's authorization as the payer: ${what}`, async () => {
      const key = generatePrivateKey();
      const address: Address = privateKeyToAccount(key).address;
      const signer = await signerOf(key);
      expect(signer.address).toBe(address);

      const { receipt } = await new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tallyScheme()], signer }).call(skill, {});
      expect(receipt).toMatchObject({ payer: address });
      expect(server.proofs.at(-1)).toEqual({ payer: address.toLowerCase(), total: '1000' });

      const requirements = buildPaymentTerms({
        amount: 1_000n,
        payTo: skill.paymentAddress,
        network: TALLY_NETWORK,
        asset: getKnownNetwork(TALLY_NETWORK)!.usdc,
        resourceUrl: server.url,
      }).requirements;
      const asset = { network: TALLY_NETWORK, ...getKnownNetwork(TALLY_NETWORK)!.usdc };
      const signed = await exactScheme().sign({ requirements, asset }, signer, { resource: { url: server.url } });
      const payload = signed.payload as PaymentPayloadV2;
      expect(await recoverAuthorizationSigner(payload.payload, requirements)).toBe(address);
      expect(signed.reference).toBe(payload.payload.authorization.nonce);
    });
  }
});

describe('a browser wallet', () => {
  it('is asked to switch to the chain the typed data names before it signs, and only when it is elsewhere', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = browserWallet(account, 8453);
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [tallyScheme()],
      signer: eip1193Signer(wallet, account.address),
    });
    await pipeline.call(skill, {});
    expect(wallet.methods).toEqual(['eth_chainId', 'wallet_switchEthereumChain', 'eth_signTypedData_v4']);
    await pipeline.call(skill, {});
    expect(wallet.methods.slice(3)).toEqual(['eth_chainId', 'eth_signTypedData_v4']);
  });

  it("that declines rejects the call with the wallet's error: nothing sent, the budget released", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = browserWallet(account, CHAIN_ID);
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [tallyScheme()],
      signer: eip1193Signer(wallet, account.address),
      budget: 5_000n,
    });
    const proofs = server.proofs.length;
    wallet.declineNext = true;
    const error = await pipeline.call(skill, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 4001 });
    expect(server.proofs.length).toBe(proofs);
    expect(pipeline.spending).toMatchObject({ spent: 0n, reserved: 0n, remaining: 5_000n });
  });
});

describe('a wallet that is neither', () => {
  it('is refused at once, without echoing what was given', () => {
    const secret = `0x${'ab'.repeat(31)}`;
    expect(() => toPaymentSigner(secret)).toThrow(TypeError);
    expect(() => toPaymentSigner(secret)).not.toThrow(secret);
    expect(() => toPaymentSigner({ address: '0x1234' } as never)).toThrow('an account with an address and signTypedData()');
  });
});
