/**
 * An upto settlement whose receipt is not seen in time answers `settlement_pending` with its
 * transaction; once it is mined, a reconcile pass records it settled (and the charge has moved).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { PaymentRequirements as ReferenceRequirements } from '@x402/core/types';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { type LocalChain, startChain } from '../../support/chain';
import { approvePermit2 } from '../../support/chain/upto';
import { oneDatabase } from '../../support/database';
import { type FacilitatorFixture, startFacilitatorFixture } from '../../support/facilitator';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
});
afterAll(() => chain.stop());

for (const kind of oneDatabase) {
  describe(`an upto settlement not mined in time (${kind} database)`, () => {
    let fixture: FacilitatorFixture;
    beforeAll(async () => {
      fixture = await startFacilitatorFixture(chain, kind, { config: { receiptTimeoutMs: 1 } });
    });
    afterAll(async () => {
      await chain.testClient.setAutomine(true);
      await fixture.close();
    });

    it('answers settlement_pending with its transaction, and a reconcile pass records it settled once mined', async () => {
      const payer = await chain.createAccount({ usdc: 50_000n });
      await approvePermit2(chain, payer);
      const payee = (await chain.createAccount()).address;
      const requirements: ReferenceRequirements = {
        scheme: 'upto',
        network: chain.network,
        amount: '10000',
        asset: chain.token.address,
        payTo: payee,
        maxTimeoutSeconds: 120,
        extra: { name: chain.token.name, version: chain.token.version, facilitatorAddress: chain.accounts.relayer.address },
      };
      const signed = await new UptoEvmScheme(payer).createPaymentPayload(2, requirements);
      const body = {
        x402Version: 2,
        paymentPayload: { ...signed, accepted: requirements },
        paymentRequirements: { ...requirements, amount: '2500' },
      };

      await chain.testClient.setAutomine(false);
      const answer = (await (await fixture.post('/settle', body)).json()) as { success: boolean; errorReason: string; transaction: string };
      expect(answer).toMatchObject({ success: false, errorReason: 'settlement_pending' });
      expect(answer.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await fixture.facilitator.reconcileUpto()).toEqual({ checked: 1, settled: 0, failed: 0 });

      await chain.testClient.mine({ blocks: 1 });
      await chain.testClient.setAutomine(true);
      expect(await fixture.facilitator.reconcileUpto()).toEqual({ checked: 1, settled: 1, failed: 0 });
      expect(await fixture.facilitator.reconcileUpto()).toEqual({ checked: 0, settled: 0, failed: 0 });
      expect([await chain.balanceOf(payer.address), await chain.balanceOf(payee)]).toEqual([47_500n, 2_500n]);
    });
  });
}
