import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import { type Hex, parseGwei } from 'viem';
import { createPaymentStore } from '../../src/facilitator/schemes/exact/store';
import { type LocalChain, randomNonce, signAuthorization, startChain, usdCoinAbi, vrsArgs } from '../support/chain';
import { databaseKinds } from '../support/database';
import { lastReading } from '../support/eventually';
import {
  PRICE,
  type FacilitatorFixture,
  manualClock,
  paymentBody,
  requirementsFor,
  startFacilitatorFixture,
  v2Body,
  wireAuthorization,
} from '../support/facilitator';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 2, relayers: 2 });
}, 60_000);
afterAll(() => chain.stop());
afterEach(() => chain.testClient.setAutomine(true));

const pendingNonce = (address: Hex) => chain.publicClient.getTransactionCount({ address, blockTag: 'pending' });

for (const kind of databaseKinds) {
  describe(`settlements whose receipt is not seen in time (${kind} database)`, () => {
    let f: FacilitatorFixture;
    const clock = manualClock();
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind, { clock, config: { receiptTimeoutMs: 150 } });
    }, 60_000);
    afterAll(() => f.close());
    const relayer = () => chain.accounts.relayer.address;

    it('answers settlement_pending with the hash, refuses a retry without re-sending, and reconciles to confirmed', async () => {
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address));
      expect((await f.facilitator.verify(body)).isValid).toBe(true);
      await chain.testClient.setAutomine(false);
      const nonceBefore = await pendingNonce(relayer());

      const pending = await f.facilitator.settle(body);
      expect(pending).toMatchObject({
        success: false,
        errorReason: 'settlement_pending',
        payer: chain.accounts.payer.address,
        network: chain.network,
      });
      expect(pending.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect((await (await f.get(`/receipts/${pending.transaction}`)).json()) as object).toMatchObject({
        status: 'pending',
        finalizedAt: null,
      });

      expect(await f.facilitator.settle(body)).toMatchObject({
        success: false,
        errorReason: 'invalid_exact_evm_nonce_already_used',
        transaction: '',
      });
      expect(await pendingNonce(relayer())).toBe(nonceBefore + 1);
      expect(await f.facilitator.reconcile()).toMatchObject({ checked: 1, stillPending: 1 });

      await chain.testClient.mine({ blocks: 1 });
      expect(await f.facilitator.reconcile()).toMatchObject({ checked: 1, confirmed: 1 });
      expect(await f.facilitator.receipt(pending.transaction)).toMatchObject({ status: 'confirmed', blockNumber: expect.any(Number) });
      expect(await chain.balanceOf(payee.address)).toBe(PRICE);
      expect(await f.facilitator.reconcile()).toMatchObject({ checked: 0 });
    });

    it('tells a resource server that lost the answer of /settle what became of the authorization, before and after the reconciler', async () => {
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address));
      const a = body.paymentPayload.payload.authorization;
      const path = `/settlements/${chain.network}/${chain.token.address}/${a.from}/${a.nonce}`;
      const status = async (p = path) => {
        const res = await f.get(p);
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      expect(await status()).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
      expect((await f.facilitator.verify(body)).isValid).toBe(true);
      // Verified but never settled: the resource server may still ask for the settlement.
      expect(await status()).toMatchObject({
        status: 200,
        body: { status: 'unsettled', transaction: '', payer: chain.accounts.payer.address, network: chain.network },
      });

      await chain.testClient.setAutomine(false);
      const pending = await f.facilitator.settle(body);
      expect(pending.errorReason).toBe('settlement_pending');
      // Addresses in any case, the nonce in upper case: the same authorization.
      const shouted = `/settlements/${encodeURIComponent(chain.network)}/${chain.token.address.toLowerCase()}/${a.from.toLowerCase()}/0x${a.nonce.slice(2).toUpperCase()}`;
      expect(await status(shouted)).toMatchObject({ status: 200, body: { status: 'pending', transaction: pending.transaction } });

      await chain.testClient.mine({ blocks: 1 });
      expect(await f.facilitator.reconcile()).toMatchObject({ confirmed: 1 });
      expect(await status()).toMatchObject({ status: 200, body: { status: 'settled', transaction: pending.transaction } });
      expect((await status(`/settlements/${chain.network}/${chain.token.address}/${a.from}/0x1234`)).status).toBe(400);
      expect((await status(`/settlements/nowhere/${chain.token.address}/${a.from}/${a.nonce}`)).status).toBe(400);
    });

    it('answers POST /settlements for several authorizations at once, in order, null for one never accepted', async () => {
      const payee = await chain.createAccount();
      const settled = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address));
      const verified = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address));
      const unknown = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address));
      expect((await f.facilitator.verify(settled)).isValid).toBe(true);
      const paid = await f.facilitator.settle(settled);
      expect(paid.success).toBe(true);
      expect((await f.facilitator.verify(verified)).isValid).toBe(true);
      const keyOf = (body: typeof settled, shout = false) => {
        const a = body.paymentPayload.payload.authorization;
        return {
          network: chain.network,
          asset: shout ? chain.token.address.toLowerCase() : chain.token.address,
          payer: shout ? a.from.toLowerCase() : a.from,
          nonce: shout ? `0x${a.nonce.slice(2).toUpperCase()}` : a.nonce,
        };
      };
      const query = (authorizations: unknown) =>
        f.facilitator.app.handle(
          new Request('http://localhost/settlements', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ authorizations }),
          }),
        );
      const res = await query([keyOf(unknown), keyOf(settled, true), keyOf(verified)]);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        settlements: [
          null,
          await (
            await f.get(`/settlements/${chain.network}/${chain.token.address}/${keyOf(settled).payer}/${keyOf(settled).nonce}`)
          ).json(),
          { status: 'unsettled', transaction: '', payer: chain.accounts.payer.address, network: chain.network },
        ],
      });
      expect((await (await query([keyOf(settled)])).json()) as unknown).toMatchObject({
        settlements: [{ status: 'settled', transaction: paid.transaction }],
      });
      // Bad queries: none, more than 100, a malformed nonce, a network that is not CAIP-2.
      expect((await query([])).status).toBe(400);
      expect((await query(Array.from({ length: 101 }, () => keyOf(settled)))).status).toBe(400);
      expect((await query([{ ...keyOf(settled), nonce: '0x1234' }])).status).toBe(400);
      expect((await query([{ ...keyOf(settled), network: 'nowhere' }])).status).toBe(400);
    });

    it('reconciles a pending transfer that reverts (the authorization was used by another transaction first) to reverted', async () => {
      const payee = await chain.createAccount();
      const requirements = requirementsFor(chain, payee.address);
      const signed = await signAuthorization(chain, chain.accounts.payer, { to: payee.address, value: PRICE });
      await chain.testClient.setAutomine(false);

      const pending = await f.facilitator.settle(v2Body(requirements, wireAuthorization(signed.authorization), signed.signature));
      expect(pending.errorReason).toBe('settlement_pending');
      // Someone else submits the same authorization with a higher tip: it is mined first.
      await chain.walletClient(chain.accounts.payers[1]!).writeContract({
        address: chain.token.address,
        abi: usdCoinAbi,
        functionName: 'transferWithAuthorization',
        args: vrsArgs(signed),
        gas: 200_000n,
        maxFeePerGas: parseGwei('500'),
        maxPriorityFeePerGas: parseGwei('100'),
      });
      await chain.testClient.mine({ blocks: 1 });

      expect(await f.facilitator.reconcile()).toMatchObject({ reverted: 1 });
      expect(await f.facilitator.receipt(pending.transaction)).toMatchObject({ status: 'reverted' });
      expect(await chain.balanceOf(payee.address)).toBe(PRICE); // paid once, by the other transaction
    });

    it('reconciles a transfer that is never mined to dropped once the authorization expired, and the relayer recovers its nonce', async () => {
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address));
      await chain.testClient.setAutomine(false);
      const pending = await f.facilitator.settle(body);
      expect(pending.errorReason).toBe('settlement_pending');
      await chain.testClient.dropTransaction({ hash: pending.transaction as Hex });

      expect(await f.facilitator.reconcile()).toMatchObject({ stillPending: 1 }); // not expired yet: it may still appear
      clock.advance(600); // past validBefore (now + 60) and the 120 s grace
      expect(await f.facilitator.reconcile()).toMatchObject({ dropped: 1 });
      expect(await f.facilitator.receipt(pending.transaction)).toMatchObject({
        status: 'dropped',
        error: expect.stringContaining('Never mined'),
      });
      const a = body.paymentPayload.payload.authorization;
      const outcome = await f.get(`/settlements/${chain.network}/${chain.token.address}/${a.from}/${a.nonce}`);
      expect(await outcome.json()).toMatchObject({
        status: 'failed',
        reason: 'invalid_exact_evm_transaction_dropped',
        transaction: pending.transaction,
      });

      await chain.testClient.setAutomine(true);
      const wallNow = BigInt(Math.floor(Date.now() / 1000));
      const next = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee.address), { validBefore: wallNow + 3600n });
      const settled = await f.facilitator.settle(next);
      expect(settled.success).toBe(true);
      expect(await chain.balanceOf(payee.address)).toBe(PRICE);
    });

    it('fails a claim that never got a transaction (the process stopped in between) once its authorization expired', async () => {
      const store = createPaymentStore(f.database.db, f.database.kind);
      const key = { network: chain.network, asset: chain.token.address, payer: chain.accounts.payer.address, nonce: randomNonce() };
      const expired = String(Math.floor(clock.now().getTime() / 1000) - 1_000);
      const entry = {
        key,
        payee: chain.accounts.payee.address,
        amount: '1',
        validAfter: '0',
        validBefore: expired,
        payloadHash: 'h',
        signerKind: 'ecdsa' as const,
      };
      await store.insert(entry, 'settling', clock.now());
      expect(await f.facilitator.reconcile()).toMatchObject({ abandoned: 1 });
      expect(await store.authorization(key)).toMatchObject({ state: 'failed', reason: 'unexpected_settle_error', txHash: null });
    });

    it('reconciles in the background once started, without anyone asking', async () => {
      const background = await startFacilitatorFixture(chain, kind, {
        database: f.database,
        relayers: [chain.accounts.relayers[1]!],
        config: { receiptTimeoutMs: 50, reconcileIntervalMs: 50 },
      });
      try {
        const payee = await chain.createAccount();
        await chain.testClient.setAutomine(false);
        const pending = await background.facilitator.settle(
          await paymentBody(chain, chain.accounts.payers[1]!, requirementsFor(chain, payee.address)),
        );
        expect(pending.errorReason).toBe('settlement_pending');
        await chain.testClient.mine({ blocks: 1 });
        const receipt = () => background.facilitator.receipt(pending.transaction);
        expect(await lastReading(receipt, (r) => r?.status !== 'pending', 5_000)).toMatchObject({ status: 'confirmed' });
      } finally {
        await background.close();
      }
    });
  });
}
