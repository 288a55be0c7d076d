/**
 * A payer's concurrent payments are bounded by their balance: 120 paid calls at once (verify, then
 * a broadcast settle, as a skill server makes them) from a wallet holding exactly 3 prices get
 * exactly 3 results, each a transfer on chain, and every other call is refused for want of balance;
 * the same with the calls split between two facilitator instances on one PostgreSQL database
 * (whose in-process queues do not see each other: the database's lock serialises them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address, Hex } from 'viem';
import type { Facilitator } from '../../src/facilitator';
import { type LocalChain, startChain, usdCoinAbi } from '../support/chain';
import { databaseKinds, TEST_DATABASE_URL } from '../support/database';
import { eventually } from '../support/eventually';
import {
  PRICE,
  type FacilitatorFixture,
  paymentBody,
  requirementsFor,
  startFacilitatorFixture,
  startTwoInstances,
} from '../support/facilitator';

const CALLS = 120;
const HELD = 3n; // prices the payer holds

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 2 });
}, 30_000);
afterAll(() => chain.stop());

/** One paid call as a skill server makes it: verify, then (the handler ran) settle in broadcast mode. */
async function paidCall(f: Facilitator, body: unknown): Promise<{ result: boolean; transaction: string; reason?: string }> {
  const verdict = await f.verify(body);
  if (!verdict.isValid) return { result: false, transaction: '', reason: verdict.invalidReason };
  const settled = await f.settle(body, 'broadcast');
  return { result: settled.success, transaction: settled.transaction, reason: settled.errorReason };
}

/** 120 calls at once from a payer holding `held` prices, spread over `facilitators`; checks the bound. */
async function expectBoundedByBalance(facilitators: Facilitator[], held: bigint) {
  const payer = await chain.createAccount({ usdc: PRICE * held });
  const payee = (await chain.createAccount()).address;
  const requirements = requirementsFor(chain, payee);
  const bodies = await Promise.all(Array.from({ length: CALLS }, () => paymentBody(chain, payer, requirements)));

  const calls = await Promise.all(bodies.map((body, i) => paidCall(facilitators[i % facilitators.length]!, body)));

  const results = calls.filter((c) => c.result);
  expect(results).toHaveLength(Number(held));
  const refused = calls.filter((c) => !c.result);
  expect(refused.map((c) => c.reason)).toEqual(refused.map(() => 'invalid_exact_evm_insufficient_balance'));
  // Each result is a transfer mined on chain, and there is no other: never charged without a result.
  const receipts = await Promise.all(
    results.map((r) =>
      eventually(
        () => receiptOf(r.transaction as Hex),
        (receipt) => receipt !== undefined,
        'the receipt',
      ),
    ),
  );
  expect(receipts.map((r) => r?.status)).toEqual(results.map(() => 'success'));
  expect(await chain.balanceOf(payer.address)).toBe(0n);
  expect(await chain.balanceOf(payee)).toBe(PRICE * held);
  expect(await transfersFrom(payer.address)).toBe(Number(held));
}

const receiptOf = (hash: Hex) => chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined);

/** Transfer events of the token from `from`. */
async function transfersFrom(from: Address): Promise<number> {
  const logs = await chain.publicClient.getContractEvents({
    address: chain.token.address,
    abi: usdCoinAbi,
    eventName: 'Transfer',
    args: { from },
    fromBlock: 0n,
  });
  return logs.length;
}

for (const kind of databaseKinds) {
  describe(`a payer's exposure (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind, { relayers: [chain.accounts.relayers[0]!] });
    }, 30_000);
    afterAll(() => f.close());

    it(`${CALLS} concurrent paid calls from a wallet holding ${HELD} prices get exactly ${HELD} results, each a transfer`, async () => {
      await expectBoundedByBalance([f.facilitator], HELD);
    });
  });
}

describe.skipIf(!TEST_DATABASE_URL)("a payer's exposure across two facilitator instances on one PostgreSQL database", () => {
  let instances: Awaited<ReturnType<typeof startTwoInstances>>;
  beforeAll(async () => {
    instances = await startTwoInstances(chain);
  }, 30_000);
  afterAll(() => instances?.close());

  it(`${CALLS} concurrent paid calls from a wallet holding ${HELD} prices, split between the instances, get exactly ${HELD} results`, async () => {
    await expectBoundedByBalance([instances.a.facilitator, instances.b.facilitator], HELD);
  });
});
