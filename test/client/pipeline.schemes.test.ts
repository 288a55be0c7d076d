/**
 * The payment pipeline's scheme seam: which scheme and terms a call chooses among a 402's offers,
 * and a second scheme (`tally`, cumulative vouchers in the shape of batch-settlement, see
 * ../support/schemes/) plugged in through the interface alone: paid, corrected by a 402 and retried
 * once, its state carried across calls, its voucher answers charged without a transaction, the
 * budget and the scheme's `finish` told what each call cost. Real EIP-712 signatures, a real
 * HTTP server; no chain (tally moves no tokens).
 */
import { afterAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { exactScheme, MarketError, PaymentPipeline, TermsMismatchError, toPaymentSigner, type Skill } from 'skill-market/client';
import { buildPaymentTerms, getKnownNetwork, type PaymentRequirements } from 'skill-market/x402';
import { TALLY_NETWORK } from '../support/schemes/tally';
import { tallyListing, tallyScheme } from '../support/schemes/tally-client';
import { startTallyServer, type TallyServer } from './support/tally';

const PRICE = 1_000n;
const servers: TallyServer[] = [];
afterAll(() => {
  for (const server of servers) server.close();
});

/** A skill served by a tally server, and its listing as the registry would give it. */
function tallySkill(): { server: TallyServer; skill: Skill; payTo: Address } {
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  const server = startTallyServer(payTo, PRICE);
  servers.push(server);
  const skill = tallyListing(server.url, payTo, PRICE);
  return { server, skill, payTo };
}

/** The `exact` terms of the same listing (Base Sepolia USDC). */
function exactOffer(payTo: Address, url: string, amount = PRICE): PaymentRequirements {
  return buildPaymentTerms({ amount, payTo, network: TALLY_NETWORK, asset: getKnownNetwork(TALLY_NETWORK)!.usdc, resourceUrl: url })
    .requirements;
}

/** A signer whose signatures are counted. */
function countingSigner() {
  const signer = toPaymentSigner(generatePrivateKey());
  const counted = { address: signer.address, signatures: 0, signTypedData: signer.signTypedData };
  counted.signTypedData = (typedData) => {
    counted.signatures++;
    return signer.signTypedData(typedData);
  };
  return counted;
}

describe('choosing a scheme and terms', () => {
  it("takes the client's preferred scheme among the 402's offers, whatever the server's order", async () => {
    const { server, skill, payTo } = tallySkill();
    server.offers = (tally) => [exactOffer(payTo, server.url), tally];
    const schemeOf = async (schemes: ConstructorParameters<typeof PaymentPipeline>[0]['schemes']) => {
      const quote = await new PaymentPipeline({ network: TALLY_NETWORK, ...(schemes ? { schemes } : {}) }).start(skill, {}).quote();
      if (quote.type !== 'payment-required') throw new Error('expected a 402');
      return quote.terms.requirements.scheme;
    };
    expect(await schemeOf([tallyScheme(), exactScheme()])).toBe('tally');
    expect(await schemeOf([exactScheme(), tallyScheme()])).toBe('exact');
    expect(await schemeOf(undefined)).toBe('exact');
  });

  it("passes over a preferred scheme's offer that breaks the listing for one that keeps it", async () => {
    const { server, skill, payTo } = tallySkill();
    server.offers = (tally) => [{ ...tally, amount: '2000' }, exactOffer(payTo, server.url)];
    const quote = await new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tallyScheme(), exactScheme()] }).start(skill, {}).quote();
    expect(quote).toMatchObject({ type: 'payment-required', terms: { requirements: { scheme: 'exact', amount: '1000' } } });
  });

  it('reports the closest mismatch when no offer keeps the listing, and signs nothing', async () => {
    const { server, skill } = tallySkill();
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    server.offers = (tally) => [exactOffer(stranger, server.url), { ...tally, amount: '2000' }];
    const signer = countingSigner();
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tallyScheme(), exactScheme()], signer });
    const error = await pipeline.call(skill, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TermsMismatchError);
    expect(error).toMatchObject({ field: 'price', charged: 'no', status: 402 });
    expect(signer.signatures).toBe(0);
    expect(server.proofs).toEqual([]);
  });

  it('refuses a 402 whose offers are all in schemes it does not pay, naming the ones it does', async () => {
    const { skill } = tallySkill();
    const signer = countingSigner();
    const error = await new PaymentPipeline({ network: TALLY_NETWORK, signer }).call(skill, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TermsMismatchError);
    expect(error).toMatchObject({ field: 'scheme', expected: 'exact', actual: 'tally' });
    expect(signer.signatures).toBe(0);
  });
});

describe('a scheme plugged in through the interface', () => {
  it('is paid: voucher answers are charged without a transaction, its state carries across calls, the budget and finish see each call', async () => {
    const { server, skill, payTo } = tallySkill();
    const tally = tallyScheme();
    const signer = toPaymentSigner(generatePrivateKey());
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tally], signer, budget: 10_000n });

    const first = await pipeline.call(skill, { n: 1 });
    expect(first.result).toEqual({ echo: { n: 1 } });
    expect(first.receipt).toMatchObject({ transaction: null, amount: '1000', payTo, payer: signer.address, network: TALLY_NETWORK });
    const second = await pipeline.call(skill, { n: 2 });
    expect(second.result).toEqual({ echo: { n: 2 } });

    expect(server.proofs).toEqual([
      { payer: signer.address.toLowerCase(), total: '1000' },
      { payer: signer.address.toLowerCase(), total: '2000' },
    ]);
    expect(server.totals.get(signer.address.toLowerCase())).toBe(2_000n);
    expect(tally.finished).toEqual([
      { total: '1000', charged: 'yes' },
      { total: '2000', charged: 'yes' },
    ]);
    expect(pipeline.spending).toMatchObject({ spent: 2_000n, reserved: 0n, remaining: 8_000n });
  });

  it('follows a corrective 402 once: a client that lost its state adopts the total it signed and is paid', async () => {
    const { server, skill } = tallySkill();
    const key = generatePrivateKey();
    await new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tallyScheme()], signer: toPaymentSigner(key) }).call(skill, {});

    // Another run of the same payer, without the first run's state.
    const restarted = tallyScheme();
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [restarted], signer: toPaymentSigner(key), budget: 10_000n });
    const { result, receipt } = await pipeline.call(skill, { again: true });

    expect(result).toEqual({ echo: { again: true } });
    expect(receipt).toMatchObject({ transaction: null, amount: '1000' });
    expect(server.proofs.map((p) => p.total)).toEqual(['1000', '1000', '2000']);
    expect(restarted.finished).toEqual([{ total: '2000', charged: 'yes' }]);
    expect(pipeline.spending).toMatchObject({ spent: 1_000n, reserved: 0n });
  });

  it('takes the second refusal as final: not charged, the budget released, finish told so', async () => {
    const { server, skill } = tallySkill();
    const key = generatePrivateKey();
    await new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tallyScheme()], signer: toPaymentSigner(key) }).call(skill, {});
    server.alwaysMismatch = true;
    const tally = tallyScheme();
    const pipeline = new PaymentPipeline({ network: TALLY_NETWORK, schemes: [tally], signer: toPaymentSigner(key), budget: 10_000n });

    const error = await pipeline.call(skill, {}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ code: 'payment_rejected', charged: 'no', status: 402 });
    expect((error as MarketError).message).toContain('tally_mismatch');
    expect(server.proofs.map((p) => p.total)).toEqual(['1000', '1000', '2000']);
    expect(tally.finished).toEqual([{ total: '2000', charged: 'no' }]);
    expect(pipeline.spending).toMatchObject({ spent: 0n, reserved: 0n, remaining: 10_000n });
  });

  it('in fast mode reuses the terms it learned from the server: one request per call after the first', async () => {
    const { server, skill } = tallySkill();
    const pipeline = new PaymentPipeline({
      network: TALLY_NETWORK,
      schemes: [tallyScheme()],
      signer: toPaymentSigner(generatePrivateKey()),
      mode: 'fast',
    });
    await pipeline.call(skill, { n: 1 });
    expect(server.posts).toBe(2); // no terms from the listing: the 402 first
    await pipeline.call(skill, { n: 2 });
    expect(server.posts).toBe(3);
    expect(server.proofs.map((p) => p.total)).toEqual(['1000', '2000']);
  });
});
