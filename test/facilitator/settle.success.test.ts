import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeFunctionData, getAddress } from 'viem';
import { type LocalChain, startChain, usdCoinAbi } from '../support/chain';
import { oneDatabase } from '../support/database';
import { PRICE, type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 3 });
}, 60_000);
afterAll(() => chain.stop());

for (const kind of oneDatabase) {
  describe(`settling valid payments (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
    }, 60_000);
    afterAll(() => f.close());

    it('verifies, then settles, moving exactly the price from payer to payee and storing the receipt', async () => {
      const payer = chain.accounts.payers[1]!;
      const payee = await chain.createAccount();
      const requirements = requirementsFor(chain, payee.address);
      const body = await paymentBody(chain, payer, requirements);
      const before = await chain.balanceOf(payer.address);

      expect(await f.facilitator.verify(body)).toEqual({ isValid: true, payer: payer.address });
      const settled = await f.facilitator.settle(body);
      expect(settled).toEqual({
        success: true,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        network: chain.network,
        payer: payer.address,
      });

      expect(await chain.balanceOf(payee.address)).toBe(PRICE);
      expect(await chain.balanceOf(payer.address)).toBe(before - PRICE);
      const receipt = await f.facilitator.receipt(settled.transaction);
      expect(receipt).toMatchObject({
        transaction: settled.transaction,
        status: 'confirmed',
        network: chain.network,
        asset: chain.token.address,
        payer: payer.address,
        payee: payee.address,
        amount: PRICE.toString(),
        relayer: chain.accounts.relayer.address,
      });
      expect(receipt?.blockNumber).toBeGreaterThan(0);
      expect(receipt?.finalizedAt).not.toBeNull();
    });

    it('settles a payment that was never verified (the signature is checked at settle)', async () => {
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, chain.accounts.payers[2]!, requirementsFor(chain, payee.address));
      const settled = await f.facilitator.settle(body);
      expect(settled.success).toBe(true);
      expect(await chain.balanceOf(payee.address)).toBe(PRICE);
    });

    it('verifies and settles an ERC-1271 smart-wallet payment through the bytes-signature overload', async () => {
      const payee = await chain.createAccount();
      const requirements = requirementsFor(chain, payee.address);
      const wallet = chain.smartWallet.address;
      const body = await paymentBody(chain, chain.smartWallet.owner, requirements, { from: wallet });
      const before = await chain.balanceOf(wallet);

      expect(await f.facilitator.verify(body)).toEqual({ isValid: true, payer: wallet });
      const settled = await f.facilitator.settle(body);
      expect(settled.success).toBe(true);
      expect(await chain.balanceOf(wallet)).toBe(before - PRICE);
      expect(await chain.balanceOf(payee.address)).toBe(PRICE);

      const tx = await chain.publicClient.getTransaction({ hash: settled.transaction as `0x${string}` });
      const call = decodeFunctionData({ abi: usdCoinAbi, data: tx.input });
      expect(call.functionName).toBe('transferWithAuthorization');
      expect(call.args).toHaveLength(7); // (…, bytes signature), not (…, v, r, s)
    });

    it('verifies and settles a v1 payload with v1 requirements (maxAmountRequired, network name)', async () => {
      const payee = await chain.createAccount();
      const requirements = requirementsFor(chain, payee.address);
      const v2 = await paymentBody(chain, chain.accounts.payers[1]!, requirements);
      const body = {
        x402Version: 1,
        paymentPayload: { x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: v2.paymentPayload.payload },
        paymentRequirements: {
          scheme: 'exact',
          network: 'base-sepolia',
          maxAmountRequired: PRICE.toString(),
          resource: 'https://skills.example/echo',
          description: 'Echo',
          mimeType: 'application/json',
          payTo: payee.address,
          maxTimeoutSeconds: 60,
          asset: chain.token.address,
          extra: requirements.extra,
        },
      };
      expect(await f.facilitator.verify(body)).toEqual({ isValid: true, payer: chain.accounts.payers[1]!.address });
      const settled = await f.facilitator.settle(body);
      expect(settled).toMatchObject({ success: true, network: 'base-sepolia' });
      expect(await chain.balanceOf(payee.address)).toBe(PRICE);
    });

    it('answers GET /receipts/:tx with the stored receipt, whatever the hash case', async () => {
      const payee = await chain.createAccount();
      const settled = await f.facilitator.settle(await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address)));
      const res = await f.get(`/receipts/0x${settled.transaction.slice(2).toUpperCase()}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ transaction: settled.transaction, status: 'confirmed', payee: getAddress(payee.address) });
    });

    it('never writes a relayer key or a payer signature to the log', async () => {
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address));
      await f.post('/verify', body);
      await f.post('/settle', body);
      const log = f.logs.join('\n').toLowerCase();
      expect(log).toContain('payment settled');
      expect(log).not.toContain(chain.accounts.relayer.privateKey.slice(2).toLowerCase());
      expect(log).not.toContain(body.paymentPayload.payload.signature.slice(2, 40).toLowerCase());
    });
  });
}
