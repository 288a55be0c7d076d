/**
 * Two instances of one creator's skill server share their payment channels in the database
 * (`market serve` with DATABASE_URL uses this store): a client's calls may land on either, one
 * voucher sent to both at once is charged once and runs the handler once, and a claim from either
 * collects everything both answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired } from 'skill-market/x402';
import { databaseChannelStore } from '../../src/creator-store';
import type { DatabaseHandle } from '../../src/db';
import { type LocalChain, receiverState, startChain, type TestAccount } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { databaseKinds, openTestDatabase, secondPool } from '../support/database';
import { jsonPost } from '../support/auth';
import { referenceChannelClient, voucherProof } from '../support/channel-server';
import { loopbackServeOptions } from '../support/skill-server';

const PRICE = 1_000n;
let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
}, 60_000);

afterAll(async () => {
  facilitator?.stop();
  await chain?.stop();
});

for (const kind of databaseKinds) {
  describe(`two instances sharing channels (${kind})`, () => {
    const handles: DatabaseHandle[] = [];
    const servers: SkillServer[] = [];
    let payee: Address;
    let runs = 0;

    beforeAll(async () => {
      const first = await openTestDatabase(kind);
      handles.push(first, kind === 'postgres' ? await secondPool(first) : first);
      payee = (await chain.createAccount()).address;
      const authorizer = await chain.createAccount();
      for (const handle of handles) {
        servers.push(
          await serve(
            {
              echo: skill({ price: '$0.001' }, (input: unknown) => {
                runs++;
                return { echo: input };
              }),
            },
            loopbackServeOptions(chain, facilitator.url, payee, {
              channels: { receiverAuthorizerKey: authorizer.privateKey, store: databaseChannelStore(handle.db), claimWithinMs: 1_800_000 },
            }),
          ),
        );
      }
    }, 60_000);

    afterAll(async () => {
      for (const server of servers) await server.stop();
      for (const handle of new Set(handles)) await handle.close();
    });

    const post = (body: unknown, proof?: string) => jsonPost(body, proof ? { 'PAYMENT-SIGNATURE': proof } : {});
    const referenceClient = (account: TestAccount) => referenceChannelClient(chain, account, { depositMultiplier: 20 });

    it('serves one channel from either instance and charges a voucher sent to both at once once', async () => {
      const payer = await chain.createAccount({ usdc: 1_000_000n });
      const { pay, proofs } = referenceClient(payer);
      for (let i = 0; i < 6; i++) expect((await pay(`${servers[i % 2]!.url}/echo`, post({ i }))).status).toBe(200);
      expect(runs).toBe(6);

      const proof = await voucherProof(chain, proofs.at(-1)!, payer, 7n * PRICE);
      const answers = await Promise.all(servers.map((s) => fetch(`${s.url}/echo`, post({ i: 7 }, proof))));
      // One of them ran and was charged; the other, the same voucher for the same call, gets that answer.
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(answers.map((a) => a.headers.get('X-Payment-Replayed')).sort()).toEqual(['true', null].sort());
      const bodies = await Promise.all(answers.map((a) => a.json()));
      expect(bodies[0]).toEqual(bodies[1]);
      expect(runs).toBe(7);

      // The next voucher sent for two different calls at once: one runs and is charged, the other is refused.
      const next = await voucherProof(chain, proofs.at(-1)!, payer, 8n * PRICE);
      const pair = await Promise.all(servers.map((s, i) => fetch(`${s.url}/echo`, post({ i: 8 + i }, next))));
      expect(pair.map((a) => a.status).sort()).toEqual([200, 402]);
      const refused = pair.find((a) => a.status === 402)!;
      expect(decodePaymentRequired(refused.headers.get('PAYMENT-REQUIRED')!).error).toBe(
        'invalid_batch_settlement_evm_cumulative_amount_mismatch',
      );
      expect(runs).toBe(8);

      expect(await servers[1]!.claimChannels()).toMatchObject({ channels: 1 });
      expect(await servers[0]!.claimChannels()).toEqual({ channels: 0 });
      expect(await receiverState(chain, payee)).toMatchObject({ totalClaimed: 8n * PRICE, totalSettled: 8n * PRICE });
    }, 60_000);
  });
}
