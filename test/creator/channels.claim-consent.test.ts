/**
 * Our skill server's claims through a closed facilitator (`market facilitator`'s default in
 * production), its channels naming the facilitator's receiver authorizer: the server sends the key
 * bound to its payout address (`facilitatorApiKey`), so its claimer's claims are signed; a server
 * without it is refused with the reason and nothing is claimed. A channel whose charge the chain
 * already holds claimed (a claim whose answer was lost) is refused as a no-op by the facilitator,
 * and the claimer takes it as claimed instead of retrying it forever.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { type ChannelConfig, decodeBase64Json, type Hex } from 'skill-market/x402';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi, channelIdOf } from '../../src/chain/batch-settlement';
import { jsonPost } from '../support/auth';
import { type LocalChain, signVoucher, startChain, type TestAccount } from '../support/chain';
import { referenceChannelClient } from '../support/channel-server';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { loopbackServeOptions } from '../support/skill-server';

const PRICE = 1_000n; // $0.001
const KEY = 'creator-receiver-key-0123456789';
const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;
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
  facilitator = await startFacilitatorFixture(chain, 'embedded', {
    config: { open: false, receiverKeys: [{ receiver: bound, key: KEY }] },
  });
  listener = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => facilitator.facilitator.app.handle(request) });
  facilitatorUrl = `http://127.0.0.1:${listener.port}`;
  folder = await mkdtemp(join(tmpdir(), 'channel-claim-consent-'));
}, 60_000);
afterAll(async () => {
  for (const server of servers) await server.stop();
  listener?.stop(true);
  await facilitator?.close();
  await chain?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** Our skill server paying `payee`, its channels naming the facilitator's authorizer; claims only when asked. */
async function channelServer(payee: `0x${string}`, facilitatorApiKey?: string) {
  const server = await serve(
    { echo: skill({ price: '$0.001' }, (input: unknown) => ({ echo: input })) },
    loopbackServeOptions(chain, facilitatorUrl, payee, {
      ...(facilitatorApiKey ? { facilitatorApiKey } : {}),
      channels: { store: join(folder, payee), withdrawDelay: 900, claimWithinMs: 600_000 },
    }),
  );
  servers.push(server);
  return server;
}

/** Three paid calls of a new payer on `server`: the payer and its channel. */
async function threeCalls(server: SkillServer) {
  const payer = (await chain.createAccount({ usdc: 1_000_000n })) as TestAccount;
  const { pay, proofs } = referenceChannelClient(chain, payer, { depositMultiplier: 10 });
  for (const i of [1, 2, 3]) expect((await pay(`${server.url}/echo`, jsonPost({ i }))).status).toBe(200);
  const proof = decodeBase64Json(proofs[0]!, 'malformed_payment', 'proof') as { payload: { channelConfig: ChannelConfig } };
  const config = proof.payload.channelConfig;
  return { payer, config, channelId: channelIdOf(config, chain.chainId) };
}

const claimed = async (channelId: Hex) =>
  (await chain.publicClient.readContract({ ...contract, functionName: 'channels', args: [channelId] }))[1];
const sent = () => chain.publicClient.getTransactionCount({ address: chain.accounts.relayer.address });

describe('our skill server’s claims through a closed facilitator', () => {
  it('claims what it charged with its bound key', async () => {
    const server = await channelServer(bound, KEY);
    const { channelId } = await threeCalls(server);
    expect(await server.claimChannels()).toMatchObject({ channels: 1 });
    expect(await claimed(channelId)).toBe(3n * PRICE);
  });

  it('is refused without a bound key, with the reason, and nothing is claimed', async () => {
    const payee = (await chain.createAccount()).address;
    const server = await channelServer(payee);
    const { channelId } = await threeCalls(server);
    const before = await sent();
    await expect(server.claimChannels()).rejects.toThrow('invalid_batch_settlement_evm_claim_receiver_consent_required');
    expect(await sent()).toBe(before);
    expect(await claimed(channelId)).toBe(0n);
  });

  it('takes a channel the chain holds claimed already as claimed, sending nothing', async () => {
    const server = await channelServer(bound, KEY);
    const { payer, config, channelId } = await threeCalls(server);
    // The charge claimed on another voucher of the payer's (a claim whose answer the server never saw).
    const row = {
      voucher: { channel: config, maxClaimableAmount: `${10n * PRICE}` },
      signature: await signVoucher(chain, payer, config, 10n * PRICE),
      totalClaimed: `${3n * PRICE}`,
    };
    const operation = {
      scheme: 'batch-settlement',
      network: chain.network,
      amount: '0',
      asset: chain.token.address,
      payTo: bound,
      maxTimeoutSeconds: 0,
      extra: {},
    };
    const request = {
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: operation, payload: { type: 'claim', claims: [row] } },
      paymentRequirements: operation,
    };
    expect(
      ((await (await facilitator.post('/settle', request, { authorization: `Bearer ${KEY}` })).json()) as { success: boolean }).success,
    ).toBe(true);

    const before = await sent();
    // No claim goes out, only the sweep of what the chain holds claimed.
    expect(await server.claimChannels()).toMatchObject({ channels: 1, claim: '', settle: expect.any(String) });
    expect(await sent()).toBe(before + 1);
    expect(await server.claimChannels()).toEqual({ channels: 0 });
    expect(await claimed(channelId)).toBe(3n * PRICE);
  });
});
