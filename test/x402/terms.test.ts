import { describe, expect, it } from 'bun:test';
import {
  X402Error,
  acceptedMatches,
  buildPaymentTerms,
  decodePaymentRequired,
  parsePrice,
  paymentMatchesRequirements,
  paymentRequiredResponse,
  requirementsFromBody,
  type DecodedPayment,
} from 'skill-market/x402';
import { localAsset, makeTerms, newAccount, thrown } from './factories';

function code(fn: () => unknown): string {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(X402Error);
  return (error as X402Error).code;
}

describe('buildPaymentTerms', () => {
  it('builds v2 requirements with USDC, the EIP-712 domain and a 60 s window', () => {
    const payTo = newAccount().address;
    const terms = makeTerms({ payTo: payTo.toLowerCase() });
    expect(terms.requirements).toEqual({
      scheme: 'exact',
      network: 'eip155:84532',
      amount: '1000',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      payTo,
      maxTimeoutSeconds: 60,
      extra: { name: 'USDC', version: '2' },
    });
  });

  it('is deterministic: the same input gives the same terms', () => {
    const payTo = newAccount().address;
    const input = { amount: 5000n, payTo, resourceUrl: 'https://a.test/x', description: 'd' };
    expect(buildPaymentTerms(input)).toEqual(buildPaymentTerms({ ...input, payTo: payTo.toLowerCase() }));
  });

  it('defaults to Base mainnet', () => {
    const terms = buildPaymentTerms({ amount: 1n, payTo: newAccount().address, resourceUrl: 'https://a.test/x' });
    expect(terms.requirements.network).toBe('eip155:8453');
    expect(terms.requirements.extra).toEqual({ name: 'USD Coin', version: '2' });
  });

  it('builds the v2 PaymentRequired with the resource', () => {
    const terms = makeTerms();
    expect(terms.paymentRequired).toEqual({
      x402Version: 2,
      resource: { url: 'https://skills.example/echo', description: 'Echo the input', mimeType: 'application/json' },
      accepts: [terms.requirements],
    });
  });

  it("builds the marketplace's 402 body with price and the welcome extras", () => {
    const terms = makeTerms({ amount: parsePrice('$0.25') });
    expect(terms.body).toEqual({
      accepts: {
        scheme: 'exact',
        price: '0.25',
        network: 'eip155:84532',
        payTo: terms.requirements.payTo,
        maxTimeoutSeconds: 60,
        x402Version: 2,
        amount: '250000',
        asset: terms.requirements.asset,
        extra: { name: 'USDC', version: '2' },
      },
      description: 'Echo the input',
    });
  });

  it('uses a custom asset on a local chain', () => {
    const asset = localAsset();
    const terms = makeTerms({ network: 'eip155:31337', asset, maxTimeoutSeconds: 30 });
    expect(terms.requirements.asset).toBe(asset.address);
    expect(terms.requirements.extra).toEqual({ name: 'USD Coin', version: '2' });
    expect(terms.requirements.maxTimeoutSeconds).toBe(30);
  });

  it('freezes the terms so one request cannot change them for the next', () => {
    const terms = makeTerms();
    expect(Object.isFrozen(terms.requirements)).toBe(true);
    expect(Object.isFrozen(terms.requirements.extra)).toBe(true);
    expect(Object.isFrozen(terms.paymentRequired.accepts[0])).toBe(true);
  });

  it('rejects invalid amounts, recipients, timeouts and URLs with typed errors', () => {
    expect(code(() => makeTerms({ amount: 0n }))).toBe('invalid_price');
    expect(code(() => makeTerms({ amount: -5n }))).toBe('invalid_price');
    expect(code(() => makeTerms({ amount: 1000 as unknown as bigint }))).toBe('invalid_price');
    expect(code(() => makeTerms({ amount: 10n ** 12n + 1n }))).toBe('invalid_price');
    expect(code(() => makeTerms({ payTo: '0x123' }))).toBe('invalid_requirements');
    expect(code(() => makeTerms({ maxTimeoutSeconds: 0 }))).toBe('invalid_requirements');
    expect(code(() => makeTerms({ maxTimeoutSeconds: 1.5 }))).toBe('invalid_requirements');
    expect(code(() => makeTerms({ resourceUrl: '/echo' }))).toBe('invalid_requirements');
    expect(code(() => makeTerms({ network: 'eip155:31337' }))).toBe('invalid_network');
  });
});

describe('paymentRequiredResponse', () => {
  it('answers 402 with the JSON body and a PAYMENT-REQUIRED header', () => {
    const terms = makeTerms();
    const response = paymentRequiredResponse(terms);
    expect(response.status).toBe(402);
    expect(response.body).toEqual(terms.body);
    expect(response.headers['Content-Type']).toBe('application/json');
    expect(decodePaymentRequired(response.headers['PAYMENT-REQUIRED'] as string)).toEqual(terms.paymentRequired);
  });

  it('puts an error reason into both the body and the header', () => {
    const terms = makeTerms();
    const response = paymentRequiredResponse(terms, 'invalid_exact_evm_signature');
    expect(response.body.error).toBe('invalid_exact_evm_signature');
    expect(decodePaymentRequired(response.headers['PAYMENT-REQUIRED'] as string).error).toBe('invalid_exact_evm_signature');
    expect(terms.body).not.toHaveProperty('error');
  });
});

describe('acceptedMatches', () => {
  const terms = makeTerms();
  const ours = terms.requirements;

  it('matches an exact echo of our requirements', () => {
    expect(acceptedMatches(structuredClone(ours), ours)).toBe(true);
  });

  it('compares asset and payTo case-insensitively', () => {
    expect(acceptedMatches({ ...ours, asset: ours.asset.toLowerCase(), payTo: ours.payTo.toUpperCase().replace('0X', '0x') }, ours)).toBe(
      true,
    );
  });

  it('accepts extra as a superset of ours', () => {
    expect(acceptedMatches({ ...ours, extra: { ...ours.extra, note: 'hi' } }, ours)).toBe(true);
  });

  it('rejects any changed core field', () => {
    const changes: Record<string, unknown>[] = [
      { amount: '999' },
      { amount: 1000 },
      { network: 'eip155:8453' },
      { scheme: 'upto' },
      { maxTimeoutSeconds: 61 },
      { payTo: newAccount().address },
      { asset: newAccount().address },
      { surprise: true },
    ];
    for (const change of changes) expect(acceptedMatches({ ...ours, ...change }, ours)).toBe(false);
  });

  it('rejects a missing or different EIP-712 domain in extra', () => {
    const { extra: _extra, ...withoutExtra } = ours;
    expect(acceptedMatches(withoutExtra, ours)).toBe(false);
    expect(acceptedMatches({ ...ours, extra: { name: 'USD Coin', version: '2' } }, ours)).toBe(false);
    expect(acceptedMatches({ ...ours, extra: { name: 'USDC' } }, ours)).toBe(false);
  });

  it('rejects non-objects', () => {
    for (const value of [null, undefined, 'x', 1, []]) expect(acceptedMatches(value, ours)).toBe(false);
  });

  it('matches v1 payments on scheme and network only', () => {
    const v1 = { x402Version: 1, scheme: 'exact', network: 'eip155:84532' } as unknown as DecodedPayment;
    expect(paymentMatchesRequirements(v1, ours)).toBe(true);
    expect(paymentMatchesRequirements({ ...v1, network: 'eip155:8453' }, ours)).toBe(false);
  });
});

describe('requirementsFromBody', () => {
  it('reads our own 402 body back into the same requirements', () => {
    const terms = makeTerms();
    expect(requirementsFromBody(structuredClone(terms.body))).toEqual(terms.requirements);
  });

  it('derives amount, asset and domain from the documented minimal body', () => {
    const payTo = newAccount().address;
    const body = { accepts: { scheme: 'exact', price: '0.001', network: 'eip155:8453', payTo, maxTimeoutSeconds: 60 }, description: 'd' };
    expect(requirementsFromBody(body)).toEqual({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '1000',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    });
  });

  it('uses amount, asset and extra of a custom-asset body', () => {
    const terms = makeTerms({ network: 'eip155:31337', asset: localAsset() });
    expect(requirementsFromBody(terms.body)).toEqual(terms.requirements);
  });

  it('rejects a body whose price and amount disagree', () => {
    const terms = makeTerms();
    const body = { ...terms.body, accepts: { ...terms.body.accepts, amount: '2000' } };
    expect(code(() => requirementsFromBody(body))).toBe('malformed_payment_required');
  });

  it('rejects malformed bodies with typed errors', () => {
    const terms = makeTerms();
    const a = terms.body.accepts;
    expect(code(() => requirementsFromBody(null))).toBe('malformed_payment_required');
    expect(code(() => requirementsFromBody({ accepts: [a], description: '' }))).toBe('malformed_payment_required');
    expect(code(() => requirementsFromBody({ ...terms.body, accepts: { ...a, price: '$1,000' } }))).toBe('malformed_payment_required');
    expect(code(() => requirementsFromBody({ ...terms.body, accepts: { ...a, scheme: 'upto' } }))).toBe('unsupported_scheme');
    const { asset: _asset, extra: _extra, ...bare } = a;
    expect(code(() => requirementsFromBody({ ...terms.body, accepts: { ...bare, network: 'eip155:31337' } }))).toBe('invalid_network');
    expect(
      code(() => requirementsFromBody({ ...terms.body, accepts: { ...bare, network: 'eip155:31337', asset: localAsset().address } })),
    ).toBe('malformed_payment_required');
  });
});
