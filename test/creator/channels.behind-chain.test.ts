/**
 * A channel state that lost its latest records (a damaged journal marks every mirror stale) and is
 * behind what the chain shows claimed: the payer's next voucher, ahead of the state, is verified
 * with the facilitator instead of corrected, the charge is raised to the chain's claimed total, and
 * the call is served and charged on from there: no call the chain proves is given away. A voucher
 * ahead of a state whose mirror is fresh still gets the corrective 402, and one its payer did not
 * sign is refused here without asking the facilitator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { LocalAccount } from 'viem';
import { type ChannelState, memoryChannelStore, serve, skill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired, type Hex } from 'skill-market/x402';
import { jsonPost } from '../support/auth';
import { channelTotals, type LocalChain, startChain } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { referenceChannelClient, voucherProof } from '../support/channel-server';
import { loopbackServeOptions } from '../support/skill-server';

const PRICE = 1_000n;
let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;
/** The facilitator as the servers reach it, counting the `/verify` requests. */
let counting: ReturnType<typeof Bun.serve>;
let verifies = 0;
const servers: SkillServer[] = [];

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  counting = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      const { pathname } = new URL(request.url);
      if (pathname === '/verify') verifies++;
      const body = request.method === 'POST' ? await request.text() : undefined;
      const answer = await fetch(`${facilitator.url}${pathname}`, { method: request.method, headers: request.headers, body });
      return new Response(await answer.text(), { status: answer.status, headers: { 'content-type': 'application/json' } });
    },
  });
}, 60_000);
afterAll(async () => {
  for (const server of servers) await server.stop();
  counting?.stop(true);
  facilitator?.stop();
  await chain?.stop();
});

/** Our server over a store the test can set back; three calls answered and claimed on chain. */
async function claimedThree() {
  const store = memoryChannelStore();
  const authorizer = await chain.createAccount();
  const payee = (await chain.createAccount()).address;
  const server = await serve(
    { echo: skill({ price: '$0.001' }, (input: unknown) => ({ echo: input })) },
    loopbackServeOptions(chain, `http://127.0.0.1:${counting.port}`, payee, {
      channels: { receiverAuthorizerKey: authorizer.privateKey, store, withdrawDelay: 900, claimWithinMs: 600_000 },
    }),
  );
  servers.push(server);
  const payer = await chain.createAccount({ usdc: 1_000_000n });
  const { pay, proofs } = referenceChannelClient(chain, payer, { depositMultiplier: 10 });
  const states: ChannelState[] = [];
  let channelId: Hex | undefined;
  for (let i = 1; i <= 3; i++) {
    expect((await pay(`${server.url}/echo`, jsonPost({ i }))).status).toBe(200);
    const [state] = await store.list();
    states.push(state!);
    channelId = state!.channelId;
  }
  await server.claimChannels();
  expect((await channelTotals(chain, channelId!)).totalClaimed).toBe(3n * PRICE);
  /** Sets the channel back to its state after call `n`, its mirror as `syncedAt` says. */
  const setBack = (n: number, syncedAt: number) =>
    store.update(channelId!, async () => ({ next: { ...states[n - 1]!, onchainSyncedAt: syncedAt }, value: undefined }));
  const voucher = async (amount: bigint, i: number, signer: LocalAccount = payer) =>
    fetch(`${server.url}/echo`, {
      ...jsonPost({ i }),
      headers: { 'content-type': 'application/json', 'PAYMENT-SIGNATURE': await voucherProof(chain, proofs.at(-1)!, signer, amount) },
    });
  return { server, store, channelId: channelId!, setBack, voucher };
}

describe('a channel state behind the chain', () => {
  it('serves the next voucher at the chain’s claimed total plus the price, and claims it', async () => {
    const { server, store, channelId, setBack, voucher } = await claimedThree();
    // Lost: the records of calls 2 and 3 and of the claim; the mirror is stale, as after a damaged journal.
    await setBack(1, 0);
    const res = await voucher(4n * PRICE, 4);
    expect(res.status).toBe(200);
    expect((await store.get(channelId))?.chargedCumulativeAmount).toBe(String(4n * PRICE));
    await server.claimChannels();
    expect((await channelTotals(chain, channelId)).totalClaimed).toBe(4n * PRICE);
  });

  it('answers a voucher ahead of a fresh state with the corrective 402, its state as it is', async () => {
    const { setBack, voucher } = await claimedThree();
    await setBack(1, Date.now());
    const res = await voucher(4n * PRICE, 4);
    expect(res.status).toBe(402);
    const required = decodePaymentRequired(res.headers.get('payment-required') ?? '');
    expect(required.error).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    const offer = required.accepts.find((a) => a.scheme === 'batch-settlement')!;
    expect((offer.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount).toBe(String(PRICE));
  });

  it('refuses a voucher ahead of a stale state that its payer did not sign, without asking the facilitator', async () => {
    const { store, channelId, setBack, voucher } = await claimedThree();
    await setBack(1, 0);
    const before = verifies;
    const res = await voucher(4n * PRICE, 4, await chain.createAccount());
    expect(res.status).toBe(402);
    expect(decodePaymentRequired(res.headers.get('payment-required') ?? '').error).toBe('invalid_batch_settlement_evm_voucher_signature');
    expect(verifies).toBe(before);
    expect((await store.get(channelId))?.chargedCumulativeAmount).toBe(String(PRICE));
  });
});
