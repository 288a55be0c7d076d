import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type Hex, numberToHex, parseEventLogs } from 'viem';
import {
  type LocalChain,
  type SignedAuthorization,
  type TestAccount,
  bytesArgs,
  signAuthorization,
  startChain,
  usdCoinAbi,
  vrsArgs,
} from '../support/chain';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
});
afterAll(() => chain.stop());

type Overload = 'v,r,s' | 'bytes';

/** The relayer submits the authorization, as a facilitator would; resolves to the receipt. */
async function submit(signed: SignedAuthorization, overload: Overload) {
  const hash = await chain.walletClient(chain.accounts.relayer).writeContract({
    address: chain.token.address,
    abi: usdCoinAbi,
    functionName: 'transferWithAuthorization',
    args: overload === 'bytes' ? bytesArgs(signed) : vrsArgs(signed),
  });
  return chain.publicClient.waitForTransactionReceipt({ hash });
}

const authorizationState = (authorizer: Hex, nonce: Hex) =>
  chain.publicClient.readContract({
    address: chain.token.address,
    abi: usdCoinAbi,
    functionName: 'authorizationState',
    args: [authorizer, nonce],
  });

const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000));

let payer: TestAccount;
beforeAll(async () => {
  payer = await chain.createAccount({ usdc: 10_000_000n });
});

describe('transferWithAuthorization', () => {
  for (const overload of ['v,r,s', 'bytes'] as const) {
    it(`moves exactly the signed value via the ${overload} overload and marks the nonce used`, async () => {
      const payee = await chain.createAccount();
      const before = await chain.balanceOf(payer.address);
      const signed = await signAuthorization(chain, payer, { to: payee.address, value: 1_234_567n });
      expect(await authorizationState(payer.address, signed.authorization.nonce)).toBe(false);

      const receipt = await submit(signed, overload);

      expect(receipt.status).toBe('success');
      expect(await chain.balanceOf(payer.address)).toBe(before - 1_234_567n);
      expect(await chain.balanceOf(payee.address)).toBe(1_234_567n);
      expect(await authorizationState(payer.address, signed.authorization.nonce)).toBe(true);
      const events = parseEventLogs({ abi: usdCoinAbi, logs: receipt.logs });
      expect(events.map((e) => e.eventName)).toEqual(['AuthorizationUsed', 'Transfer']);
      expect(events[0]?.args).toEqual({ authorizer: payer.address, nonce: signed.authorization.nonce });
      expect(events[1]?.args).toEqual({ from: payer.address, to: payee.address, value: 1_234_567n });
    });
  }

  it("rejects a reused nonce with 'authorization is used or canceled'", async () => {
    const signed = await signAuthorization(chain, payer, { to: chain.accounts.payee.address, value: 1n });
    await submit(signed, 'v,r,s');
    await expect(submit(signed, 'v,r,s')).rejects.toThrow('FiatTokenV2: authorization is used or canceled');
    await expect(submit(signed, 'bytes')).rejects.toThrow('FiatTokenV2: authorization is used or canceled');
  });

  it('mines a settlement that loses the race for its nonce as a reverted transaction', async () => {
    const signed = await signAuthorization(chain, payer, { to: chain.accounts.payee.address, value: 1n });
    await submit(signed, 'bytes');
    // A preset gas limit skips estimation, so the transaction is sent and reverts on chain.
    const hash = await chain.walletClient(chain.accounts.relayer).writeContract({
      address: chain.token.address,
      abi: usdCoinAbi,
      functionName: 'transferWithAuthorization',
      args: vrsArgs(signed),
      gas: 200_000n,
    });
    expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('reverted');
  });

  it("rejects an authorization whose validBefore has passed with 'authorization is expired'", async () => {
    const signed = await signAuthorization(chain, payer, {
      to: chain.accounts.payee.address,
      value: 1n,
      validBefore: nowSeconds() - 1n,
    });
    await expect(submit(signed, 'v,r,s')).rejects.toThrow('FiatTokenV2: authorization is expired');
  });

  it("rejects an authorization before validAfter with 'authorization is not yet valid'", async () => {
    const signed = await signAuthorization(chain, payer, {
      to: chain.accounts.payee.address,
      value: 1n,
      validAfter: nowSeconds() + 3600n,
      validBefore: nowSeconds() + 7200n,
    });
    await expect(submit(signed, 'bytes')).rejects.toThrow('FiatTokenV2: authorization is not yet valid');
  });

  it("accepts a not-yet-valid authorization once the chain's clock passes validAfter", async () => {
    // The chain's clock, not ours: anvil's can run a second behind the wall clock.
    const chainNow = (await chain.publicClient.getBlock()).timestamp;
    const validAfter = chainNow + 3600n;
    const signed = await signAuthorization(chain, payer, {
      to: chain.accounts.payee.address,
      value: 1n,
      validAfter,
      validBefore: validAfter + 3600n,
    });
    await expect(submit(signed, 'v,r,s')).rejects.toThrow('not yet valid');
    // Time travel persists for the whole chain; a snapshot revert puts the clock back for later tests.
    const snapshot = await chain.testClient.snapshot();
    try {
      await chain.testClient.setNextBlockTimestamp({ timestamp: validAfter + 1n });
      await chain.testClient.mine({ blocks: 1 });
      expect((await submit(signed, 'v,r,s')).status).toBe('success');
    } finally {
      await chain.testClient.revert({ id: snapshot });
    }
  });

  it("rejects a signature by someone other than `from` with 'invalid signature'", async () => {
    const mallory = await chain.createAccount();
    const signed = await signAuthorization(chain, mallory, { from: payer.address, to: mallory.address, value: 1n });
    await expect(submit(signed, 'v,r,s')).rejects.toThrow('FiatTokenV2: invalid signature');
    await expect(submit(signed, 'bytes')).rejects.toThrow('FiatTokenV2: invalid signature');
  });

  it("rejects a value other than the signed one with 'invalid signature'", async () => {
    const signed = await signAuthorization(chain, payer, { to: chain.accounts.payee.address, value: 5n });
    const tampered = { ...signed, authorization: { ...signed.authorization, value: 6n } };
    await expect(submit(tampered, 'v,r,s')).rejects.toThrow('FiatTokenV2: invalid signature');
  });

  it("rejects a malleable high-s signature and a bad v like OpenZeppelin's ECDSA", async () => {
    const signed = await signAuthorization(chain, payer, { to: chain.accounts.payee.address, value: 1n });
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const highS = numberToHex(n - BigInt(signed.s), { size: 32 });
    const flipped = { ...signed, s: highS, v: signed.v === 27 ? 28 : 27 }; // recovers the same signer
    await expect(submit(flipped, 'v,r,s')).rejects.toThrow("ECRecover: invalid signature 's' value");
    await expect(submit({ ...signed, v: 29 }, 'v,r,s')).rejects.toThrow("ECRecover: invalid signature 'v' value");
    await expect(submit({ ...signed, signature: `${signed.signature}00` }, 'bytes')).rejects.toThrow('ECRecover: invalid signature length');
    expect(await authorizationState(payer.address, signed.authorization.nonce)).toBe(false);
  });

  it("rejects more than the payer holds with 'transfer amount exceeds balance'", async () => {
    const poor = await chain.createAccount({ usdc: 10n });
    const signed = await signAuthorization(chain, poor, { to: chain.accounts.payee.address, value: 11n });
    await expect(submit(signed, 'bytes')).rejects.toThrow('ERC20: transfer amount exceeds balance');
    expect(await authorizationState(poor.address, signed.authorization.nonce)).toBe(false);
  });
});

describe('ERC-1271 smart wallet payer', () => {
  it("pays via the bytes overload with its owner's signature", async () => {
    const { address, owner } = chain.smartWallet;
    const to = (await chain.createAccount()).address;
    const before = await chain.balanceOf(address);
    const signed = await signAuthorization(chain, owner, { from: address, to, value: 250_000n });
    expect((await submit(signed, 'bytes')).status).toBe('success');
    expect(await chain.balanceOf(address)).toBe(before - 250_000n);
    expect(await chain.balanceOf(to)).toBe(250_000n);
    expect(await authorizationState(address, signed.authorization.nonce)).toBe(true);
  });

  it('is refused when someone other than the owner signs', async () => {
    const stranger = await chain.createAccount();
    const signed = await signAuthorization(chain, stranger, { from: chain.smartWallet.address, to: stranger.address, value: 1n });
    await expect(submit(signed, 'bytes')).rejects.toThrow('FiatTokenV2: invalid signature');
  });
});

describe('cancelAuthorization', () => {
  it("burns a nonce so a later transfer with it fails as 'used or canceled'", async () => {
    const signed = await signAuthorization(chain, payer, { to: chain.accounts.payee.address, value: 1n });
    const cancel = await payer.signTypedData({
      domain: chain.domain,
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce: signed.authorization.nonce },
    });
    const hash = await chain.walletClient(chain.accounts.relayer).writeContract({
      address: chain.token.address,
      abi: usdCoinAbi,
      functionName: 'cancelAuthorization',
      args: [payer.address, signed.authorization.nonce, cancel],
    });
    expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await authorizationState(payer.address, signed.authorization.nonce)).toBe(true);
    await expect(submit(signed, 'v,r,s')).rejects.toThrow('FiatTokenV2: authorization is used or canceled');
  });
});
