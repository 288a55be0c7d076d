/**
 * Permit2 and the x402 upto proxy on anvil, driven with viem signatures: a payer signs a maximum, the
 * facilitator named in the witness settles less and exactly that moves; what the contracts refuse
 * (more than the maximum, an expired deadline, a spent nonce, an altered witness, another caller,
 * an early settle, a missing allowance) each with its custom error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { uptoTypedData } from 'skill-market/x402';
import { PERMIT2_ADDRESS, permit2Abi } from '../../../src/chain/upto';
import { type LocalChain, startChain } from '../../support/chain';
import { approvePermit2, signUpto, uptoSettle, uptoSettleArgs, uptoSettleRevert } from '../../support/chain/upto';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
});
afterAll(() => chain.stop());

/** A payer holding `usdc` who approved Permit2, a fresh payee, and the relayer as the facilitator. */
async function parties(usdc = 50_000n) {
  const payer = await chain.createAccount({ usdc });
  await approvePermit2(chain, payer);
  const payee = await chain.createAccount();
  return { payer, payee, facilitator: chain.accounts.relayer };
}

describe('x402UptoPermit2Proxy settles', () => {
  it('less than the signed maximum: exactly the settled amount moves, and the nonce is spent', async () => {
    const { payer, payee, facilitator } = await parties();
    const signed = await signUpto(chain, payer, { max: 10_000n, to: payee.address, facilitator: facilitator.address });
    expect([await chain.balanceOf(payer.address), await chain.balanceOf(payee.address)]).toEqual([50_000n, 0n]);

    await uptoSettle(chain, facilitator, uptoSettleArgs(signed, 3_721n));

    expect([await chain.balanceOf(payer.address), await chain.balanceOf(payee.address)]).toEqual([46_279n, 3_721n]);
    const nonce = BigInt(signed.authorization.nonce);
    const word = await chain.publicClient.readContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: 'nonceBitmap',
      args: [payer.address, nonce >> 8n],
    });
    expect(word & (1n << (nonce & 255n))).not.toBe(0n);
  });

  it('the full maximum, and nothing from a maximum of zero', async () => {
    const { payer, payee, facilitator } = await parties();
    await uptoSettle(
      chain,
      facilitator,
      uptoSettleArgs(await signUpto(chain, payer, { max: 10_000n, to: payee.address, facilitator: facilitator.address }), 10_000n),
    );
    await uptoSettle(
      chain,
      facilitator,
      uptoSettleArgs(await signUpto(chain, payer, { max: 0n, to: payee.address, facilitator: facilitator.address }), 0n),
    );
    expect([await chain.balanceOf(payer.address), await chain.balanceOf(payee.address)]).toEqual([40_000n, 10_000n]);
  });
});

describe('x402UptoPermit2Proxy refuses', () => {
  it('more than the signed maximum', async () => {
    const { payer, payee, facilitator } = await parties();
    const signed = await signUpto(chain, payer, { max: 10_000n, to: payee.address, facilitator: facilitator.address });
    expect(await uptoSettleRevert(chain, facilitator.address, uptoSettleArgs(signed, 10_001n))).toEqual({
      errorName: 'AmountExceedsPermitted',
      args: [],
    });
  });

  it('an authorization past its deadline', async () => {
    const { payer, payee, facilitator } = await parties();
    const latest = (await chain.publicClient.getBlock()).timestamp;
    const signed = await signUpto(chain, payer, {
      max: 10_000n,
      to: payee.address,
      facilitator: facilitator.address,
      deadline: latest - 1n,
    });
    expect(await uptoSettleRevert(chain, facilitator.address, uptoSettleArgs(signed, 1_000n))).toEqual({
      errorName: 'SignatureExpired',
      args: [latest - 1n],
    });
  });

  it('a nonce already spent, by the same authorization or another one signed with it', async () => {
    const { payer, payee, facilitator } = await parties();
    const signed = await signUpto(chain, payer, { max: 10_000n, to: payee.address, facilitator: facilitator.address });
    await uptoSettle(chain, facilitator, uptoSettleArgs(signed, 1_000n));
    expect(await uptoSettleRevert(chain, facilitator.address, uptoSettleArgs(signed, 1_000n))).toEqual({
      errorName: 'InvalidNonce',
      args: [],
    });
    const again = await signUpto(chain, payer, {
      max: 5_000n,
      to: payee.address,
      facilitator: facilitator.address,
      nonce: signed.authorization.nonce,
    });
    expect(await uptoSettleRevert(chain, facilitator.address, uptoSettleArgs(again, 1_000n))).toEqual({
      errorName: 'InvalidNonce',
      args: [],
    });
    expect(await chain.balanceOf(payee.address)).toBe(1_000n);
  });

  it('a witness other than the signed one, a signature of someone else, or one for another spender', async () => {
    const { payer, payee, facilitator } = await parties();
    const stranger = await chain.createAccount();
    const signed = await signUpto(chain, payer, { max: 10_000n, to: payee.address, facilitator: facilitator.address });
    const invalid = { errorName: 'InvalidSignature', args: [] };
    expect(await uptoSettleRevert(chain, facilitator.address, uptoSettleArgs(signed, 1_000n, { to: stranger.address }))).toEqual(invalid);
    expect(await uptoSettleRevert(chain, stranger.address, uptoSettleArgs(signed, 1_000n, { facilitator: stranger.address }))).toEqual(
      invalid,
    );
    const byStranger = { ...signed, signature: await stranger.signTypedData(uptoTypedData(signed.authorization, chain.chainId)) };
    expect(await uptoSettleRevert(chain, facilitator.address, uptoSettleArgs(byStranger, 1_000n))).toEqual(invalid);
    const otherSpender = await signUpto(chain, payer, {
      max: 10_000n,
      to: payee.address,
      facilitator: facilitator.address,
      spender: stranger.address,
    });
    expect(await uptoSettleRevert(chain, facilitator.address, uptoSettleArgs(otherSpender, 1_000n))).toEqual(invalid);
  });

  it('a caller other than the facilitator in the witness, and a settle before validAfter', async () => {
    const { payer, payee, facilitator } = await parties();
    const stranger = await chain.createAccount();
    const signed = await signUpto(chain, payer, { max: 10_000n, to: payee.address, facilitator: facilitator.address });
    expect(await uptoSettleRevert(chain, stranger.address, uptoSettleArgs(signed, 1_000n))).toEqual({
      errorName: 'UnauthorizedFacilitator',
      args: [],
    });
    const latest = (await chain.publicClient.getBlock()).timestamp;
    const early = await signUpto(chain, payer, {
      max: 10_000n,
      to: payee.address,
      facilitator: facilitator.address,
      validAfter: latest + 3_600n,
    });
    expect(await uptoSettleRevert(chain, facilitator.address, uptoSettleArgs(early, 1_000n))).toEqual({
      errorName: 'PaymentTooEarly',
      args: [],
    });
  });

  it('a payer who has not approved Permit2 on the token', async () => {
    const payer = await chain.createAccount({ usdc: 50_000n });
    const payee = await chain.createAccount();
    const signed = await signUpto(chain, payer, { max: 10_000n, to: payee.address, facilitator: chain.accounts.relayer.address });
    expect(await uptoSettleRevert(chain, chain.accounts.relayer.address, uptoSettleArgs(signed, 1_000n))).toEqual({
      errorName: 'Error',
      args: ['ERC20: transfer amount exceeds allowance'],
    });
    expect(await chain.balanceOf(payer.address)).toBe(50_000n);
  });
});
