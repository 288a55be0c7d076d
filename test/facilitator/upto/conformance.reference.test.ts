/**
 * The upto scheme between @x402/evm 2.27's upto client and our facilitator, on anvil with our
 * Permit2 and upto proxy: the reference client signs a maximum; our facilitator lists the scheme,
 * verifies, and settles the charge the resource server asks (less than the maximum: exactly that
 * moves); and refuses a charge above the maximum, a second settle, a missing Permit2 allowance, and
 * all but one of many concurrent settles of one authorization.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { PaymentRequirements as ReferenceRequirements } from '@x402/core/types';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import type { Address } from 'viem';
import { type LocalChain, type TestAccount, startChain } from '../../support/chain';
import { approvePermit2 } from '../../support/chain/upto';
import { databaseKinds } from '../../support/database';
import { type FacilitatorFixture, startFacilitatorFixture } from '../../support/facilitator';

const MAX = 10_000n;

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
});
afterAll(() => chain.stop());

for (const kind of databaseKinds) {
  describe(`upto through our facilitator, signed by @x402/evm's client (${kind})`, () => {
    let fixture: FacilitatorFixture;
    beforeAll(async () => {
      fixture = await startFacilitatorFixture(chain, kind);
    });
    afterAll(() => fixture.close());

    const requirementsFor = (payTo: Address, amount = MAX): ReferenceRequirements => ({
      scheme: 'upto',
      network: chain.network,
      amount: amount.toString(),
      asset: chain.token.address,
      payTo,
      maxTimeoutSeconds: 120,
      extra: {
        name: chain.token.name,
        version: chain.token.version,
        assetTransferMethod: 'permit2',
        facilitatorAddress: chain.accounts.relayer.address,
      },
    });
    /** A payer with `usdc` who approved Permit2 (unless told not to), a fresh payee, and a payment the reference client signed. */
    const signedPayment = async (options: { approve?: boolean; payer?: TestAccount } = {}) => {
      const payer = options.payer ?? (await chain.createAccount({ usdc: 100_000n }));
      if (options.approve !== false && !options.payer) await approvePermit2(chain, payer);
      const payee = (await chain.createAccount()).address;
      const requirements = requirementsFor(payee);
      const signed = await new UptoEvmScheme(payer).createPaymentPayload(2, requirements);
      const paymentPayload = { ...signed, accepted: requirements };
      const body = (amount: bigint) => ({
        x402Version: 2,
        paymentPayload,
        paymentRequirements: { ...requirements, amount: amount.toString() },
      });
      return { payer, payee, body };
    };
    const json = async (response: Response) => (await response.json()) as Record<string, unknown>;
    const balances = async (...addresses: Address[]) => Promise.all(addresses.map((a) => chain.balanceOf(a)));

    it('lists upto in /supported with the relayer the client must name as facilitator', async () => {
      const supported = await json(await fixture.get('/supported'));
      expect(supported.kinds).toContainEqual({
        x402Version: 2,
        scheme: 'upto',
        network: chain.network,
        extra: { facilitatorAddress: chain.accounts.relayer.address },
      });
    });

    it('verifies the maximum, then settles a smaller charge: exactly the charge moves, once', async () => {
      const { payer, payee, body } = await signedPayment();
      expect(await balances(payer.address, payee)).toEqual([100_000n, 0n]);

      expect(await json(await fixture.post('/verify', body(MAX)))).toEqual({ isValid: true, payer: payer.address });
      const settled = await json(await fixture.post('/settle', body(3_721n)));
      expect(settled).toMatchObject({ success: true, network: chain.network, payer: payer.address, amount: '3721' });
      expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await balances(payer.address, payee)).toEqual([96_279n, 3_721n]);

      expect(await json(await fixture.post('/settle', body(3_721n)))).toMatchObject({
        success: false,
        errorReason: 'permit2_invalid_nonce',
      });
      expect(await json(await fixture.post('/verify', body(MAX)))).toMatchObject({
        isValid: false,
        invalidReason: 'permit2_invalid_nonce',
      });
      expect(await balances(payer.address, payee)).toEqual([96_279n, 3_721n]);
    });

    it('settles without a verify first, and a charge of 0 sends nothing', async () => {
      const first = await signedPayment();
      expect(await json(await fixture.post('/settle', first.body(MAX)))).toMatchObject({ success: true, amount: '10000' });
      expect(await balances(first.payer.address, first.payee)).toEqual([90_000n, 10_000n]);
      const second = await signedPayment();
      expect(await json(await fixture.post('/settle', second.body(0n)))).toEqual({
        success: true,
        transaction: '',
        network: chain.network,
        payer: second.payer.address,
        amount: '0',
      });
      expect(await balances(second.payer.address, second.payee)).toEqual([100_000n, 0n]);
    });

    it('refuses a charge above the maximum and a verify of another amount, moving nothing', async () => {
      const { payer, payee, body } = await signedPayment();
      expect(await json(await fixture.post('/verify', body(MAX - 1n)))).toMatchObject({
        isValid: false,
        invalidReason: 'permit2_amount_mismatch',
      });
      expect(await json(await fixture.post('/settle', body(MAX + 1n)))).toMatchObject({
        success: false,
        errorReason: 'invalid_upto_evm_payload_settlement_exceeds_amount',
      });
      expect(await balances(payer.address, payee)).toEqual([100_000n, 0n]);
    });

    it('refuses a payer who has not approved Permit2, naming the fix', async () => {
      const { body } = await signedPayment({ approve: false });
      const verdict = await json(await fixture.post('/verify', body(MAX)));
      expect(verdict).toMatchObject({ isValid: false, invalidReason: 'permit2_allowance_required' });
      expect(String(verdict.invalidMessage)).toContain('approve Permit2');
    });

    it('refuses authorizations that together exceed the balance, while the first is open', async () => {
      const payer = await chain.createAccount({ usdc: 15_000n });
      await approvePermit2(chain, payer);
      const a = await signedPayment({ payer });
      const b = await signedPayment({ payer });
      expect(await json(await fixture.post('/verify', a.body(MAX)))).toMatchObject({ isValid: true });
      expect(await json(await fixture.post('/verify', b.body(MAX)))).toMatchObject({
        isValid: false,
        invalidReason: 'permit2_insufficient_balance',
      });
      // Settled for less, the first leaves room for another.
      expect(await json(await fixture.post('/settle', a.body(2_000n)))).toMatchObject({ success: true });
      const c = await signedPayment({ payer });
      expect(await json(await fixture.post('/verify', c.body(MAX)))).toMatchObject({ isValid: true });
    });

    it('answers 400 to an upto payload without its Permit2 authorization, naming the field', async () => {
      const { body } = await signedPayment();
      const good = body(MAX);
      const broken = { ...good, paymentPayload: { ...good.paymentPayload, payload: { signature: good.paymentPayload.payload.signature } } };
      const response = await fixture.post('/verify', broken);
      expect(response.status).toBe(400);
      expect(String((await json(response)).error)).toContain('permit2Authorization');
    });

    it('settles one of 10 concurrent settles of one authorization, once', async () => {
      const { payer, payee, body } = await signedPayment();
      const answers = await Promise.all(Array.from({ length: 10 }, () => fixture.post('/settle', body(4_000n)).then(json)));
      expect(answers.filter((a) => a.success === true)).toHaveLength(1);
      expect(answers.filter((a) => a.success === false).map((a) => a.errorReason)).toEqual(Array(9).fill('permit2_invalid_nonce'));
      expect(await balances(payer.address, payee)).toEqual([96_000n, 4_000n]);
    });
  });
}
