/**
 * Several facilitator instances sharing one PostgreSQL database: each with its own connection
 * pool and relayer key, as separate processes would run. Needs TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type LocalChain, startChain } from '../support/chain';
import { TEST_DATABASE_URL } from '../support/database';
import { expectBoundedByBalance } from '../support/exposure';
import { PRICE, type FacilitatorFixture, paymentBody, requirementsFor, startTwoInstances } from '../support/facilitator';

describe.skipIf(!TEST_DATABASE_URL)('two facilitator instances on one PostgreSQL database', () => {
  let chain: LocalChain;
  let instances: Awaited<ReturnType<typeof startTwoInstances>>;
  let a: FacilitatorFixture;
  let b: FacilitatorFixture;
  beforeAll(async () => {
    chain = await startChain({ payers: 2, relayers: 2 });
    instances = await startTwoInstances(chain);
    ({ a, b } = instances);
  }, 60_000);
  afterAll(async () => {
    await instances?.close();
    await chain?.stop();
  });

  it('the same proof sent to both, 25 times each, concurrently, makes one transfer', async () => {
    const payee = await chain.createAccount();
    const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address));
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).facilitator.settle(body)));
    expect(results.filter((r) => r.success)).toHaveLength(1);
    expect(results.filter((r) => r.errorReason === 'invalid_exact_evm_nonce_already_used')).toHaveLength(49);
    expect(await chain.balanceOf(payee.address)).toBe(PRICE);
  });

  it('a proof verified by one instance settles once through the other, and is a replay everywhere after', async () => {
    const payee = await chain.createAccount();
    const body = await paymentBody(chain, chain.accounts.payers[1]!, requirementsFor(chain, payee.address));
    expect((await a.facilitator.verify(body)).isValid).toBe(true);
    expect((await b.facilitator.verify(body)).invalidReason).toBe('invalid_exact_evm_nonce_already_used');
    const [first, second] = await Promise.all([b.facilitator.settle(body), a.facilitator.settle(body)]);
    expect([first.success, second.success].filter(Boolean)).toHaveLength(1);
    expect(await chain.balanceOf(payee.address)).toBe(PRICE);
    const receipt = await a.facilitator.receipt(first.success ? first.transaction : second.transaction);
    expect(receipt).toMatchObject({ status: 'confirmed', payee: payee.address });
  });

  it('120 concurrent paid calls from a wallet holding 3 prices, split between the instances, get exactly 3 results', async () => {
    // Each instance queues its own; the database's lock per payer serialises the two.
    await expectBoundedByBalance(chain, [a.facilitator, b.facilitator], 120, 3);
  });
});
