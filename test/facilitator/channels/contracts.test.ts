/**
 * Channels are offered only where the chain holds their contracts. On a network without
 * x402BatchSettlement the facilitator lists no `batch-settlement` in /supported and refuses channel
 * requests `unsupported_scheme`, naming the address and the network, with one warning; the
 * contract deployed later is offered from the next start. When the RPC cannot be read at start,
 * channels are offered once it can be (at the next channel request, or the next periodic check).
 * With the contracts, channels are offered as ever.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createPublicClient, http } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, installBatchSettlement } from '../../../src/chain/batch-settlement';
import { type LocalChain, startChain, type TestAccount } from '../../support/chain';
import { databaseKinds } from '../../support/database';
import { eventually } from '../../support/eventually';
import { type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../../support/facilitator';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';
import { body as channelBody, channelRequirements, depositPayload, newChannel, ourAuthorizer, PRICE } from './payloads';

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });
const schemesOf = async (f: FacilitatorFixture) =>
  ((await (await f.get('/supported')).json()) as { kinds: { scheme: string }[] }).kinds.map((k) => k.scheme);
/** Warning lines of `f`'s log whose message contains `text`. */
const warnings = (f: FacilitatorFixture, text: string) =>
  f.logs.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((l) => l.level === 'warn' && l.msg.includes(text));

/** A deposit of ten calls' worth into a new channel naming our receiver authorizer. */
async function channelDeposit(chain: LocalChain) {
  const payer = await chain.createAccount({ usdc: 1_000_000n });
  const receiver = (await chain.createAccount()).address;
  const { config } = newChannel(chain, payer, receiver);
  return {
    payer,
    request: channelBody(channelRequirements(chain, receiver), await depositPayload(chain, payer, config, 10n * PRICE, PRICE)),
  };
}

/** `request` refused `unsupported_scheme` with 200 at /verify and /settle, the message containing each of `says`; nothing sent, nothing moved. */
async function expectRefused(chain: LocalChain, f: FacilitatorFixture, request: unknown, payer: TestAccount, says: string[]) {
  const sent = await chain.publicClient.getTransactionCount({ address: chain.accounts.relayer.address });
  const before = await chain.balanceOf(payer.address);
  const verified = await json(await f.post('/verify', request));
  expect(verified).toMatchObject({ status: 200, body: { isValid: false, invalidReason: 'unsupported_scheme' } });
  const settled = await json(await f.post('/settle', request));
  expect(settled).toMatchObject({ status: 200, body: { success: false, errorReason: 'unsupported_scheme', transaction: '' } });
  for (const text of says) {
    expect(verified.body.invalidMessage).toContain(text);
    expect(settled.body.errorMessage).toContain(text);
  }
  expect(await chain.publicClient.getTransactionCount({ address: chain.accounts.relayer.address })).toBe(sent);
  expect(await chain.balanceOf(payer.address)).toBe(before);
}

for (const kind of databaseKinds) {
  describe(`a network without the channel contracts (${kind} database)`, () => {
    let bare: LocalChain;
    let f: FacilitatorFixture;
    beforeAll(async () => {
      bare = await startChain({ batchSettlement: false });
      f = await startFacilitatorFixture(bare, kind);
    }, 60_000);
    afterAll(async () => {
      await f?.close();
      await bare?.stop();
    });

    it('lists no batch-settlement in /supported, only exact and upto', async () => {
      expect(await json(await f.get('/supported'))).toEqual({
        status: 200,
        body: {
          kinds: [
            { x402Version: 2, scheme: 'exact', network: bare.network },
            { x402Version: 1, scheme: 'exact', network: 'base-sepolia' },
            { x402Version: 2, scheme: 'upto', network: bare.network, extra: { facilitatorAddress: bare.accounts.relayer.address } },
          ],
          extensions: ['bazaar'],
          signers: { 'eip155:*': [bare.accounts.relayer.address] },
        },
      });
    });

    it('refuses a channel deposit unsupported_scheme naming the contract address and the network, moving nothing, and warned once', async () => {
      const { payer, request } = await channelDeposit(bare);
      await expectRefused(bare, f, request, payer, ['"batch-settlement"', BATCH_SETTLEMENT_ADDRESS, bare.network]);
      await expectRefused(bare, f, request, payer, ['"batch-settlement"']);
      const warned = warnings(f, 'batch-settlement is not offered');
      expect(warned).toHaveLength(1);
      expect(warned[0]?.msg).toContain(
        `no code at ${BATCH_SETTLEMENT_ADDRESS} (x402BatchSettlement) nor at ${ERC3009_DEPOSIT_COLLECTOR_ADDRESS} (ERC3009DepositCollector) on ${bare.network}`,
      );
    });

    it('settles exact payments as ever', async () => {
      const payer = await bare.createAccount({ usdc: 1_000_000n });
      const payee = await bare.createAccount();
      const payment = await paymentBody(bare, payer, requirementsFor(bare, payee.address));
      expect(await json(await f.post('/settle', payment))).toMatchObject({ status: 200, body: { success: true } });
      expect(await bare.balanceOf(payee.address)).toBe(BigInt(payment.paymentRequirements.amount));
    });

    it('offers the contracts deployed later from the next start, not before', async () => {
      await installBatchSettlement(bare.testClient);
      const { payer, request } = await channelDeposit(bare);
      await expectRefused(bare, f, request, payer, [BATCH_SETTLEMENT_ADDRESS]);
      const restarted = await startFacilitatorFixture(bare, kind);
      try {
        expect(await schemesOf(restarted)).toContain('batch-settlement');
        expect(await restarted.facilitator.verify(request)).toMatchObject({ isValid: true, payer: payer.address });
        expect(warnings(restarted, 'is not offered')).toEqual([]);
      } finally {
        await restarted.close();
      }
    });
  });

  describe(`a network with the channel contracts (${kind} database)`, () => {
    let chain: LocalChain;
    let proxy: TcpProxy;
    beforeAll(async () => {
      chain = await startChain();
      proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(chain.rpcUrl).port) });
    }, 60_000);
    afterAll(async () => {
      await proxy?.close();
      await chain?.stop();
    });

    /** A facilitator reading the chain through the proxy, started while the proxy is cut (it stays cut). */
    async function startedDuringOutage(reconcileIntervalMs: number) {
      proxy.cut();
      const publicClient = createPublicClient({
        transport: http(proxy.url, { retryCount: 0 }),
        cacheTime: 0,
      }) as LocalChain['publicClient'];
      return startFacilitatorFixture(chain, kind, { publicClient, config: { reconcileIntervalMs } });
    }
    const outageWarnings = (f: FacilitatorFixture) => warnings(f, 'batch-settlement is not offered until the chain can be read');

    it('lists batch-settlement with its receiver authorizer, and verifies a deposit', async () => {
      const f = await startFacilitatorFixture(chain, kind);
      try {
        expect((await f.facilitator.supported()).kinds).toContainEqual({
          x402Version: 2,
          scheme: 'batch-settlement',
          network: chain.network,
          extra: { receiverAuthorizer: ourAuthorizer(chain) },
        });
        const { payer, request } = await channelDeposit(chain);
        expect(await f.facilitator.verify(request)).toMatchObject({ isValid: true, payer: payer.address });
      } finally {
        await f.close();
      }
    });

    it('a facilitator not started reads the chain at its first channel request, or its first /supported', async () => {
      const requested = await startFacilitatorFixture(chain, kind, { start: false });
      const listed = await startFacilitatorFixture(chain, kind, { start: false, database: requested.database });
      try {
        const { payer, request } = await channelDeposit(chain);
        expect(await requested.facilitator.verify(request)).toMatchObject({ isValid: true, payer: payer.address });
        expect(await schemesOf(listed)).toContain('batch-settlement');
      } finally {
        await listed.close();
        await requested.close();
      }
    });

    it('when the RPC cannot be read at start, offers channels at the first request once it can be read', async () => {
      const f = await startedDuringOutage(60_000); // no periodic check within the test
      try {
        expect(await schemesOf(f)).toEqual(['exact', 'exact']);
        const { payer, request } = await channelDeposit(chain);
        await expectRefused(chain, f, request, payer, ['"batch-settlement"', 'could not be read']);
        expect(outageWarnings(f)).toHaveLength(1);
        proxy.restore();
        expect(await f.facilitator.verify(request)).toMatchObject({ isValid: true, payer: payer.address });
        expect(await schemesOf(f)).toContain('batch-settlement');
      } finally {
        proxy.restore();
        await f.close();
      }
    });

    it('when the RPC cannot be read at start, offers channels at the periodic check once it can be read, without any request', async () => {
      const f = await startedDuringOutage(100);
      try {
        expect(outageWarnings(f)).toHaveLength(1);
        proxy.restore();
        const offered = (line: string) => line.includes('batch-settlement is offered: the chain holds its contracts');
        await eventually(() => f.logs.some(offered), Boolean, 'the periodic check finding the contracts');
        expect(await schemesOf(f)).toContain('batch-settlement');
        expect(outageWarnings(f)).toHaveLength(1);
      } finally {
        proxy.restore();
        await f.close();
      }
    });
  });
}
