/**
 * A payer's timed withdrawal never costs the receiver (anvil, the real 900 s delay crossed by time
 * travel, the server's clock moved with the chain's): our skill server keeps answering on the
 * channel while its claim of the call still lands before the withdrawal ends, then refuses the
 * payer's vouchers with 402 `invalid_batch_settlement_evm_withdrawal_pending`; it claims every
 * call it answered before the end, trying a refused claim again in time; and once the payer
 * finalizes, the contract holds claimed exactly what the answered calls were charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, skill } from 'skill-market/creator';
import { type ChannelConfig, decodeBase64Json, decodePaymentRequired } from 'skill-market/x402';
import { finishWithdrawal, startWithdrawal } from '../../src/chain/batch-settlement/withdraw';
import { jsonPost } from '../support/auth';
import { chainTime, channelState, type LocalChain, startChain } from '../support/chain';
import { referenceChannelClient, voucherProof } from '../support/channel-server';
import { eventually } from '../support/eventually';
import { startFacilitatorFixture } from '../support/facilitator';
import { loopbackServeOptions } from '../support/skill-server';

const PRICE = 1_000n; // $0.001
const DELAY = 900;
/** The servers' settings: a charge is claimed within 2 minutes, claims are looked for every 50 ms. */
const CLAIM_WITHIN_MS = 120_000;
const CLAIM_INTERVAL_MS = 50;
/** Seconds before the withdrawal's end after which the server takes no voucher (claimWithinMs, a claim round and a minute to mine: 180.05 s), rounded up. */
const CUTOFF = 181n;
const REFUSED_CLAIM = 'invalid_batch_settlement_evm_claim_simulation_failed';

let folder: string;
/** What each test started, stopped after all of them. */
const closing: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'channel-withdrawal-'));
});
afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await rm(folder, { recursive: true, force: true });
});

/** The facilitator as the server reaches it, refusing the next `refuse` claim requests (a failed simulation). */
function refusingFacilitator(chain: LocalChain) {
  const state = { refuse: 0, refused: 0 };
  const send = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { paymentPayload?: { payload?: { type?: string } } }) : {};
    if (state.refuse > 0 && url.endsWith('/settle') && body.paymentPayload?.payload?.type === 'claim') {
      state.refuse--;
      state.refused++;
      return Response.json({ success: false, errorReason: REFUSED_CLAIM, transaction: '', network: chain.network });
    }
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: send, state };
}

/**
 * A chain of its own (time travel moves it far from the wall clock) with our facilitator; our
 * server selling `echo` over channels (claims by withdrawal only, until `claimWithinMs`) on a clock
 * that stands still but for time travel, which moves it with the chain's; a payer with a deposit
 * for ten calls who has made two of them (the second charged half).
 */
async function withdrawingPayer() {
  const chain = await startChain({ payers: 1 });
  closing.push(() => chain.stop());
  const ours = await startFacilitatorFixture(chain, 'embedded');
  closing.push(() => ours.close());
  const listener = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => ours.facilitator.app.handle(request) });
  closing.push(() => listener.stop(true));
  const authorizer = await chain.createAccount();
  const payee = (await chain.createAccount()).address;
  const payer = await chain.createAccount({ usdc: 1_000_000n });
  let nowMs = Number(await chainTime(chain)) * 1000;
  const travelTo = async (at: bigint) => {
    await chain.testClient.setNextBlockTimestamp({ timestamp: at });
    await chain.testClient.mine({ blocks: 1 });
    nowMs = Number(at) * 1000;
  };
  const facilitator = refusingFacilitator(chain);
  const world = { runs: 0, charges: [] as bigint[] };
  const server = await serve(
    {
      echo: skill({ price: '$0.001' }, (input: { i: number; half?: boolean }, context) => {
        world.runs++;
        if (input.half) context.charge(PRICE / 2n);
        return { i: input.i };
      }),
    },
    loopbackServeOptions(chain, `http://127.0.0.1:${listener.port}`, payee, {
      rpcUrl: chain.rpcUrl,
      fetch: facilitator.fetch,
      now: () => nowMs,
      channels: {
        receiverAuthorizerKey: authorizer.privateKey,
        store: join(folder, payee),
        withdrawDelay: DELAY,
        claimAbove: '$100',
        claimWithinMs: CLAIM_WITHIN_MS,
        claimIntervalMs: CLAIM_INTERVAL_MS,
      },
    }),
  );
  closing.push(() => server.stop());
  const url = `${server.url}/echo`;

  const charged = () => world.charges.reduce((sum, c) => sum + c, 0n);
  /** Checks the call was answered and keeps what it was charged (its PAYMENT-RESPONSE). */
  const answered = (res: Response) => {
    expect(res.status).toBe(200);
    const receipt = decodeBase64Json(res.headers.get('PAYMENT-RESPONSE')!, 'malformed_payment', 'receipt') as {
      extra: { chargedAmount: string };
    };
    world.charges.push(BigInt(receipt.extra.chargedAmount));
  };
  const { pay, proofs } = referenceChannelClient(chain, payer, { depositMultiplier: 10 });
  answered(await pay(url, jsonPost({ i: 1 })));
  answered(await pay(url, jsonPost({ i: 2, half: true })));
  const config = (decodeBase64Json(proofs[0]!, 'malformed_payment', 'proof') as { payload: { channelConfig: ChannelConfig } }).payload
    .channelConfig;
  return {
    chain,
    world,
    facilitator: facilitator.state,
    travelTo,
    answered,
    charged,
    /** A call paid by the payer's next voucher: what was charged plus the price. */
    call: async (input: { i: number; half?: boolean }) => {
      const proof = await voucherProof(chain, proofs[0]!, payer, charged() + PRICE);
      return fetch(url, jsonPost(input, { 'PAYMENT-SIGNATURE': proof }));
    },
    claimed: () => channelState(chain, config).then((s) => s.totalClaimed),
    /** Starts the payer's timed withdrawal of all it holds unclaimed; answers when it can be finalized (unix seconds). */
    async startWithdrawal() {
      await startWithdrawal({ rpcUrl: chain.rpcUrl, account: payer, config });
      return BigInt((await channelState(chain, config)).withdrawInitiatedAt) + BigInt(DELAY);
    },
    /** Once the delay has ended: the payer finalizes; the channel as the contract holds it after. */
    async finalize(readyAt: bigint) {
      await travelTo(readyAt);
      await finishWithdrawal({ rpcUrl: chain.rpcUrl, account: payer, config });
      return { channel: await channelState(chain, config), payerBalance: await chain.balanceOf(payer.address) };
    },
  };
}

describe('a payer’s timed withdrawal', () => {
  it('is answered while a claim still lands before its end, then refused; every answered call is claimed before the payer finalizes', async () => {
    const payer = await withdrawingPayer();
    const { chain, world, travelTo, answered, charged, call, claimed } = payer;

    // The payer starts the withdrawal and keeps calling: answered (the server has not seen the
    // withdrawal yet), and claimed as soon as the server reads it on chain, ten seconds later:
    // nothing else makes it claim (no claim by amount, none by age yet).
    const readyAt = await payer.startWithdrawal();
    answered(await call({ i: 3 }));
    await travelTo((await chainTime(chain)) + 10n);
    await eventually(claimed, (c) => c === charged(), 'the server claims what it answered once it reads the withdrawal', 30_000);

    // Just before the cutoff a call is answered; its first claim is refused by the facilitator, and
    // tried again within a quarter of the time left (47.75 s), not a minute.
    payer.facilitator.refuse = 1;
    await travelTo(readyAt - CUTOFF - 10n);
    answered(await call({ i: 4, half: true }));
    await eventually(
      () => payer.facilitator.refused,
      (n) => n === 1,
      'the claim of the last answered call is refused once',
    );

    // Past the cutoff (50 s later) the payer's vouchers are refused, the withdrawal named; nothing is run or charged.
    await travelTo(readyAt - CUTOFF + 40n);
    const refused = await call({ i: 5 });
    expect(refused.status).toBe(402);
    expect(decodePaymentRequired(refused.headers.get('PAYMENT-REQUIRED')!).error).toBe('invalid_batch_settlement_evm_withdrawal_pending');
    expect(world.runs).toBe(4);

    // The refused claim is tried again and lands before the withdrawal's end.
    await eventually(claimed, (c) => c === charged(), 'every answered call is claimed before the withdrawal ends', 30_000);
    expect(await chainTime(chain)).toBeLessThan(readyAt);

    // The delay ends; the payer finalizes and takes back the rest; the receiver keeps every answered call.
    const after = await payer.finalize(readyAt);
    expect(world.charges).toEqual([PRICE, PRICE / 2n, PRICE, PRICE / 2n]);
    expect(after.channel).toMatchObject({ totalClaimed: charged(), balance: charged(), withdrawInitiatedAt: 0 });
    expect(after.payerBalance).toBe(1_000_000n - charged());
  }, 120_000);

  it('seen only on chain (the payer calls no more), its claims refused, is claimed again sooner as its end nears', async () => {
    const payer = await withdrawingPayer();
    const { chain, travelTo, charged, claimed } = payer;
    payer.facilitator.refuse = 2;
    const readyAt = await payer.startWithdrawal();
    // The server reads the withdrawal on chain; its claim is refused (tried again in a minute, the end far off).
    await travelTo((await chainTime(chain)) + 10n);
    await eventually(
      () => payer.facilitator.refused,
      (n) => n === 1,
      'the first claim is refused',
    );
    // 100 s before the end it is tried again and refused: the next try comes within 25 s, not a minute.
    await travelTo(readyAt - 100n);
    await eventually(
      () => payer.facilitator.refused,
      (n) => n === 2,
      'the second claim is refused',
    );
    await travelTo(readyAt - 70n);
    await eventually(claimed, (c) => c === charged(), 'the answered calls are claimed before the withdrawal ends', 30_000);

    const after = await payer.finalize(readyAt);
    expect(after.channel).toMatchObject({ totalClaimed: PRICE + PRICE / 2n, balance: PRICE + PRICE / 2n });
    expect(after.payerBalance).toBe(1_000_000n - PRICE - PRICE / 2n);
  }, 120_000);
});
