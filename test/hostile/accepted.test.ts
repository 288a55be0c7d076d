/**
 * One rule decides whether a payload's `accepted` answers the requirements — the x402 codec's
 * paymentMatchesRequirements — and the facilitator applies it as the skill server does: a payload
 * the seller would refuse is neither verified nor settled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { paymentMatchesRequirements, parsePaymentPayload, type PaymentRequirements } from 'skill-market/x402';
import { type LocalChain, startChain, usdCoinAbi } from '../support/chain';
import { oneDatabase } from '../support/database';
import { type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1 });
}, 60_000);
afterAll(() => chain.stop());

const variants: [string, (r: PaymentRequirements) => Record<string, unknown>, boolean][] = [
  ['the requirements verbatim', (r) => ({ ...r }), true],
  ['addresses in another case', (r) => ({ ...r, payTo: r.payTo.toLowerCase(), asset: r.asset.toUpperCase().replace('0X', '0x') }), true],
  ['more in extra', (r) => ({ ...r, extra: { ...r.extra, note: 'x' } }), true],
  ['another maxTimeoutSeconds', (r) => ({ ...r, maxTimeoutSeconds: r.maxTimeoutSeconds * 100 }), false],
  ['another amount', (r) => ({ ...r, amount: '1' }), false],
  ['another payTo', (r) => ({ ...r, payTo: chain.accounts.relayer.address }), false],
  ['an extra without the version', (r) => ({ ...r, extra: { name: r.extra?.name } }), false],
  ['an extra field of its own', (r) => ({ ...r, memo: 'x' }), false],
];

for (const kind of oneDatabase) {
  describe(`the facilitator applies the codec's accepted rule (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
    }, 60_000);
    afterAll(() => f.close());

    for (const [what, mutate, matches] of variants) {
      it(`${matches ? 'verifies' : 'refuses'} a payload whose accepted has ${what}, as the rule says`, async () => {
        const requirements = requirementsFor(chain, chain.accounts.payee.address);
        const body = await paymentBody(chain, chain.accounts.payers[0]!, requirements);
        body.paymentPayload.accepted = mutate(requirements) as unknown as PaymentRequirements;
        expect(paymentMatchesRequirements(parsePaymentPayload(body.paymentPayload), requirements)).toBe(matches);
        const verdict = (await (await f.post('/verify', body)).json()) as { isValid: boolean; invalidReason?: string };
        expect(verdict.isValid).toBe(matches);
        if (!matches) expect(verdict.invalidReason).toBe('invalid_exact_evm_accepted_mismatch');
      });
    }

    it('does not settle a payload the skill server would refuse: nothing moves on chain', async () => {
      const requirements = requirementsFor(chain, chain.accounts.payee.address);
      const body = await paymentBody(chain, chain.accounts.payers[0]!, requirements);
      body.paymentPayload.accepted = { ...requirements, maxTimeoutSeconds: 3600 };
      const balance = () =>
        chain.publicClient.readContract({
          address: chain.token.address,
          abi: usdCoinAbi,
          functionName: 'balanceOf',
          args: [chain.accounts.payee.address],
        });
      const before = await balance();
      const settled = (await (await f.post('/settle', body)).json()) as { success: boolean; errorReason?: string; transaction: string };
      expect(settled).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_accepted_mismatch', transaction: '' });
      expect(await balance()).toBe(before);
    });
  });
}
