/**
 * A creator's payout ledger as CSV: per skill and day, the payments verified on chain (anvil with
 * our EIP-3009 token), totals equal to what the chain moved to the creator's payout addresses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address, Hash } from 'viem';
import { bearer, jsonPost } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { startChain, usdCoinAbi, type LocalChain } from '../support/chain';
import { databaseKinds } from '../support/database';
import { registryFixture, chainVerifier } from '../support/registry';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, payees: 1 });
}, 60_000);
afterAll(() => chain?.stop());

for (const kind of databaseKinds) {
  describe(`GET /analytics/revenue.csv on ${kind}`, () => {
    const fx = registryFixture(kind);
    let creator: Creator;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
    });

    const list = async (price: string) => {
      const payToAccount = await chain.createAccount();
      await creator.prove(payToAccount);
      const payTo = payToAccount.address;
      const skill = await json(await creator.register({ price, paymentAddress: payTo, network: chain.network }));
      return { slug: skill.slug as string, payTo };
    };
    /** A real transfer of `amount` to the skill, reported credential-free, then checked on chain. */
    const pay = async (skill: { slug: string; payTo: Address }, amount: bigint, price: string) => {
      const hash: Hash = await chain
        .walletClient(chain.accounts.payer)
        .writeContract({ address: chain.token.address, abi: usdCoinAbi, functionName: 'transfer', args: [skill.payTo, amount] });
      await chain.publicClient.waitForTransactionReceipt({ hash });
      const res = await fx.request(
        '/analytics/usage',
        jsonPost({ skillSlug: skill.slug, consumerAddress: chain.accounts.payer.address, paymentTxHash: hash, amount: price }),
      );
      expect(res.status).toBe(200);
    };
    const verify = () => chainVerifier(fx, chain).verifyNow();
    const csv = async (query = '') => {
      const res = await fx.request(`/analytics/revenue.csv${query}`, { headers: bearer(creator.key) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/csv');
      return (await res.text()).trimEnd().split('\r\n');
    };

    it('lists verified revenue per skill and day, with a total equal to what the chain moved to the skills', async () => {
      const a = await list('$0.001');
      const b = await list('$0.25');
      const day1 = fx.clock.now().toISOString().slice(0, 10);
      await pay(a, 1000n, '$0.001');
      await pay(a, 1000n, '$0.001');
      await pay(b, 250_000n, '$0.25');
      fx.clock.advance(86_400);
      const day2 = fx.clock.now().toISOString().slice(0, 10);
      await pay(a, 1000n, '$0.001');
      // A report of a payment that never happened is never revenue.
      await fx.request(
        '/analytics/usage',
        jsonPost({
          skillSlug: a.slug,
          consumerAddress: chain.accounts.payer.address,
          paymentTxHash: `0x${'ab'.repeat(32)}`,
          amount: '$0.001',
        }),
      );
      await verify();

      const lines = await csv();
      const row = (day: string, slug: string, calls: number, usdc: string, atomic: number) =>
        `${day},${slug},${calls},${usdc},${atomic},${atomic},0,0,0,0`;
      const expected = [
        'date,skill,paid_calls,revenue_usdc,revenue_atomic,exact_atomic,upto_atomic,channel_claimed_atomic,channel_settled_atomic,channel_unclaimed_atomic',
        ...[
          [day1, a.slug, 2, '0.002000', 2000],
          [day1, b.slug, 1, '0.250000', 250000],
        ]
          .sort((x, y) => String(x[1]).localeCompare(String(y[1])))
          .map(([d, s, c, u, n]) => row(d as string, s as string, c as number, u as string, n as number)),
        row(day2, a.slug, 1, '0.001000', 1000),
        'total,,4,0.253000,253000,253000,0,0,0,0',
      ];
      expect(lines).toEqual(expected);
      // The chain agrees: what reached the two payout addresses is the total.
      expect((await chain.balanceOf(a.payTo)) + (await chain.balanceOf(b.payTo))).toBe(253_000n);

      // Days are inclusive bounds.
      expect(await csv(`?from=${day2}`)).toEqual([
        expected[0]!,
        row(day2, a.slug, 1, '0.001000', 1000),
        'total,,1,0.001000,1000,1000,0,0,0,0',
      ]);
      expect((await csv(`?to=${day1}`)).at(-1)).toBe('total,,3,0.252000,252000,252000,0,0,0,0');
    }, 60_000);

    it('asks for a creator credential and refuses a malformed day', async () => {
      expect((await fx.request('/analytics/revenue.csv')).status).toBe(401);
      const bad = await fx.request('/analytics/revenue.csv?from=yesterday', { headers: bearer(creator.key) });
      expect(bad.status).toBe(400);
      expect(await json(bad)).toMatchObject({ code: 'VALIDATION', error: expect.stringContaining('from') });
    });

    it('refuses a day the calendar has not or out of range, naming the parameter, and takes the widest range there is', async () => {
      for (const [name, value] of [
        ['from', '2026-13-45'],
        ['to', '2026-02-30'],
        ['from', '2025-02-29'],
        ['to', '0000-01-01'],
        ['from', '1969-12-31'],
        ['to', '10000-01-01'],
        ['from', '2026-1-1'],
        ['to', ''],
      ] as const) {
        const res = await fx.request(`/analytics/revenue.csv?${name}=${value}`, { headers: bearer(creator.key) });
        expect({ value, status: res.status, body: await json(res) }).toMatchObject({
          value,
          status: 400,
          body: {
            code: 'VALIDATION',
            error: `Invalid request: query field "${name}": must be a day YYYY-MM-DD from 1970-01-01 to 9999-12-31`,
          },
        });
      }
      const all = await csv('');
      expect(await csv('?from=1970-01-01&to=9999-12-31')).toEqual(all);
      expect((await csv('?from=2024-02-29&to=2024-02-29')).at(-1)).toBe('total,,0,0.000000,0,0,0,0,0,0'); // a leap day
    });
  });
}
