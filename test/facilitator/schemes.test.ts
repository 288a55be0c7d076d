/**
 * Dispatch by scheme: each request goes to the scheme it names (`paymentPayload.accepted.scheme`,
 * else `paymentRequirements.scheme`). A scheme this facilitator does not settle, unknown or left
 * out of its schemes, is refused `unsupported_scheme` (200, the verdict in the body) and nothing is
 * sent; `/supported` lists only the schemes it settles; a request naming no scheme answers 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { databaseKinds } from '../support/database';
import { type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';
import { body as channelBody, channelRequirements, depositPayload, newChannel, PRICE as CHANNEL_PRICE } from './channels/payloads';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ relayers: 2 });
}, 60_000);
afterAll(() => chain.stop());

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });
const sentBy = (account: TestAccount) => chain.publicClient.getTransactionCount({ address: account.address });

/**
 * `request` refused by `f` as naming a scheme it does not settle: 200 at /verify and /settle with
 * `unsupported_scheme`, and nothing sent by `relayer`.
 */
async function expectUnsupported(f: FacilitatorFixture, relayer: TestAccount, request: unknown, scheme: string) {
  const sent = await sentBy(relayer);
  expect(await json(await f.post('/verify', request))).toEqual({
    status: 200,
    body: { isValid: false, invalidReason: 'unsupported_scheme', invalidMessage: expect.stringContaining(`"${scheme}"`) },
  });
  expect(await json(await f.post('/settle', request))).toEqual({
    status: 200,
    body: {
      success: false,
      errorReason: 'unsupported_scheme',
      errorMessage: expect.stringContaining(`"${scheme}"`),
      transaction: '',
      network: chain.network,
    },
  });
  expect(await sentBy(relayer)).toBe(sent);
}

/** An exact payment whose `accepted` and requirements both name `scheme`. */
async function paymentNaming(scheme: string) {
  const payer = await chain.createAccount({ usdc: 1_000_000n });
  const payee = await chain.createAccount();
  const exact = await paymentBody(chain, payer, requirementsFor(chain, payee.address));
  const requirements = { ...exact.paymentRequirements, scheme } as unknown as typeof exact.paymentRequirements;
  return {
    payer,
    payee,
    body: { ...exact, paymentPayload: { ...exact.paymentPayload, accepted: requirements }, paymentRequirements: requirements },
  };
}

/** A deposit into a new channel that our facilitator (with the channel scheme) accepts. */
async function channelDeposit() {
  const payer = await chain.createAccount({ usdc: 1_000_000n });
  const receiver = (await chain.createAccount()).address;
  const { config } = newChannel(chain, payer, receiver);
  const requirements = channelRequirements(chain, receiver);
  return { payer, request: channelBody(requirements, await depositPayload(chain, payer, config, 10n * CHANNEL_PRICE, CHANNEL_PRICE)) };
}

for (const kind of databaseKinds) {
  describe(`dispatch by scheme (${kind} database)`, () => {
    let all: FacilitatorFixture;
    let exactOnly: FacilitatorFixture;
    beforeAll(async () => {
      all = await startFacilitatorFixture(chain, kind);
      exactOnly = await startFacilitatorFixture(chain, kind, { relayers: [chain.accounts.relayers[1]!], schemes: ['exact'] });
    }, 60_000);
    afterAll(async () => {
      await all.close();
      await exactOnly.close();
    });

    it('refuses a scheme it does not know with unsupported_scheme, 200 at /verify and /settle, moving nothing', async () => {
      const { payer, payee, body } = await paymentNaming('auth-capture');
      const before = await chain.balanceOf(payer.address);
      await expectUnsupported(all, chain.accounts.relayer, body, 'auth-capture');
      expect((await all.facilitator.settle(body)).errorMessage).toContain('it settles: exact, batch-settlement, upto');
      expect(await chain.balanceOf(payer.address)).toBe(before);
      expect(await chain.balanceOf(payee.address)).toBe(0n);
    });

    it('answers 400 to a request that names no scheme', async () => {
      const { body } = await paymentNaming('exact');
      const { scheme: _accepted, ...accepted } = body.paymentPayload.accepted;
      const { scheme: _required, ...requirements } = body.paymentRequirements;
      const nameless = { ...body, paymentPayload: { ...body.paymentPayload, accepted }, paymentRequirements: requirements };
      for (const path of ['/verify', '/settle']) {
        expect(await json(await all.post(path, nameless))).toMatchObject({
          status: 400,
          body: { code: 'VALIDATION', error: 'Malformed payment payload: /accepted/scheme is missing' },
        });
      }
    });

    it('goes by the scheme the payment accepted: other requirements do not take it to another scheme', async () => {
      const { body } = await paymentNaming('exact');
      const elsewhere = { ...body, paymentRequirements: { ...body.paymentRequirements, scheme: 'batch-settlement' } };
      // The exact scheme answers, with its own reason for requirements it does not settle.
      expect(await all.facilitator.verify(elsewhere)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_scheme' });
    });

    it('without the channel scheme, lists only exact and refuses a channel deposit it would otherwise take, sending nothing', async () => {
      const kinds = async (f: FacilitatorFixture) => (await f.facilitator.supported()).kinds.map((k) => k.scheme);
      expect(await kinds(all)).toContain('batch-settlement');
      expect(new Set(await kinds(exactOnly))).toEqual(new Set(['exact']));
      expect((await exactOnly.facilitator.supported()).signers).toEqual({ 'eip155:*': [chain.accounts.relayers[1]!.address] });

      const { payer, request } = await channelDeposit();
      expect(await all.facilitator.verify(request)).toMatchObject({ isValid: true, payer: payer.address });
      const before = await chain.balanceOf(payer.address);
      await expectUnsupported(exactOnly, chain.accounts.relayers[1]!, request, 'batch-settlement');
      expect(await chain.balanceOf(payer.address)).toBe(before);

      // The exact scheme is there as ever.
      const { payee, body } = await paymentNaming('exact');
      expect(await exactOnly.facilitator.settle(body)).toMatchObject({ success: true, network: chain.network });
      expect(await chain.balanceOf(payee.address)).toBe(BigInt(body.paymentRequirements.amount));
    });
  });
}
