/**
 * Batched settlement: verified authorizations settle together in one Multicall3 `aggregate3`
 * transaction, each allowed to fail alone, with its own outcome recorded; the single-use ledger
 * holds as for single settlements, and a stop before or after the broadcast loses nothing and
 * sends nothing twice.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import { eq, isNotNull } from 'drizzle-orm';
import { getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import { paymentAuthorizations, paymentBatches } from '../../src/db/schema';
import { createMulticallStore } from '../../src/facilitator/schemes/exact/multicall-store';
import { MULTICALL3_ADDRESS, type LocalChain, type TestAccount, startChain, usdCoinAbi } from '../support/chain';
import { databaseKinds, openTestDatabase } from '../support/database';
import { drainFirst, eventually } from '../support/eventually';
import { PRICE, type FacilitatorFixture, manualClock, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 2 });
}, 60_000);
afterAll(() => chain.stop());
afterEach(() => chain.testClient.setAutomine(true));

type Body = Awaited<ReturnType<typeof paymentBody>>;
const relayer = () => chain.accounts.relayers[0] as TestAccount;
const sentBy = (address: Address) => chain.publicClient.getTransactionCount({ address });
const keyOf = (body: Body) => {
  const a = body.paymentPayload.payload.authorization;
  return { network: chain.network, asset: chain.token.address, payer: getAddress(a.from), nonce: a.nonce };
};

/** `count` payers holding one price each, and their verified payments to one new payee. */
async function verifiedPayments(f: FacilitatorFixture, count: number, validSeconds = 60) {
  const payee = (await chain.createAccount()).address;
  const payers = await Promise.all(Array.from({ length: count }, () => chain.createAccount({ usdc: PRICE })));
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + validSeconds);
  const bodies = await Promise.all(payers.map((p) => paymentBody(chain, p, requirementsFor(chain, payee), { validBefore })));
  for (const body of bodies) expect((await f.facilitator.verify(body)).isValid).toBe(true);
  return { payee, payers, bodies };
}

for (const kind of databaseKinds) {
  describe(`batched settlement (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      // A full batch goes at once; the wait closes a batch that does not fill, and is long enough that
      // payments settled together on a loaded machine still meet in one.
      f = await startFacilitatorFixture(chain, kind, { relayers: [relayer()], config: { batchMaxSize: 4, batchWaitMs: 1_000 } });
    }, 60_000);
    afterAll(() => f.close());

    it('settles the good authorizations of a batch in one transaction and fails the bad ones with their reasons', async () => {
      const { payee, payers, bodies } = await verifiedPayments(f, 4);
      // After verify, payer 1 moves its balance away and payer 2's proof is used on chain directly.
      const [, drained, usedElsewhere] = payers as [TestAccount, TestAccount, TestAccount, TestAccount];
      await chain.publicClient.waitForTransactionReceipt({
        hash: await chain.walletClient(drained).writeContract({
          address: chain.token.address,
          abi: usdCoinAbi,
          functionName: 'transfer',
          args: [chain.accounts.deployer.address, PRICE],
        }),
      });
      const used = (bodies[2] as Body).paymentPayload.payload;
      const a = used.authorization;
      await chain.publicClient.waitForTransactionReceipt({
        hash: await chain.walletClient(chain.accounts.deployer).writeContract({
          address: chain.token.address,
          abi: usdCoinAbi,
          functionName: 'transferWithAuthorization',
          args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, used.signature],
        }),
      });
      expect(await chain.balanceOf(payee)).toBe(PRICE); // the direct submission paid once
      const sentBefore = await sentBy(relayer().address);

      const answers = await Promise.all(bodies.map((b) => f.facilitator.settle(b)));

      const hash = answers[0]?.transaction as Hex;
      expect(answers.map((r) => r.transaction)).toEqual([hash, hash, hash, hash]); // one transaction for all four
      expect(answers.map((r) => r.success)).toEqual([true, false, false, true]);
      expect(answers[1]?.errorReason).toBe('invalid_exact_evm_insufficient_balance');
      expect(answers[2]?.errorReason).toBe('invalid_exact_evm_nonce_already_used');
      expect(answers[2]?.payer).toBe(usedElsewhere.address);
      expect(await sentBy(relayer().address)).toBe(sentBefore + 1);

      const receipt = await chain.publicClient.getTransactionReceipt({ hash });
      expect(receipt.to?.toLowerCase()).toBe(MULTICALL3_ADDRESS.toLowerCase());
      const transfers = parseEventLogs({ abi: usdCoinAbi, eventName: 'Transfer', logs: receipt.logs });
      // The batch holds the payments in the order they arrived, which concurrent settles do not fix.
      expect(transfers.map((t) => t.args.from as string).sort()).toEqual([payers[0]!.address, payers[3]!.address].sort());
      expect(await chain.balanceOf(payee)).toBe(3n * PRICE); // 2 batched + the direct one, nothing more

      const statuses = await Promise.all(bodies.map((b) => f.facilitator.settlement(keyOf(b))));
      expect(statuses.map((s) => s?.status)).toEqual(['settled', 'failed', 'failed', 'settled']);
      expect(statuses[1]?.reason).toBe('invalid_exact_evm_insufficient_balance');
      expect(statuses[2]?.reason).toBe('invalid_exact_evm_nonce_already_used');
      const [batch] = await f.database.db.select().from(paymentBatches).where(eq(paymentBatches.txHash, hash));
      expect(batch).toMatchObject({ status: 'confirmed', size: 4, gasUsed: Number(receipt.gasUsed) });

      // GET /receipts/:tx of the batch: the transaction, and each payment with its own outcome.
      const res = await f.facilitator.app.handle(new Request(`http://localhost/receipts/${hash}`));
      expect(res.status).toBe(200);
      const stored = (await res.json()) as { payments: { payer: string; status: string; reason: string | null }[] };
      expect(stored).toMatchObject({
        transaction: hash,
        status: 'confirmed',
        network: chain.network,
        relayer: relayer().address,
        blockNumber: Number(receipt.blockNumber),
        gasUsed: Number(receipt.gasUsed),
      });
      const byPayer = new Map(stored.payments.map((p) => [p.payer, p]));
      expect(payers.map((p) => byPayer.get(p.address))).toEqual([
        expect.objectContaining({ status: 'settled', reason: null, payee, amount: PRICE.toString() }),
        expect.objectContaining({ status: 'failed', reason: 'invalid_exact_evm_insufficient_balance' }),
        expect.objectContaining({ status: 'failed', reason: 'invalid_exact_evm_nonce_already_used' }),
        expect.objectContaining({ status: 'settled', reason: null }),
      ]);
      const unknown = await f.facilitator.app.handle(new Request(`http://localhost/receipts/0x${'ab'.repeat(32)}`));
      expect(unknown.status).toBe(404);
    });

    it('20 concurrent settles of one proof make one transfer, and a retry does not charge again', async () => {
      const { payee, bodies } = await verifiedPayments(f, 1);
      const body = bodies[0] as Body;
      const sentBefore = await sentBy(relayer().address);

      const answers = await Promise.all(Array.from({ length: 20 }, () => f.facilitator.settle(body)));

      expect(answers.filter((r) => r.success)).toHaveLength(1);
      expect(new Set(answers.filter((r) => !r.success).map((r) => r.errorReason))).toEqual(
        new Set(['invalid_exact_evm_nonce_already_used']),
      );
      const retry = await f.facilitator.settle(body);
      expect(retry).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
      expect(await sentBy(relayer().address)).toBe(sentBefore + 1);
      expect(await chain.balanceOf(payee)).toBe(PRICE);
    });

    it('fills batches up to the size: 6 payments make 2 transactions, the payee credited successes × price', async () => {
      const { payee, bodies } = await verifiedPayments(f, 6);
      const sentBefore = await sentBy(relayer().address);
      const answers = await Promise.all(bodies.map((b) => f.facilitator.settle(b)));
      expect(answers.every((r) => r.success)).toBe(true);
      expect(new Set(answers.map((r) => r.transaction)).size).toBe(2);
      expect(await sentBy(relayer().address)).toBe(sentBefore + 2);
      expect(await chain.balanceOf(payee)).toBe(6n * PRICE);
    });

    it('in broadcast mode answers at the broadcast; a payer who drains first fails alone and is refused afterwards', async () => {
      const broadcast = await startFacilitatorFixture(chain, kind, {
        relayers: [relayer()],
        database: f.database,
        config: { batchMaxSize: 2, batchWaitMs: 60_000, settlementMode: 'broadcast' },
      });
      try {
        const { payee, payers, bodies } = await verifiedPayments(broadcast, 2);
        await chain.testClient.setAutomine(false);
        const answers = await Promise.all(bodies.map((b) => broadcast.facilitator.settle(b)));
        const hash = answers[0]?.transaction as Hex;
        expect(answers.map((r) => [r.success, r.transaction])).toEqual([
          [true, hash],
          [true, hash],
        ]);
        expect(await chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined)).toBeUndefined(); // answered before the block
        const drained = payers[1] as TestAccount;
        await drainFirst(chain, drained, chain.accounts.deployer.address, PRICE);
        const statuses = await eventually(
          () => Promise.all(bodies.map((b) => broadcast.facilitator.settlement(keyOf(b)))),
          (all) => all.every((s) => s?.status !== 'pending'),
          'the batch outcome recorded',
        );
        expect(statuses.map((s) => [s?.status, s?.reason])).toEqual([
          ['settled', undefined],
          ['failed', 'invalid_exact_evm_insufficient_balance'],
        ]);
        expect(await chain.balanceOf(payee)).toBe(PRICE);
        await eventually(
          async () => broadcast.logs.some((l) => l.includes('a broadcast settlement failed after its answer')),
          (logged) => logged,
          'the late failure logged',
        );

        await chain.mint(drained.address, PRICE);
        const next = await paymentBody(chain, drained, requirementsFor(chain, payee));
        expect(await broadcast.facilitator.verify(next)).toMatchObject({
          isValid: false,
          invalidReason: 'invalid_exact_evm_payer_reverted_settlement',
        });
      } finally {
        await broadcast.close();
      }
    });

    /** A batching instance on its own database, `count` verified payments settling while blocks are not mined. */
    async function settlingWithoutBlocks(count: number, batchMaxSize: number) {
      const database = await openTestDatabase(kind);
      const first = await startFacilitatorFixture(chain, kind, {
        relayers: [relayer()],
        database,
        config: { batchMaxSize, batchWaitMs: 60_000 },
      });
      const { payee, bodies } = await verifiedPayments(first, count);
      const sentBefore = await sentBy(relayer().address);
      await chain.testClient.setAutomine(false);
      const answering = Promise.all(bodies.map((b) => first.facilitator.settle(b)));
      return { database, first, payee, bodies, sentBefore, answering };
    }

    it('a stop after the batch is broadcast, before its outcome is recorded: the next instance reconciles it from the stored hash', async () => {
      const { database, first, payee, bodies, sentBefore, answering } = await settlingWithoutBlocks(2, 2);
      const [batch] = await eventually(
        () => database.db.select().from(paymentBatches),
        (rows) => rows.length === 1,
        'the batch recorded',
      );
      await eventually(
        () => chain.publicClient.getTransaction({ hash: batch?.txHash as Hex }).catch(() => undefined),
        (tx) => tx !== undefined,
        'the batch broadcast',
      );
      await first.close(); // the receipt wait ends: both settles answer pending
      const answers = await answering;
      expect(answers.map((r) => r.errorReason)).toEqual(['settlement_pending', 'settlement_pending']);
      const batchHash = batch?.txHash as string;
      expect(answers.map((r) => r.transaction as string)).toEqual([batchHash, batchHash]);

      await chain.testClient.mine({ blocks: 1 });
      const second = await startFacilitatorFixture(chain, kind, { relayers: [relayer()], database });
      try {
        await second.facilitator.reconcile(); // after the pass its start runs, which may have found it already
        expect(await second.facilitator.receipt(batchHash)).toMatchObject({ status: 'confirmed' });
        const statuses = await Promise.all(bodies.map((b) => second.facilitator.settlement(keyOf(b))));
        expect(statuses.map((s) => s?.status)).toEqual(['settled', 'settled']);
        expect(await second.facilitator.reconcile()).toMatchObject({ checked: 0 }); // recorded once
        for (const body of bodies) expect((await second.facilitator.settle(body)).errorReason).toBe('invalid_exact_evm_nonce_already_used');
        expect(await sentBy(relayer().address)).toBe(sentBefore + 1);
        expect(await chain.balanceOf(payee)).toBe(2n * PRICE);
      } finally {
        await second.close();
        await database.close();
      }
    });

    it('a stop before the broadcast sends the queued batch once; a restart reconciles it and sends nothing again', async () => {
      const { database, first, payee, bodies, sentBefore, answering } = await settlingWithoutBlocks(3, 10);
      // Queued, not only claimed: the calldata is stored right before an authorization joins the queue.
      await eventually(
        () => database.db.select().from(paymentAuthorizations).where(isNotNull(paymentAuthorizations.batchCall)),
        (rows) => rows.length === 3,
        'all three queued',
      );
      expect(await database.db.select().from(paymentBatches)).toHaveLength(0); // nothing sent yet
      await first.close();
      const answers = await answering;
      const hash = answers[0]?.transaction as Hex;
      expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(answers.map((r) => r.transaction)).toEqual([hash, hash, hash]);
      expect(answers.map((r) => r.errorReason)).toEqual(['settlement_pending', 'settlement_pending', 'settlement_pending']);
      expect(await sentBy(relayer().address)).toBe(sentBefore); // in the pool, not mined

      await chain.testClient.mine({ blocks: 1 });
      const second = await startFacilitatorFixture(chain, kind, { relayers: [relayer()], database });
      try {
        await second.facilitator.reconcile();
        const statuses = await Promise.all(bodies.map((b) => second.facilitator.settlement(keyOf(b))));
        expect(statuses.map((s) => s?.status)).toEqual(['settled', 'settled', 'settled']);
        expect(await sentBy(relayer().address)).toBe(sentBefore + 1);
        expect(await chain.balanceOf(payee)).toBe(3n * PRICE);
      } finally {
        await second.close();
        await database.close();
      }
    });

    /** Two instances on one database: one whose batch waits ten minutes (it stalls), another on a clock the test moves. */
    const stalledAndOther = async () => {
      const database = await openTestDatabase(kind);
      const stalled = await startFacilitatorFixture(chain, kind, {
        relayers: [relayer()],
        database,
        config: { batchMaxSize: 10, batchWaitMs: 600_000 },
      });
      const clock = manualClock();
      const other = await startFacilitatorFixture(chain, kind, { relayers: [chain.accounts.relayers[1] as TestAccount], database, clock });
      return { database, stalled, clock, other };
    };

    it('a process that stopped before sending its queue: another instance sends it once, and the stopped one sends nothing after', async () => {
      const { database, stalled, clock, other } = await stalledAndOther();
      try {
        const { payee, bodies } = await verifiedPayments(stalled, 3, 3600);
        const [stalledSent, otherSent] = [await sentBy(relayer().address), await sentBy(other.facilitator.relayers[0] as Address)];
        const answering = Promise.all(bodies.map((b) => stalled.facilitator.settle(b)));
        await eventually(
          () => database.db.select().from(paymentAuthorizations).where(isNotNull(paymentAuthorizations.batchCall)),
          (rows) => rows.length === 3,
          'the three queued',
        );
        expect(await other.facilitator.reconcile()).toMatchObject({ resumed: 0 }); // queued moments ago: its process may be alive
        clock.advance(100);
        expect(await other.facilitator.reconcile()).toMatchObject({ resumed: 3 });
        const statuses = await Promise.all(bodies.map((b) => other.facilitator.settlement(keyOf(b))));
        expect(statuses.map((s) => s?.status)).toEqual(['settled', 'settled', 'settled']);
        expect(await other.facilitator.reconcile()).toMatchObject({ resumed: 0, checked: 0 });
        expect(await chain.balanceOf(payee)).toBe(3n * PRICE);
        expect(await sentBy(other.facilitator.relayers[0] as Address)).toBe(otherSent + 1);

        await stalled.close(); // its queue flushes now: the members are taken, nothing is sent
        const answers = await answering;
        expect(answers.map((r) => r.errorReason)).toEqual(['settlement_pending', 'settlement_pending', 'settlement_pending']);
        expect(await sentBy(relayer().address)).toBe(stalledSent);
        expect(await chain.balanceOf(payee)).toBe(3n * PRICE);
      } finally {
        await stalled.close();
        await other.close();
        await database.close();
      }
    });

    it('a batch recorded and never broadcast (its process stopped in between): another instance sends its members once', async () => {
      const { database, stalled, clock, other } = await stalledAndOther();
      try {
        const { payee, bodies } = await verifiedPayments(stalled, 3, 3600);
        const otherSent = await sentBy(other.facilitator.relayers[0] as Address);
        const answering = Promise.all(bodies.map((b) => stalled.facilitator.settle(b)));
        const queued = await eventually(
          () => database.db.select().from(paymentAuthorizations).where(isNotNull(paymentAuthorizations.batchCall)),
          (rows) => rows.length === 3,
          'the three queued',
        );
        // What a process does right before its broadcast: the batch and its members recorded under the
        // transaction's hash. The process stops there: the node never gets the transaction.
        const never = `0x${'ab'.repeat(32)}` as Hex;
        await createMulticallStore(database.db).record(
          {
            txHash: never,
            network: chain.network,
            relayer: relayer().address,
            relayerNonce: 1_000_000,
            memberIds: queued.map((r) => r.id),
          },
          new Date(),
        );
        expect(await other.facilitator.reconcile()).toMatchObject({ resumed: 0, stillPending: 1 }); // recorded moments ago: may be on its way
        clock.advance(31);
        expect(await other.facilitator.reconcile()).toMatchObject({ resumed: 3 });
        const statuses = await Promise.all(bodies.map((b) => other.facilitator.settlement(keyOf(b))));
        expect(statuses.map((s) => s?.status)).toEqual(['settled', 'settled', 'settled']);
        expect(await chain.balanceOf(payee)).toBe(3n * PRICE);
        expect(await sentBy(other.facilitator.relayers[0] as Address)).toBe(otherSent + 1);
        const [batch] = await database.db.select().from(paymentBatches).where(eq(paymentBatches.txHash, never));
        expect(batch).toMatchObject({ status: 'dropped' });
        expect(await other.facilitator.reconcile()).toMatchObject({ resumed: 0 });

        await stalled.close(); // its queue flushes now: the members are taken, nothing is sent again
        await answering;
        expect(await chain.balanceOf(payee)).toBe(3n * PRICE);
      } finally {
        await stalled.close();
        await other.close();
        await database.close();
      }
    });

    describe('eager batches (sent as soon as a relayer is free)', () => {
      let eager: FacilitatorFixture;
      beforeAll(async () => {
        // A wait of a minute: only a free relayer can make a batch leave in time.
        eager = await startFacilitatorFixture(chain, kind, {
          relayers: [chain.accounts.relayers[1] as TestAccount],
          config: { batchMaxSize: 10, batchWaitMs: 60_000, batchEager: true },
        });
      }, 60_000);
      afterAll(() => eager.close());

      it('sends a payment alone at once, as a plain transfer', async () => {
        const { payee, bodies } = await verifiedPayments(eager, 1);
        const answer = await eager.facilitator.settle(bodies[0] as Body);
        expect(answer.success).toBe(true);
        const receipt = await chain.publicClient.getTransactionReceipt({ hash: answer.transaction as Hex });
        expect(receipt.to?.toLowerCase()).toBe(chain.token.address.toLowerCase());
        expect(await chain.balanceOf(payee)).toBe(PRICE);
        const res = await eager.facilitator.app.handle(new Request(`http://localhost/receipts/${answer.transaction}`));
        expect(await res.json()).toMatchObject({ status: 'confirmed', payee, amount: PRICE.toString() });
      });

      it('settles 12 concurrent payments exactly once each, every transaction sent accounted for by the answers', async () => {
        const { payee, bodies } = await verifiedPayments(eager, 12);
        const sender = (chain.accounts.relayers[1] as TestAccount).address;
        const sentBefore = await sentBy(sender);
        const answers = await Promise.all(bodies.map((b) => eager.facilitator.settle(b)));
        expect(answers.every((r) => r.success)).toBe(true);
        const transactions = new Set(answers.map((r) => r.transaction)).size;
        expect(await sentBy(sender)).toBe(sentBefore + transactions);
        expect(await chain.balanceOf(payee)).toBe(12n * PRICE);
      });
    });
  });
}
