/**
 * A payer gets no more results than their balance pays for: 120 paid calls at once to a skill
 * server (broadcast settlement, its default) from a wallet holding exactly 3 prices get exactly 3
 * results, each paid by a transfer on chain; every other call is answered 402 for want of balance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address, Hex } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodeSettleResponse } from 'skill-market/x402';
import { type LocalChain, startChain, usdCoinAbi } from '../support/chain';
import { databaseKinds } from '../support/database';
import { eventually } from '../support/eventually';
import { PRICE, type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { balances, localServeOptions, paidPost, recordingLogger } from '../support/skill-server';

const CALLS = 120;
const HELD = 3; // prices the payer holds

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
}, 30_000);
afterAll(() => chain.stop());

const skills = { work: skill({ price: '$0.01' }, (input: { n: number }) => ({ doubled: input.n * 2 })) };

for (const kind of databaseKinds) {
  describe(`a payer's calls bounded by their balance through a skill server (${kind} facilitator database)`, () => {
    let f: FacilitatorFixture;
    let server: SkillServer;
    let payee: Address;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
      f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
      payee = (await chain.createAccount()).address;
      server = await serve(skills, localServeOptions(chain, f, payee, recordingLogger()));
    }, 30_000);
    afterAll(async () => {
      await server?.stop();
      await f?.facilitator.app.stop();
      await f?.close();
    });

    it(`${CALLS} concurrent calls from a wallet holding ${HELD} prices get exactly ${HELD} results, each a transfer`, async () => {
      const payer = await chain.createAccount({ usdc: PRICE * BigInt(HELD) });
      const responses = await Promise.all(Array.from({ length: CALLS }, (_, n) => paidPost(`${server.url}/work`, { n }, payer)));

      const results = responses.filter((r) => r.status === 200);
      expect(results).toHaveLength(HELD);
      const refused = responses.filter((r) => r.status !== 200);
      expect(refused.map((r) => r.status)).toEqual(refused.map(() => 402));
      const reasons = await Promise.all(refused.map(async (r) => ((await r.json()) as { error?: string }).error));
      expect(reasons).toEqual(refused.map(() => 'invalid_exact_evm_insufficient_balance'));
      // Each result carries a transfer that is mined, and there is no other: never charged without a result.
      const hashes = results.map((r) => decodeSettleResponse(r.headers.get('PAYMENT-RESPONSE')!).transaction as Hex);
      const receipts = await Promise.all(
        hashes.map((hash) =>
          eventually(
            () => chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined),
            (receipt) => receipt !== undefined,
            'the receipt',
          ),
        ),
      );
      expect(receipts.map((r) => r?.status)).toEqual(hashes.map(() => 'success'));
      expect(await balances(chain, payer.address, payee)).toEqual([0n, PRICE * BigInt(HELD)]);
      const transfers = await chain.publicClient.getContractEvents({
        address: chain.token.address,
        abi: usdCoinAbi,
        eventName: 'Transfer',
        args: { from: payer.address },
        fromBlock: 0n,
      });
      expect(transfers.map((t) => t.transactionHash).sort()).toEqual([...hashes].sort());
    });
  });
}
