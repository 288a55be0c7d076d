/**
 * Every refusal happens before anything is signed: 402 terms that differ from the listing,
 * input that fails the schema (no request at all), maxPrice and budget, a missing wallet, a
 * network or endpoint the client does not pay. Signatures are counted on a wrapped account.
 */
import { describe, expect, it } from 'bun:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { InputValidationError, MarketError, SpendingLimitError, TermsMismatchError } from 'skill-market';
import { bearer } from '../support/auth';
import { countingAccount, NETWORK, useWorld } from './support/world';

const world = useWorld({ chain: false });

const requestsTo = (name: string) => world.server.requests.filter((r) => r.skill === name);
const otherAddress = () => privateKeyToAccount(generatePrivateKey()).address;

async function refusal(call: Promise<unknown>): Promise<MarketError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MarketError);
  return error as MarketError;
}

describe('402 terms that differ from the registry listing', () => {
  const cases: [string, () => Parameters<typeof world.addSkill>[0], string][] = [
    ['payTo', () => ({ tamper: () => ({ payTo: otherAddress() }) }), 'payTo'],
    ['price', () => ({ tamper: () => ({ price: 10_001n }) }), 'price'],
    ['network', () => ({ tamper: () => ({ network: 'eip155:8453' }) }), 'network'],
    ['asset', () => ({ tamper: () => ({ asset: { ...world.asset, address: otherAddress() } }) }), 'asset'],
    ['EIP-712 domain of the asset', () => ({ tamper: () => ({ asset: { ...world.asset, name: 'USD Coin (fake)' } }) }), 'asset'],
    [
      'price, in a documented body without the PAYMENT-REQUIRED header',
      () => ({ terms: 'body', tamper: () => ({ price: 20_000n }) }),
      'price',
    ],
  ];
  for (const [what, overrides, field] of cases) {
    it(`refuses a different ${what} with TermsMismatchError('${field}') and signs nothing`, async () => {
      const skill = await world.addSkill(overrides());
      const wallet = countingAccount(privateKeyToAccount(generatePrivateKey()));
      const error = await refusal(world.market({ wallet }).call(skill.slug, {}));
      expect(error).toBeInstanceOf(TermsMismatchError);
      expect(error).toMatchObject({ code: 'terms_mismatch', field, status: 402, charged: 'no', slug: skill.slug });
      expect(wallet.signatures).toBe(0);
      expect(requestsTo(skill.name).map((r) => r.proof)).toEqual([null]);
    });
  }

  it('refuses a token of the network that was not explicitly allowed', async () => {
    const skill = await world.addSkill();
    const wallet = countingAccount(privateKeyToAccount(generatePrivateKey()));
    const error = await refusal(world.market({ wallet, assets: [] }).call(skill.slug, {}));
    expect(error).toMatchObject({ code: 'terms_mismatch', field: 'asset' });
    expect(wallet.signatures).toBe(0);
  });

  it('refuses a validity window longer than maxTimeoutSeconds', async () => {
    const skill = await world.addSkill({ tamper: () => ({ maxTimeoutSeconds: 86_400 }) });
    const error = await refusal(world.market().call(skill.slug, {}));
    expect(error).toMatchObject({ code: 'terms_mismatch', field: 'maxTimeoutSeconds' });
  });
});

describe('input validation', () => {
  const inputSchema = {
    type: 'object',
    required: ['text'],
    properties: { text: { type: 'string', maxLength: 10 } },
    additionalProperties: false,
  };

  it('refuses input that fails the inputSchema before any request to the skill (not even the 402)', async () => {
    const skill = await world.addSkill({ inputSchema });
    const wallet = countingAccount(privateKeyToAccount(generatePrivateKey()));
    const error = await refusal(world.market({ wallet }).call(skill.slug, { text: 'far too long a text', extra: 1 }));
    expect(error).toBeInstanceOf(InputValidationError);
    expect((error as InputValidationError).problems.map((p) => p.path)).toEqual(expect.arrayContaining(['/', '/text']));
    expect(error.message).toContain(skill.slug);
    expect(requestsTo(skill.name)).toHaveLength(0);
    expect(wallet.signatures).toBe(0);
  });

  it('sends valid input on to the 402 exchange', async () => {
    const skill = await world.addSkill({ inputSchema, tamper: () => ({ price: 1n }) });
    await refusal(world.market().call(skill.slug, { text: 'short' }));
    expect(requestsTo(skill.name)).toHaveLength(1);
  });
});

describe('spending limits', () => {
  it('refuses a price above the client maxPrice before contacting the skill or signing', async () => {
    const skill = await world.addSkill();
    const wallet = countingAccount(privateKeyToAccount(generatePrivateKey()));
    const error = await refusal(world.market({ wallet, maxPrice: '$0.005' }).call(skill.slug, {}));
    expect(error).toBeInstanceOf(SpendingLimitError);
    expect(error).toMatchObject({ code: 'max_price_exceeded', limit: 'maxPrice', price: 10_000n, allowed: 5_000n });
    expect(requestsTo(skill.name)).toHaveLength(0);
    expect(wallet.signatures).toBe(0);
  });

  it('never lets a per-call maxPrice raise the configured one, and honours a lower per-call one', async () => {
    const skill = await world.addSkill();
    const capped = await refusal(world.market({ maxPrice: '$0.005' }).call(skill.slug, {}, { maxPrice: '$1' }));
    expect(capped).toMatchObject({ code: 'max_price_exceeded', allowed: 5_000n });
    const lower = await refusal(world.market({ maxPrice: '$1' }).call(skill.slug, {}, { maxPrice: '0.009' }));
    expect(lower).toMatchObject({ code: 'max_price_exceeded', allowed: 9_000n });
  });

  it('refuses a call the budget cannot cover before signing', async () => {
    const skill = await world.addSkill();
    const wallet = countingAccount(privateKeyToAccount(generatePrivateKey()));
    const market = world.market({ wallet, budget: '$0.009' });
    const error = await refusal(market.call(skill.slug, {}));
    expect(error).toMatchObject({ code: 'budget_exceeded', limit: 'budget', allowed: 9_000n });
    expect(wallet.signatures).toBe(0);
    expect(market.spending).toEqual({ spent: 0n, reserved: 0n, budget: 9_000n, remaining: 9_000n });
  });
});

describe('calls the client will not make', () => {
  it('needs a wallet to call, and says so before any request', async () => {
    const skill = await world.addSkill();
    const error = await refusal(world.market({ wallet: undefined }).call(skill.slug, {}));
    expect(error).toMatchObject({ code: 'wallet_required' });
    expect(requestsTo(skill.name)).toHaveLength(0);
  });

  it('refuses a skill listed on another network than the client pays on', async () => {
    const skill = await world.addSkill();
    const error = await refusal(world.market({ network: 'eip155:8453' }).call(skill.slug, {}));
    expect(error).toMatchObject({ code: 'network_not_allowed' });
    expect(error.message).toContain(NETWORK);
  });

  it('refuses a skill its creator switched off', async () => {
    const skill = await world.addSkill();
    const res = await fetch(`${world.registryUrl}/skills/${skill.slug}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...bearer(world.creator.key) },
      body: JSON.stringify({ isActive: false }),
    });
    expect(res.status).toBe(200);
    expect(await refusal(world.market().call(skill.slug, {}))).toMatchObject({ code: 'skill_inactive' });
  });

  it('reports a 402 without readable terms as invalid_response with the status and a body excerpt', async () => {
    const skill = await world.addSkill({ terms: 'body', tamper: () => ({}) });
    const fetchWithBrokenTerms = async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      return res.status === 402 ? new Response('{"oops": true}', { status: 402 }) : res;
    };
    const error = await refusal(world.market({ fetch: fetchWithBrokenTerms }).call(skill.slug, {}));
    expect(error).toMatchObject({ code: 'invalid_response', status: 402, body: '{"oops": true}' });
  });

  it('refuses to send a proof over plain http to a host that is not this machine', async () => {
    const skill = await world.addSkill();
    const elsewhere = async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      const text = await res.text();
      return new Response(text.replaceAll('127.0.0.1', 'skills.example.com'), { status: res.status });
    };
    const error = await refusal(world.market({ fetch: elsewhere }).call(skill.slug, {}));
    expect(error).toMatchObject({ code: 'insecure_endpoint' });
  });
});
