/**
 * Cooperative refunds of our skill server through our facilitator, when the server's channels name
 * the facilitator's receiver authorizer: the server sends the key bound to its payout address
 * (`facilitatorApiKey`, FACILITATOR_RECEIVER_KEYS on the facilitator), so the reference client's own
 * refund (GET on the skill's path) returns deposit − charged; a server without a bound key is
 * refused with the reason, and the channel keeps its balance. Only the payer moves its channel: a
 * stranger who names a channel with a voucher it did not sign learns nothing of the channel (no
 * charge, no latest voucher in the 402), so it cannot build the payer's refund either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import {
  batchSettlementDomain,
  decodeBase64Json,
  decodePaymentRequired,
  encodeBase64Json,
  type Hex,
  voucherTypes,
} from 'skill-market/x402';
import { jsonPost } from '../support/auth';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { referenceChannelClient } from '../support/channel-server';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { loopbackServeOptions } from '../support/skill-server';

const PRICE = 1_000n; // $0.001
const DEPOSIT = 10n * PRICE;
const KEY = 'creator-receiver-key-0123456789';
let chain: LocalChain;
let facilitator: FacilitatorFixture;
let facilitatorUrl: string;
let listener: ReturnType<typeof Bun.serve>;
let folder: string;
let bound: `0x${string}`;
const servers: SkillServer[] = [];

beforeAll(async () => {
  chain = await startChain({});
  bound = (await chain.createAccount()).address;
  facilitator = await startFacilitatorFixture(chain, 'embedded', { config: { receiverKeys: [{ receiver: bound, key: KEY }] } });
  listener = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => facilitator.facilitator.app.handle(request) });
  facilitatorUrl = `http://127.0.0.1:${listener.port}`;
  folder = await mkdtemp(join(tmpdir(), 'channel-refund-'));
}, 60_000);
afterAll(async () => {
  for (const server of servers) await server.stop();
  listener?.stop(true);
  await facilitator?.close();
  await chain?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** Our skill server paying `payee`, its channels naming the facilitator's authorizer (learnt from /supported). */
async function channelServer(payee: `0x${string}`, facilitatorApiKey?: string) {
  let runs = 0;
  const server = await serve(
    { echo: skill({ price: '$0.001' }, (input: unknown) => ({ echo: input, run: ++runs })) },
    loopbackServeOptions(chain, facilitatorUrl, payee, {
      ...(facilitatorApiKey ? { facilitatorApiKey } : {}),
      channels: { store: join(folder, payee), withdrawDelay: 900, claimWithinMs: 600_000 },
    }),
  );
  servers.push(server);
  return { server, runs: () => runs };
}

/** The reference batch-settlement client (ten calls per deposit). */
function referenceClient(account: TestAccount) {
  const { pay, scheme } = referenceChannelClient(chain, account, { depositMultiplier: 10 });
  return { scheme, call: (url: string, i: number) => pay(url, jsonPost({ i })) };
}

describe('refunds through our facilitator’s receiver authorizer', () => {
  it('the server with its bound key refunds the reference client: the payer gets back deposit − charged', async () => {
    const { server, runs } = await channelServer(bound, KEY);
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { scheme, call } = referenceClient(payer);
    for (const i of [1, 2, 3]) expect((await call(`${server.url}/echo`, i)).status).toBe(200);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - DEPOSIT);

    const receipt = await scheme.refund(`${server.url}/echo`);
    expect(receipt).toMatchObject({ success: true, amount: `${DEPOSIT - 3n * PRICE}` });
    expect(runs()).toBe(3);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 3n * PRICE);
  });

  it('a stranger naming the payer’s channel learns nothing of it and cannot refund it; the payer can', async () => {
    const { server, runs } = await channelServer(bound, KEY);
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const stranger = await chain.createAccount();
    const { pay, proofs, scheme } = referenceChannelClient(chain, payer, { depositMultiplier: 10 });
    for (const i of [1, 2]) expect((await pay(`${server.url}/echo`, jsonPost({ i }))).status).toBe(200);
    // The stranger knows the channel (its id and config are public on chain) and signs a voucher itself.
    const sent = decodeBase64Json(proofs[0]!, 'malformed_payment', 'proof') as {
      accepted: unknown;
      payload: { channelConfig: unknown; voucher: { channelId: Hex } };
    };
    const channelId = sent.payload.voucher.channelId;
    const junk = await stranger.signTypedData({
      domain: batchSettlementDomain(chain.chainId),
      types: voucherTypes,
      primaryType: 'Voucher',
      message: { channelId, maxClaimableAmount: 0n },
    });
    for (const type of ['voucher', 'refund'] as const) {
      const payment = encodeBase64Json({
        x402Version: 2,
        accepted: sent.accepted,
        payload: { type, channelConfig: sent.payload.channelConfig, voucher: { channelId, maxClaimableAmount: '0', signature: junk } },
      });
      const headers = { 'PAYMENT-SIGNATURE': payment };
      const answer = await fetch(`${server.url}/echo`, type === 'refund' ? { headers } : jsonPost({ i: 9 }, headers));
      expect(answer.status).toBe(402);
      const terms = decodePaymentRequired(answer.headers.get('PAYMENT-REQUIRED')!);
      expect(terms.error).toBe('invalid_batch_settlement_evm_voucher_signature');
      const extra = terms.accepts.find((a) => a.scheme === 'batch-settlement')!.extra as Record<string, unknown>;
      expect(extra.channelState).toBeUndefined();
      expect(extra.voucherState).toBeUndefined();
    }
    expect(runs()).toBe(2);
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - DEPOSIT);
    // The payer's own refund goes through.
    expect(await scheme.refund(`${server.url}/echo`)).toMatchObject({ success: true, amount: `${DEPOSIT - 2n * PRICE}` });
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 2n * PRICE);
  });

  it('a server without a bound key is refused with the reason, and the deposit stays in the channel', async () => {
    const payee = (await chain.createAccount()).address;
    const { server } = await channelServer(payee);
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const { scheme, call } = referenceClient(payer);
    for (const i of [1, 2]) expect((await call(`${server.url}/echo`, i)).status).toBe(200);
    await expect(scheme.refund(`${server.url}/echo`)).rejects.toThrow('invalid_batch_settlement_evm_refund_receiver_consent_required');
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - DEPOSIT);
  });
});
