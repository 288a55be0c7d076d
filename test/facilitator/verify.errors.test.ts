import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type Hex, numberToHex } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { type LocalChain, startChain, usdCoinAbi, vrsArgs, signAuthorization } from '../support/chain';
import { oneDatabase } from '../support/database';
import {
  PRICE,
  type FacilitatorFixture,
  paymentBody,
  requirementsFor,
  startFacilitatorFixture,
  v2Body,
  wireAuthorization,
} from '../support/facilitator';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const now = () => BigInt(Math.floor(Date.now() / 1000));

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 2 });
}, 60_000);
afterAll(() => chain.stop());

/** The same signature with s' = n - s and the other recovery byte: it recovers, the token refuses it. */
function highS(signature: Hex): Hex {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  return `${signature.slice(0, 66)}${numberToHex(N - s, { size: 32 }).slice(2)}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
}

for (const kind of oneDatabase) {
  describe(`verify refuses bad payments with the reference reasons (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
    }, 60_000);
    afterAll(() => f.close());

    const payee = () => chain.accounts.payee.address;
    const expectInvalid = async (body: unknown, reason: string) => {
      const verdict = await f.facilitator.verify(body);
      expect(verdict).toMatchObject({ isValid: false, invalidReason: reason });
      expect(verdict.invalidMessage).toBeString();
      return verdict;
    };

    it('answers invalid_exact_evm_payload_authorization_value_mismatch when the authorization moves another amount', async () => {
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee()), { value: PRICE - 1n });
      const verdict = await expectInvalid(body, 'invalid_exact_evm_payload_authorization_value_mismatch');
      expect(verdict.payer).toBe(chain.accounts.payer.address);
    });

    it('answers invalid_exact_evm_recipient_mismatch when the authorization pays someone other than payTo', async () => {
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee()), {
        to: chain.accounts.payees[1]!.address,
      });
      await expectInvalid(body, 'invalid_exact_evm_recipient_mismatch');
    });

    it('answers invalid_exact_evm_network_mismatch for another network, or a payment for other terms than required', async () => {
      const elsewhere = requirementsFor(chain, payee(), { network: 'eip155:8453' });
      await expectInvalid(await paymentBody(chain, chain.accounts.payer, elsewhere), 'invalid_exact_evm_network_mismatch');
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee()));
      body.paymentPayload.accepted = elsewhere;
      await expectInvalid(body, 'invalid_exact_evm_network_mismatch');
    });

    it('answers invalid_exact_evm_payload_authorization_valid_before when expired or expiring within 6 s', async () => {
      const requirements = requirementsFor(chain, payee());
      await expectInvalid(
        await paymentBody(chain, chain.accounts.payer, requirements, { validBefore: now() - 1n }),
        'invalid_exact_evm_payload_authorization_valid_before',
      );
      await expectInvalid(
        await paymentBody(chain, chain.accounts.payer, requirements, { validBefore: now() + 3n }),
        'invalid_exact_evm_payload_authorization_valid_before',
      );
    });

    it('answers invalid_exact_evm_payload_authorization_valid_after when not yet valid', async () => {
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee()), {
        validAfter: now() + 3600n,
        validBefore: now() + 7200n,
      });
      await expectInvalid(body, 'invalid_exact_evm_payload_authorization_valid_after');
    });

    it('accepts validAfter "0" as the reference v2 client signs it', async () => {
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee()), { validAfter: 0n });
      expect(await f.facilitator.verify(body)).toEqual({ isValid: true, payer: chain.accounts.payer.address });
    });

    it('answers invalid_exact_evm_signature for a signature by someone else, a tampered message or a high-s signature', async () => {
      const requirements = requirementsFor(chain, payee());
      const stranger = privateKeyToAccount(generatePrivateKey());
      await expectInvalid(
        await paymentBody(chain, stranger, requirements, { from: chain.accounts.payer.address }),
        'invalid_exact_evm_signature',
      );

      const tampered = await paymentBody(chain, chain.accounts.payer, requirements);
      tampered.paymentPayload.payload.authorization.nonce = `0x${'ab'.repeat(32)}`;
      await expectInvalid(tampered, 'invalid_exact_evm_signature');

      const malleated = await paymentBody(chain, chain.accounts.payer, requirements);
      malleated.paymentPayload.payload.signature = highS(malleated.paymentPayload.payload.signature);
      await expectInvalid(malleated, 'invalid_exact_evm_signature');
    });

    it('answers invalid_exact_evm_signature for a smart wallet whose owner did not sign', async () => {
      const stranger = privateKeyToAccount(generatePrivateKey());
      const body = await paymentBody(chain, stranger, requirementsFor(chain, payee()), { from: chain.smartWallet.address });
      await expectInvalid(body, 'invalid_exact_evm_signature');
    });

    it('answers invalid_exact_evm_insufficient_balance when the payer cannot cover the price', async () => {
      const poor = await chain.createAccount({ usdc: PRICE - 1n });
      await expectInvalid(await paymentBody(chain, poor, requirementsFor(chain, payee())), 'invalid_exact_evm_insufficient_balance');
    });

    it('answers invalid_exact_evm_nonce_already_used for a replayed verify, and for verify or settle after settle', async () => {
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee()));
      expect((await f.facilitator.verify(body)).isValid).toBe(true);
      await expectInvalid(body, 'invalid_exact_evm_nonce_already_used');
      expect((await f.facilitator.settle(body)).success).toBe(true);
      await expectInvalid(body, 'invalid_exact_evm_nonce_already_used');
      expect(await f.facilitator.settle(body)).toMatchObject({
        success: false,
        errorReason: 'invalid_exact_evm_nonce_already_used',
        transaction: '',
      });
    });

    it('refuses to settle a different payload for a verified authorization (same key, other signature bytes)', async () => {
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee()));
      expect((await f.facilitator.verify(body)).isValid).toBe(true);
      const variant = structuredClone(body);
      variant.paymentPayload.payload.signature = highS(body.paymentPayload.payload.signature);
      expect(await f.facilitator.settle(variant)).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
    });

    it('answers invalid_exact_evm_nonce_already_used when the authorization was already used on chain elsewhere', async () => {
      const requirements = requirementsFor(chain, payee());
      const signed = await signAuthorization(chain, chain.accounts.payer, { to: payee(), value: PRICE });
      const hash = await chain.walletClient(chain.accounts.payers[1]!).writeContract({
        address: chain.token.address,
        abi: usdCoinAbi,
        functionName: 'transferWithAuthorization',
        args: vrsArgs(signed),
      });
      await chain.publicClient.waitForTransactionReceipt({ hash });
      const body = v2Body(requirements, wireAuthorization(signed.authorization), signed.signature);
      await expectInvalid(body, 'invalid_exact_evm_nonce_already_used');
      expect(await f.facilitator.settle(body)).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
    });

    it('checks the EIP-712 domain: missing, wrong name, wrong version', async () => {
      const payer = chain.accounts.payer;
      const missing = await paymentBody(chain, payer, requirementsFor(chain, payee()));
      delete missing.paymentRequirements.extra;
      await expectInvalid(missing, 'invalid_exact_evm_missing_eip712_domain');
      await expectInvalid(
        await paymentBody(chain, payer, requirementsFor(chain, payee(), { extra: { name: 'USDC', version: '2' } })),
        'invalid_exact_evm_token_name_mismatch',
      );
      await expectInvalid(
        await paymentBody(chain, payer, requirementsFor(chain, payee(), { extra: { name: 'USD Coin', version: '1' } })),
        'invalid_exact_evm_token_version_mismatch',
      );
    });

    it('refuses assets it does not settle and schemes other than exact', async () => {
      const other = privateKeyToAccount(generatePrivateKey()).address;
      await expectInvalid(
        await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee(), { asset: other })),
        'invalid_exact_evm_asset_not_allowed',
      );
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee()));
      const upto = { ...body, paymentRequirements: { ...body.paymentRequirements, scheme: 'upto' } };
      await expectInvalid(upto, 'invalid_exact_evm_scheme');
    });

    it('settle gives the same reasons, sends nothing and moves no money', async () => {
      const requirements = requirementsFor(chain, payee());
      const before = await chain.balanceOf(payee());
      const wrongAmount = await paymentBody(chain, chain.accounts.payer, requirements, { value: PRICE + 1n });
      expect(await f.facilitator.settle(wrongAmount)).toEqual({
        success: false,
        errorReason: 'invalid_exact_evm_payload_authorization_value_mismatch',
        errorMessage: expect.any(String),
        transaction: '',
        network: chain.network,
        payer: chain.accounts.payer.address,
      });
      const poor = await chain.createAccount({ usdc: 1n });
      expect(await f.facilitator.settle(await paymentBody(chain, poor, requirements))).toMatchObject({
        success: false,
        errorReason: 'invalid_exact_evm_insufficient_balance',
        transaction: '',
      });
      expect(await chain.balanceOf(payee())).toBe(before);
    });

    it('settle answers insufficient balance when the payer spent the money between verify and settle', async () => {
      const payer = await chain.createAccount({ usdc: PRICE });
      const body = await paymentBody(chain, payer, requirementsFor(chain, payee()));
      expect((await f.facilitator.verify(body)).isValid).toBe(true);
      const hash = await chain.walletClient(payer).writeContract({
        address: chain.token.address,
        abi: usdCoinAbi,
        functionName: 'transfer',
        args: [chain.accounts.payees[1]!.address, PRICE],
      });
      await chain.publicClient.waitForTransactionReceipt({ hash });
      // Verify simulated the transfer, so settle sends it without a second simulation: it reverts
      // on chain, and the revert is recorded with its cause.
      const answer = await f.facilitator.settle(body);
      expect(answer).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_insufficient_balance' });
      expect(answer.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await f.facilitator.receipt(answer.transaction)).toMatchObject({ status: 'reverted', payer: payer.address });
      // The claim is spent: a retry of the same proof is a replay.
      expect(await f.facilitator.settle(body)).toMatchObject({ errorReason: 'invalid_exact_evm_nonce_already_used' });
    });
  });
}
