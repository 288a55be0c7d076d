/**
 * A payer's paid calls against their balance: many calls at once from a wallet holding a few
 * prices, and what the chain shows afterwards.
 */
import { expect } from 'bun:test';
import type { Address, Hex } from 'viem';
import type { Facilitator } from '../../src/facilitator';
import { type LocalChain, usdCoinAbi } from './chain';
import { eventually } from './eventually';
import { PRICE, paymentBody, requirementsFor } from './facilitator';

/** The hashes of the token's transfers from `from`, as the chain's Transfer events show them. */
export async function transfersFrom(chain: LocalChain, from: Address): Promise<Hex[]> {
  const logs = await chain.publicClient.getContractEvents({
    address: chain.token.address,
    abi: usdCoinAbi,
    eventName: 'Transfer',
    args: { from },
    fromBlock: 0n,
  });
  return logs.map((l) => l.transactionHash);
}

/** The receipts' statuses of `hashes`, once each is mined. */
export function minedStatuses(chain: LocalChain, hashes: readonly Hex[]): Promise<string[]> {
  return Promise.all(
    hashes.map(async (hash) => {
      const receipt = await eventually(
        () => chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined),
        (r) => r !== undefined,
        `the receipt of ${hash}`,
      );
      return receipt!.status;
    }),
  );
}

/** One paid call as a skill server makes it: verify, then (the handler ran) settle in broadcast mode. */
async function paidCall(f: Facilitator, body: unknown): Promise<{ result: boolean; transaction: Hex; reason?: string }> {
  const verdict = await f.verify(body);
  if (!verdict.isValid) return { result: false, transaction: '0x', reason: verdict.invalidReason };
  const settled = await f.settle(body, 'broadcast');
  return { result: settled.success, transaction: settled.transaction as Hex, reason: settled.errorReason };
}

/**
 * `calls` paid calls at once, spread over `facilitators`, from a new wallet holding `held` prices:
 * exactly `held` results, each a transfer mined on chain and no other transfer (never charged
 * without a result), the payer left with nothing and every other call refused for want of balance.
 */
export async function expectBoundedByBalance(chain: LocalChain, facilitators: Facilitator[], calls: number, held: number) {
  const payer = await chain.createAccount({ usdc: PRICE * BigInt(held) });
  const payee = (await chain.createAccount()).address;
  const requirements = requirementsFor(chain, payee);
  const bodies = await Promise.all(Array.from({ length: calls }, () => paymentBody(chain, payer, requirements)));

  const answers = await Promise.all(bodies.map((body, i) => paidCall(facilitators[i % facilitators.length]!, body)));

  const results = answers.filter((a) => a.result);
  expect(results).toHaveLength(held);
  const refused = answers.filter((a) => !a.result);
  expect(refused.map((a) => a.reason)).toEqual(refused.map(() => 'invalid_exact_evm_insufficient_balance'));
  const hashes = results.map((r) => r.transaction);
  expect(await minedStatuses(chain, hashes)).toEqual(hashes.map(() => 'success'));
  expect((await transfersFrom(chain, payer.address)).sort()).toEqual([...hashes].sort());
  expect([await chain.balanceOf(payer.address), await chain.balanceOf(payee)]).toEqual([0n, PRICE * BigInt(held)]);
}
