/**
 * One channel, many servers: two skill servers of one payee (different skills, different prices)
 * and a second instance of one of them keep their channels at our facilitator
 * (`hostedChannelStore`, a key bound to the payee). A payer's one channel is taken by all three:
 * calls may land on any, a voucher sent to two at once is charged once, payers calling at once
 * lose nothing, and a claim from any server collects exactly what all of them charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { hostedChannelStore, serve, skill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired } from 'skill-market/x402';
import { jsonPost } from '../support/auth';
import { type LocalChain, receiverState, startChain } from '../support/chain';
import { referenceChannelClient, voucherProof } from '../support/channel-server';
import { databaseKinds } from '../support/database';
import { loopbackServeOptions } from '../support/skill-server';
import { servedFacilitator, type ServedFacilitator } from '../facilitator/channels/support';

const ECHO = 1_000n;
const SHOUT = 2_500n;
const KEY = 'hosted-channels-receiver-key-0123456789';

let chain: LocalChain;

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
}, 60_000);

afterAll(async () => {
  await chain?.stop();
});

for (const kind of databaseKinds) {
  describe(`channels kept at the facilitator, shared by a payee's servers (${kind})`, () => {
    let facilitator: ServedFacilitator;
    let payee: Address;
    const servers: SkillServer[] = [];
    let runs = 0;

    beforeAll(async () => {
      payee = (await chain.createAccount()).address;
      facilitator = await servedFacilitator(chain, kind, { config: { receiverKeys: [{ receiver: payee, key: KEY }] } });
      const store = () => hostedChannelStore({ url: facilitator.url, apiKey: KEY });
      const options = () =>
        loopbackServeOptions(chain, facilitator.url, payee, {
          facilitatorApiKey: KEY,
          channels: { store: store(), withdrawDelay: 900, claimWithinMs: 600_000 },
        });
      const echo = skill({ price: '$0.001' }, (input: unknown) => {
        runs++;
        return { echo: input };
      });
      const shout = skill({ price: '$0.0025' }, (input: { text?: string }) => {
        runs++;
        return { shout: String(input.text ?? '').toUpperCase() };
      });
      // Server A twice (two instances), server B once: three processes' worth of stores.
      servers.push(await serve({ echo }, options()), await serve({ echo }, options()), await serve({ shout }, options()));
    }, 60_000);

    afterAll(async () => {
      for (const server of servers) await server.stop();
      await facilitator?.close();
    });

    const post = (body: unknown, proof?: string) => jsonPost(body, proof ? { 'PAYMENT-SIGNATURE': proof } : {});
    const urlOf = (i: number) => (i % 3 === 2 ? `${servers[2]!.url}/shout` : `${servers[i % 3]!.url}/echo`);
    const priceOf = (i: number) => (i % 3 === 2 ? SHOUT : ECHO);

    it('serves one channel from every server and instance, and charges a voucher sent to two at once once, answering a copy of the same call with its answer', async () => {
      const payer = await chain.createAccount({ usdc: 1_000_000n });
      const { pay, proofs } = referenceChannelClient(chain, payer, { depositMultiplier: 20 });
      let charged = 0n;
      for (let i = 0; i < 9; i++) {
        const answer = await pay(urlOf(i), post({ text: `call ${i}` }));
        expect(answer.status).toBe(200);
        charged += priceOf(i);
      }
      // The reference client kept its one channel: one deposit, then vouchers, across all three.
      const kinds = proofs.map((p) => (JSON.parse(atob(p)) as { payload: { type: string } }).payload.type);
      expect(kinds.filter((k) => k === 'deposit')).toHaveLength(1);
      expect(runs).toBe(9);

      // The last call was to `shout`: the voucher re-uses the one before, whose terms are `echo`'s.
      const proof = await voucherProof(chain, proofs.at(-2)!, payer, charged + ECHO);
      const answers = await Promise.all([servers[0]!, servers[1]!].map((s) => fetch(`${s.url}/echo`, post({ text: 'twice' }, proof))));
      // One of them ran and was charged; the other, the same voucher for the same call, gets that answer.
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(answers.map((a) => a.headers.get('X-Payment-Replayed')).sort()).toEqual(['true', null].sort());
      const bodies = await Promise.all(answers.map((a) => a.json()));
      expect(bodies[0]).toEqual(bodies[1]);
      expect(runs).toBe(10);
      charged += ECHO;

      // The next voucher sent for two different calls at once: one runs and is charged, the other is refused.
      const next = await voucherProof(chain, proofs.at(-2)!, payer, charged + ECHO);
      const pair = await Promise.all([servers[0]!, servers[1]!].map((s, i) => fetch(`${s.url}/echo`, post({ text: `pair ${i}` }, next))));
      expect(pair.map((a) => a.status).sort()).toEqual([200, 402]);
      const refused = pair.find((a) => a.status === 402)!;
      expect(decodePaymentRequired(refused.headers.get('PAYMENT-REQUIRED')!).error).toBe(
        'invalid_batch_settlement_evm_cumulative_amount_mismatch',
      );
      expect(runs).toBe(11);
      charged += ECHO;

      const before = await receiverState(chain, payee);
      const rounds = await Promise.all(servers.map((s) => s.claimChannels()));
      expect(rounds.reduce((sum, r) => sum + r.channels, 0)).toBe(1);
      expect((await receiverState(chain, payee)).totalClaimed - before.totalClaimed).toBe(charged);
    }, 60_000);

    it('loses no charge when payers call every server at once; the claim equals the sum charged', async () => {
      const payers = await Promise.all([0, 1, 2, 3].map(() => chain.createAccount({ usdc: 1_000_000n })));
      const before = await receiverState(chain, payee);
      const sums = await Promise.all(
        payers.map(async (payer, p) => {
          const { pay } = referenceChannelClient(chain, payer, { depositMultiplier: 20 });
          let sum = 0n;
          for (let i = p; i < p + 7; i++) {
            const answer = await pay(urlOf(i), post({ text: `payer ${p} call ${i}` }));
            expect(answer.status).toBe(200);
            sum += priceOf(i);
          }
          return sum;
        }),
      );
      const charged = sums.reduce((a, b) => a + b, 0n);
      await servers[2]!.claimChannels();
      expect((await receiverState(chain, payee)).totalClaimed - before.totalClaimed).toBe(charged);
      // Everything charged is claimed: no server finds anything left.
      for (const server of servers) expect(await server.claimChannels()).toMatchObject({ channels: 0 });
    }, 60_000);
  });
}
