/**
 * Broadcast settlement: the facilitator answers once the node accepted the transfer, and keeps
 * each payer's unconfirmed amount (verified authorizations until they expire, settling ones)
 * bounded by their balance; a payer who drains their balance after a broadcast answer is recorded
 * as a reverted payment and refused afterwards.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import type { Hex } from 'viem';
import { type LocalChain, startChain } from '../support/chain';
import { drainFirst, eventually } from '../support/eventually';
import { databaseKinds, openTestDatabase } from '../support/database';
import { PRICE, type FacilitatorFixture, manualClock, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 2 });
}, 60_000);
afterAll(() => chain.stop());
afterEach(() => chain.testClient.setAutomine(true));

const receiptOf = (hash: Hex) => chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined);

for (const kind of databaseKinds) {
  describe(`broadcast settlement (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind, { relayers: [chain.accounts.relayers[0]!], config: { settlementMode: 'broadcast' } });
    }, 60_000);
    afterAll(() => f.close());

    /** A payer holding one price, a verified payment of it, and its broadcast answer (automining off). */
    const broadcastOne = async () => {
      const payer = await chain.createAccount({ usdc: PRICE });
      const payee = (await chain.createAccount()).address;
      const body = await paymentBody(chain, payer, requirementsFor(chain, payee));
      expect((await f.facilitator.verify(body)).isValid).toBe(true);
      await chain.testClient.setAutomine(false);
      return { payer, payee, body, answer: await f.facilitator.settle(body) };
    };

    it('answers success with the hash before the transfer is mined, then records it settled once mined', async () => {
      const { payer, payee, answer } = await broadcastOne();
      expect(answer).toEqual({
        success: true,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        network: chain.network,
        payer: payer.address,
      });
      expect(await receiptOf(answer.transaction as Hex)).toBeUndefined(); // answered before the block
      expect(await f.facilitator.receipt(answer.transaction)).toMatchObject({ status: 'pending' });
      await chain.testClient.mine({ blocks: 1 });
      await eventually(
        () => f.facilitator.receipt(answer.transaction),
        (r) => r?.status === 'confirmed',
        'the receipt recorded',
      );
      expect(await chain.balanceOf(payee)).toBe(PRICE);
    });

    it('waits for the receipt when the resource server asks for confirmed settlement', async () => {
      const payer = await chain.createAccount({ usdc: PRICE });
      const body = await paymentBody(chain, payer, requirementsFor(chain, (await chain.createAccount()).address));
      expect((await f.facilitator.verify(body)).isValid).toBe(true);
      const answer = await f.facilitator.settle(body, 'confirmed');
      expect(answer.success).toBe(true);
      expect((await receiptOf(answer.transaction as Hex))?.status).toBe('success'); // mined when answered
    });

    it('takes the mode from the X-Settlement-Mode header and refuses an unknown one with 400', async () => {
      const body = await paymentBody(
        chain,
        await chain.createAccount({ usdc: PRICE }),
        requirementsFor(chain, chain.accounts.payee.address),
      );
      const refused = await f.facilitator.app.handle(
        new Request('http://localhost/settle', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-settlement-mode': 'eventually' },
          body: JSON.stringify(body),
        }),
      );
      expect(refused.status).toBe(400);
      const settled = await f.facilitator.app.handle(
        new Request('http://localhost/settle', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-settlement-mode': 'confirmed' },
          body: JSON.stringify(body),
        }),
      );
      const answer = (await settled.json()) as { success: boolean; transaction: Hex };
      expect(answer.success).toBe(true);
      expect((await receiptOf(answer.transaction))?.status).toBe('success');
    });

    it('20 concurrent broadcast settles of one verified proof make exactly one transfer', async () => {
      const payer = await chain.createAccount({ usdc: PRICE * 5n });
      const payee = (await chain.createAccount()).address;
      const body = await paymentBody(chain, payer, requirementsFor(chain, payee));
      expect((await f.facilitator.verify(body)).isValid).toBe(true);
      const answers = await Promise.all(Array.from({ length: 20 }, () => f.facilitator.settle(body)));
      expect(answers.filter((a) => a.success)).toHaveLength(1);
      expect(answers.filter((a) => !a.success).every((a) => a.errorReason === 'invalid_exact_evm_nonce_already_used')).toBe(true);
      // A retry after the answer is a replay too: nothing is sent twice.
      expect(await f.facilitator.settle(body)).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
      await eventually(
        () => chain.balanceOf(payee),
        (b) => b === PRICE,
        'the one transfer',
      );
      expect(await chain.balanceOf(payer.address)).toBe(PRICE * 4n);
    });

    it('loses nothing when it stops after a broadcast answer: the next instance reconciles the transfer, nothing is sent twice', async () => {
      const database = await openTestDatabase(kind);
      const first = await startFacilitatorFixture(chain, kind, { database, config: { settlementMode: 'broadcast' } });
      const payer = await chain.createAccount({ usdc: PRICE });
      const payee = (await chain.createAccount()).address;
      const body = await paymentBody(chain, payer, requirementsFor(chain, payee));
      expect((await first.facilitator.verify(body)).isValid).toBe(true);
      await chain.testClient.setAutomine(false);
      const answer = await first.facilitator.settle(body);
      expect(answer.success).toBe(true);
      await first.close(); // its background receipt wait ends unfinished
      const second = await startFacilitatorFixture(chain, kind, { database, config: { settlementMode: 'broadcast' } });
      try {
        expect(await second.facilitator.receipt(answer.transaction)).toMatchObject({ status: 'pending' });
        expect(await second.facilitator.settle(body)).toMatchObject({
          success: false,
          errorReason: 'invalid_exact_evm_nonce_already_used',
        });
        await chain.testClient.mine({ blocks: 1 });
        await second.facilitator.reconcile(); // after the pass its start runs, which may have found it already
        expect(await second.facilitator.receipt(answer.transaction)).toMatchObject({ status: 'confirmed' });
        expect(await chain.balanceOf(payee)).toBe(PRICE);
        expect(await chain.balanceOf(payer.address)).toBe(0n);
      } finally {
        await second.close();
        await database.close();
      }
    });

    it("refuses an authorization the payer's balance minus their unconfirmed settlements cannot cover", async () => {
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      const payee = (await chain.createAccount()).address;
      await chain.testClient.setAutomine(false);
      for (let i = 0; i < 2; i++) {
        const body = await paymentBody(chain, payer, requirementsFor(chain, payee));
        expect((await f.facilitator.verify(body)).isValid).toBe(true);
        expect((await f.facilitator.settle(body)).success).toBe(true);
      }
      // On chain the payer still holds 2 × price (nothing mined), but both are owed.
      expect(await chain.balanceOf(payer.address)).toBe(PRICE * 2n);
      const third = await paymentBody(chain, payer, requirementsFor(chain, payee));
      expect(await f.facilitator.verify(third)).toMatchObject({
        isValid: false,
        invalidReason: 'invalid_exact_evm_insufficient_balance',
        invalidMessage: expect.stringContaining('unconfirmed'),
      });
      await chain.testClient.mine({ blocks: 1 });
      await eventually(
        () => chain.balanceOf(payee),
        (b) => b === PRICE * 2n,
        'both transfers',
      );
    });

    it('counts a verified authorization never settled (its handler failed) against the balance until its validBefore, then no more', async () => {
      const clock = manualClock();
      const timed = await startFacilitatorFixture(chain, kind, { relayers: [chain.accounts.relayers[1]!], database: f.database, clock });
      try {
        const payer = await chain.createAccount({ usdc: PRICE });
        const requirements = requirementsFor(chain, (await chain.createAccount()).address);
        const now = BigInt(Math.floor(clock.now().getTime() / 1000));
        const left = await paymentBody(chain, payer, requirements, { validBefore: now + 30n });
        const next = await paymentBody(chain, payer, requirements, { validBefore: now + 600n });
        expect((await timed.facilitator.verify(left)).isValid).toBe(true);
        expect(await timed.facilitator.verify(next)).toMatchObject({
          isValid: false,
          invalidReason: 'invalid_exact_evm_insufficient_balance',
        });
        clock.advance(31); // `left` expired: it can never move money
        expect(await timed.facilitator.verify(next)).toMatchObject({ isValid: true });
      } finally {
        await timed.close();
      }
    });

    it('records a payer who drains their balance after a broadcast answer as a reverted payment, and refuses them afterwards', async () => {
      const { payer, payee, body, answer } = await broadcastOne();
      expect(answer.success).toBe(true);
      // The payer moves the money away with a higher tip, so their transfer is mined first.
      await drainFirst(chain, payer, chain.accounts.payees[1]!.address, PRICE);
      expect((await receiptOf(answer.transaction as Hex))?.status).toBe('reverted');
      await eventually(
        () => f.facilitator.receipt(answer.transaction),
        (r) => r?.status === 'reverted',
        'the revert recorded',
      );
      expect(await f.facilitator.receipt(answer.transaction)).toMatchObject({ payer: payer.address, amount: PRICE.toString() });
      const status = await f.facilitator.settlement({
        network: chain.network,
        asset: chain.token.address,
        payer: payer.address,
        nonce: body.paymentPayload.payload.authorization.nonce,
      });
      expect(status).toMatchObject({ status: 'failed', reason: 'invalid_exact_evm_insufficient_balance', transaction: answer.transaction });
      expect(await chain.balanceOf(payee)).toBe(0n);
      expect(f.logs.some((l) => l.includes('a broadcast settlement failed after its answer'))).toBe(true);

      // Funded again, the payer is still refused.
      await chain.mint(payer.address, PRICE);
      const next = await paymentBody(chain, payer, requirementsFor(chain, payee));
      expect(await f.facilitator.verify(next)).toMatchObject({
        isValid: false,
        invalidReason: 'invalid_exact_evm_payer_reverted_settlement',
      });
      // A settle that skips verify is refused the same way, and sends nothing.
      const nonce = await chain.publicClient.getTransactionCount({ address: chain.accounts.relayers[0]!.address, blockTag: 'pending' });
      expect(await f.facilitator.settle(next)).toMatchObject({
        success: false,
        errorReason: 'invalid_exact_evm_payer_reverted_settlement',
      });
      expect(await chain.publicClient.getTransactionCount({ address: chain.accounts.relayers[0]!.address, blockTag: 'pending' })).toBe(
        nonce,
      );
    });

    it('does not count a settlement mined but not yet recorded twice: the payer can spend the rest of their balance', async () => {
      // The instance that broadcast the first payment stops before it sees the receipt; the next
      // finds it mined on chain but still unconfirmed in the ledger (its reconciler has not run).
      const database = await openTestDatabase(kind);
      const first = await startFacilitatorFixture(chain, kind, { database, config: { settlementMode: 'broadcast' } });
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      const payee = (await chain.createAccount()).address;
      const paid = await paymentBody(chain, payer, requirementsFor(chain, payee));
      expect((await first.facilitator.verify(paid)).isValid).toBe(true);
      await chain.testClient.setAutomine(false);
      const answer = await first.facilitator.settle(paid);
      expect(answer.success).toBe(true);
      await first.close();
      await chain.testClient.mine({ blocks: 1 });
      await chain.testClient.setAutomine(true);
      // Not started: no reconciler pass has run.
      const second = await startFacilitatorFixture(chain, kind, { database, config: { settlementMode: 'broadcast' }, start: false });
      try {
        expect((await receiptOf(answer.transaction as Hex))?.status).toBe('success');
        expect(await second.facilitator.receipt(answer.transaction)).toMatchObject({ status: 'pending' });
        expect(await chain.balanceOf(payer.address)).toBe(PRICE); // gone on chain, and still owed in the ledger

        const next = await paymentBody(chain, payer, requirementsFor(chain, payee));
        expect(await second.facilitator.verify(next)).toEqual({ isValid: true, payer: payer.address });
        expect((await second.facilitator.settle(next)).success).toBe(true);
        await eventually(
          () => chain.balanceOf(payee),
          (b) => b === PRICE * 2n,
          'both transfers',
        );
        // Nothing left: a third is refused.
        const third = await paymentBody(chain, payer, requirementsFor(chain, payee));
        expect(await second.facilitator.verify(third)).toMatchObject({
          isValid: false,
          invalidReason: 'invalid_exact_evm_insufficient_balance',
        });
      } finally {
        await second.close();
        await database.close();
      }
    });

    describe('a settle that was not verified first (a server verifying at settlement)', () => {
      it('runs the checks of verify and still answers before the block', async () => {
        const payer = await chain.createAccount({ usdc: PRICE });
        const payee = (await chain.createAccount()).address;
        const body = await paymentBody(chain, payer, requirementsFor(chain, payee));
        await chain.testClient.setAutomine(false);
        const answer = await f.facilitator.settle(body);
        expect(answer).toEqual({
          success: true,
          transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
          network: chain.network,
          payer: payer.address,
        });
        expect(await receiptOf(answer.transaction as Hex)).toBeUndefined(); // answered before the block
        // A verify or settle of the same proof afterwards is a replay.
        expect(await f.facilitator.verify(body)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
        expect(await f.facilitator.settle(body)).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
        await chain.testClient.mine({ blocks: 1 });
        await eventually(
          () => f.facilitator.receipt(answer.transaction),
          (r) => r?.status === 'confirmed',
          'the receipt recorded',
        );
        expect(await chain.balanceOf(payee)).toBe(PRICE);
        expect(await chain.balanceOf(payer.address)).toBe(0n);
      });

      it('20 concurrent settles of one never-verified proof make exactly one transfer', async () => {
        const payer = await chain.createAccount({ usdc: PRICE * 5n });
        const payee = (await chain.createAccount()).address;
        const body = await paymentBody(chain, payer, requirementsFor(chain, payee));
        const answers = await Promise.all(Array.from({ length: 20 }, () => f.facilitator.settle(body)));
        expect(answers.filter((a) => a.success)).toHaveLength(1);
        expect(answers.filter((a) => !a.success).every((a) => a.errorReason === 'invalid_exact_evm_nonce_already_used')).toBe(true);
        await eventually(
          () => chain.balanceOf(payee),
          (b) => b === PRICE,
          'the one transfer',
        );
        expect(await chain.balanceOf(payer.address)).toBe(PRICE * 4n);
      });

      it("refuses what the payer's balance minus their unconfirmed settlements cannot cover, sending nothing", async () => {
        const payer = await chain.createAccount({ usdc: PRICE * 2n });
        const payee = (await chain.createAccount()).address;
        await chain.testClient.setAutomine(false);
        for (let i = 0; i < 2; i++) {
          expect((await f.facilitator.settle(await paymentBody(chain, payer, requirementsFor(chain, payee)))).success).toBe(true);
        }
        const relayer = chain.accounts.relayers[0]!.address;
        const sent = await chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
        expect(await f.facilitator.settle(await paymentBody(chain, payer, requirementsFor(chain, payee)))).toMatchObject({
          success: false,
          errorReason: 'invalid_exact_evm_insufficient_balance',
          errorMessage: expect.stringContaining('unconfirmed'),
        });
        expect(await chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' })).toBe(sent);
        await chain.testClient.mine({ blocks: 1 });
        await eventually(
          () => chain.balanceOf(payee),
          (b) => b === PRICE * 2n,
          'both transfers',
        );
      });

      it('refuses a payer without the balance, and a forged signature, before anything is sent', async () => {
        const relayer = chain.accounts.relayers[0]!.address;
        const sent = await chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' });
        const poor = await chain.createAccount();
        expect(
          await f.facilitator.settle(await paymentBody(chain, poor, requirementsFor(chain, chain.accounts.payee.address))),
        ).toMatchObject({
          success: false,
          errorReason: 'invalid_exact_evm_insufficient_balance',
        });
        const payer = await chain.createAccount({ usdc: PRICE });
        const forged = await paymentBody(chain, await chain.createAccount(), requirementsFor(chain, chain.accounts.payee.address), {
          from: payer.address,
        });
        expect(await f.facilitator.settle(forged)).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_signature' });
        expect(await chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' })).toBe(sent);
        expect(await chain.balanceOf(payer.address)).toBe(PRICE);
      });
    });
  });
}
