/**
 * A network without Permit2 and the x402 upto proxy: the facilitator does not offer upto, and
 * refuses its requests `unsupported_scheme` naming the missing contracts, moving nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS } from '../../../src/chain/upto';
import { type LocalChain, startChain } from '../../support/chain';
import { oneDatabase } from '../../support/database';
import { type FacilitatorFixture, startFacilitatorFixture } from '../../support/facilitator';

for (const kind of oneDatabase) {
  describe(`a network without the upto contracts (${kind} database)`, () => {
    let bare: LocalChain;
    let f: FacilitatorFixture;
    beforeAll(async () => {
      bare = await startChain({ upto: false });
      f = await startFacilitatorFixture(bare, kind);
    }, 60_000);
    afterAll(async () => {
      await f?.close();
      await bare?.stop();
    });

    it('lists no upto in /supported and refuses its requests, naming what is missing', async () => {
      const supported = (await (await f.get('/supported')).json()) as { kinds: { scheme: string }[] };
      expect(supported.kinds.map((k) => k.scheme)).not.toContain('upto');
      const requirements = {
        scheme: 'upto',
        network: bare.network,
        amount: '1000',
        asset: bare.token.address,
        payTo: bare.accounts.payee.address,
        maxTimeoutSeconds: 60,
      };
      const body = {
        x402Version: 2,
        paymentPayload: { x402Version: 2, accepted: requirements, payload: {} },
        paymentRequirements: requirements,
      };
      const verdict = (await (await f.post('/verify', body)).json()) as { isValid: boolean; invalidReason: string; invalidMessage: string };
      expect(verdict).toMatchObject({ isValid: false, invalidReason: 'unsupported_scheme' });
      expect(verdict.invalidMessage).toContain(PERMIT2_ADDRESS);
      expect(verdict.invalidMessage).toContain(UPTO_PROXY_ADDRESS);
    });
  });
}
