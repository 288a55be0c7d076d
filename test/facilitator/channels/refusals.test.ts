/**
 * What our facilitator refuses in the `batch-settlement` scheme, with the spec's reason codes: a
 * deposit authorization presented again (after it settled, or twice at once, on one instance or
 * two sharing PostgreSQL: exactly one deposit reaches the chain), a voucher not signed by the
 * payer, a claim above its voucher, a channel naming another receiver authorizer, malformed
 * payloads. Refused requests send nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { createPublicClient, custom, http } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../../src/chain/batch-settlement';
import { channelOperations } from '../../../src/db/schema';
import { type LocalChain, startChain, type TestAccount } from '../../support/chain';
import { databaseKinds, TEST_DATABASE_URL } from '../../support/database';
import { type FacilitatorFixture, startFacilitatorFixture, startTwoInstances } from '../../support/facilitator';
import { body, channelRequirements, claimRowOf, depositPayload, newChannel, PRICE, voucherPayload } from './payloads';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ relayers: 2 });
}, 60_000);
afterAll(() => chain.stop());

const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, any> });
const sentBy = (address: `0x${string}`) => chain.publicClient.getTransactionCount({ address });

/** A funded payer with a deposit payload into a new channel to a new receiver naming our authorizer. */
async function freshDeposit() {
  const payer = (await chain.createAccount({ usdc: 1_000_000n })) as TestAccount;
  const receiver = (await chain.createAccount()).address;
  const { config, channelId } = newChannel(chain, payer, receiver);
  const requirements = channelRequirements(chain, receiver);
  const payload = await depositPayload(chain, payer, config, 10n * PRICE, PRICE);
  return { payer, receiver, config, channelId, requirements, request: body(requirements, payload) };
}

for (const kind of databaseKinds) {
  describe(`batch-settlement refusals (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind, { relayers: [chain.accounts.relayers[0]!] });
    }, 60_000);
    afterAll(() => f.close());

    it('settles a deposit once: the same authorization again is refused at /verify and /settle, and nothing more is sent', async () => {
      const { request, channelId } = await freshDeposit();
      expect(await json(await f.post('/verify', request))).toMatchObject({
        status: 200,
        body: { isValid: true, extra: { channelId, balance: '0' } },
      });
      const settled = await json(await f.post('/settle', request));
      expect(settled.body).toMatchObject({
        success: true,
        amount: `${10n * PRICE}`,
        extra: { channelState: { channelId, balance: `${10n * PRICE}` } },
      });

      const relayer = chain.accounts.relayers[0]!.address;
      const nonce = await sentBy(relayer);
      expect((await json(await f.post('/verify', request))).body).toMatchObject({
        isValid: false,
        invalidReason: 'invalid_batch_settlement_evm_deposit_authorization_used',
      });
      expect((await json(await f.post('/settle', request))).body).toMatchObject({
        success: false,
        errorReason: 'invalid_batch_settlement_evm_deposit_authorization_used',
        transaction: '',
      });
      expect(await sentBy(relayer)).toBe(nonce);
    });

    it('settles one of two concurrent settles of one deposit authorization', async () => {
      const { request, channelId, payer } = await freshDeposit();
      const answers = await Promise.all(
        [f.post('/settle', request), f.post('/settle', request)].map(async (r) => (await json(await r)).body),
      );
      expect(answers.filter((a) => a.success)).toHaveLength(1);
      expect(answers.filter((a) => !a.success).map((a) => a.errorReason)).toEqual([
        'invalid_batch_settlement_evm_deposit_authorization_used',
      ]);
      expect((await chain.publicClient.readContract({ ...contract, functionName: 'channels', args: [channelId] }))[0]).toBe(10n * PRICE);
      const rows = await f.database.db.select().from(channelOperations).where(eq(channelOperations.kind, 'deposit'));
      expect(rows.filter((r) => r.key.includes(payer.address.toLowerCase())).map((r) => r.state)).toEqual(['confirmed']);
    });

    it('names a deposit whose authorization another /settle took between its checks and its simulation "authorization used"', async () => {
      // The facilitator under test simulates through a client that, at its first deposit simulation, first lets the
      // fixture above settle the same deposit: the authorization is then used on chain and recorded, and the
      // simulation reverts. The refusal says why, as when the two requests meet at the record.
      const { request } = await freshDeposit();
      let interposed = false;
      const rpc = http(chain.rpcUrl)({});
      const client = createPublicClient({
        chain: chain.publicClient.chain,
        transport: custom({
          async request(args: { method: string; params?: unknown }) {
            if (args.method === 'eth_estimateGas' && !interposed) {
              interposed = true;
              expect((await json(await f.post('/settle', request))).body.success).toBe(true);
            }
            return rpc.request(args);
          },
        }),
      }) as unknown as LocalChain['publicClient'];
      const late = await startFacilitatorFixture(chain, kind, {
        relayers: [chain.accounts.relayers[1]!],
        database: f.database,
        publicClient: client,
      });
      try {
        expect((await json(await late.post('/settle', request))).body).toMatchObject({
          success: false,
          errorReason: 'invalid_batch_settlement_evm_deposit_authorization_used',
        });
        expect(interposed).toBe(true);
      } finally {
        await late.close();
      }
    });

    it('refuses a voucher not signed by the payer', async () => {
      const { request, payer, config, requirements } = await freshDeposit();
      expect((await json(await f.post('/settle', request))).body.success).toBe(true);
      const forger = await chain.createAccount();
      const forged = await voucherPayload(chain, forger, config, 2n * PRICE);
      expect((await json(await f.post('/verify', body(requirements, forged)))).body).toMatchObject({
        isValid: false,
        invalidReason: 'invalid_batch_settlement_evm_voucher_signature',
      });
      const honest = await voucherPayload(chain, payer, config, 2n * PRICE);
      expect((await json(await f.post('/verify', body(requirements, honest)))).body).toMatchObject({
        isValid: true,
        extra: { totalClaimed: '0' },
      });
      // Above the channel's balance, even signed by the payer.
      const greedy = await voucherPayload(chain, payer, config, 11n * PRICE);
      expect((await json(await f.post('/verify', body(requirements, greedy)))).body).toMatchObject({
        invalidReason: 'invalid_batch_settlement_evm_cumulative_exceeds_balance',
      });
    });

    it('refuses a claim above its voucher, and one of a channel that names another receiver authorizer, sending nothing', async () => {
      const { request, payer, config, requirements } = await freshDeposit();
      expect((await json(await f.post('/settle', request))).body.success).toBe(true);
      const relayer = chain.accounts.relayers[0]!.address;
      const nonce = await sentBy(relayer);
      const operation = { ...requirements, amount: '0', maxTimeoutSeconds: 0, extra: {} };
      const above = { type: 'claim', claims: [await claimRowOf(chain, payer, config, 2n * PRICE, 3n * PRICE)] };
      expect((await json(await f.post('/settle', body(operation, above)))).body).toMatchObject({
        success: false,
        errorReason: 'invalid_batch_settlement_evm_claim_payload',
      });

      const other = (await chain.createAccount()).address;
      const foreign = newChannel(chain, payer, requirements.payTo, other);
      const foreignClaim = { type: 'claim', claims: [await claimRowOf(chain, payer, foreign.config, PRICE, PRICE)] };
      expect((await json(await f.post('/settle', body(operation, foreignClaim)))).body).toMatchObject({
        success: false,
        errorReason: 'invalid_batch_settlement_evm_authorizer_address_mismatch',
      });
      // A deposit whose channel names another authorizer than the requirements.
      const mismatched = await depositPayload(chain, payer, foreign.config, 10n * PRICE, PRICE);
      expect((await json(await f.post('/verify', body(requirements, mismatched)))).body).toMatchObject({
        isValid: false,
        invalidReason: 'invalid_batch_settlement_evm_receiver_authorizer_mismatch',
      });
      expect(await sentBy(relayer)).toBe(nonce);

      // The voucher itself claims fine.
      const good = { type: 'claim', claims: [await claimRowOf(chain, payer, config, 2n * PRICE, 2n * PRICE)] };
      expect((await json(await f.post('/settle', body(operation, good)))).body).toMatchObject({ success: true, amount: '' });
    });

    it('names the spec reason of a malformed payload and answers 400 to a body that is no request', async () => {
      const { requirements } = await freshDeposit();
      expect((await json(await f.post('/verify', body(requirements, { type: 'claim', claims: [] })))).body).toMatchObject({
        isValid: false,
        invalidReason: 'invalid_batch_settlement_evm_payload_type',
      });
      expect((await json(await f.post('/settle', body(requirements, { type: 'settle', receiver: '0x12' })))).body).toMatchObject({
        success: false,
        errorReason: 'invalid_batch_settlement_evm_settle_payload',
      });
      const broken = { ...body(requirements, {}), paymentRequirements: { ...requirements, amount: '-1' } };
      expect((await f.post('/verify', broken)).status).toBe(400);
    });
  });
}

describe.if(Boolean(TEST_DATABASE_URL))('batch-settlement deposits across two instances sharing PostgreSQL', () => {
  it('settles a deposit authorization presented to both at once exactly once', async () => {
    const { a, b, close } = await startTwoInstances(chain);
    try {
      const { request, channelId } = await freshDeposit();
      const answers = await Promise.all(
        [a.post('/settle', request), b.post('/settle', request)].map(async (r) => (await json(await r)).body),
      );
      expect(answers.filter((x) => x.success)).toHaveLength(1);
      expect(answers.find((x) => !x.success)?.errorReason).toBe('invalid_batch_settlement_evm_deposit_authorization_used');
      expect((await chain.publicClient.readContract({ ...contract, functionName: 'channels', args: [channelId] }))[0]).toBe(10n * PRICE);
    } finally {
      await close();
    }
  });
});
