import { describe, expect, it } from 'bun:test';
import { hashTypedData, verifyTypedData } from 'viem';
import {
  X402Error,
  authorizationTypedData,
  createAuthorization,
  isSignedByPayer,
  recoverAuthorizationSigner,
  signAuthorization,
  splitSignature,
  type Authorization,
  type TypedDataSigner,
} from 'skill-market/x402';
import { NOW, localAsset, makeTerms, newAccount, rejected, thrown } from './factories';

describe('createAuthorization', () => {
  it('pays exactly the amount to payTo, valid from now-600 to now+maxTimeoutSeconds', () => {
    const terms = makeTerms({ maxTimeoutSeconds: 90 });
    const from = newAccount().address;
    const auth = createAuthorization(terms.requirements, from.toLowerCase(), { now: NOW });
    expect(auth).toMatchObject({
      from,
      to: terms.requirements.payTo,
      value: '1000',
      validAfter: String(NOW - 600),
      validBefore: String(NOW + 90),
    });
    expect(auth.nonce).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('draws a fresh random nonce each time unless one is given', () => {
    const { requirements } = makeTerms();
    const from = newAccount().address;
    const nonces = new Set(Array.from({ length: 50 }, () => createAuthorization(requirements, from).nonce));
    expect(nonces.size).toBe(50);
    const nonce = `0x${'07'.repeat(32)}` as const;
    expect(createAuthorization(requirements, from, { nonce }).nonce).toBe(nonce);
  });

  it('uses the real clock by default', () => {
    const auth = createAuthorization(makeTerms().requirements, newAccount().address);
    const now = Math.floor(Date.now() / 1000);
    expect(Math.abs(Number(auth.validBefore) - 60 - now)).toBeLessThanOrEqual(2);
  });

  it('never sets validAfter below zero', () => {
    expect(createAuthorization(makeTerms().requirements, newAccount().address, { now: 100 }).validAfter).toBe('0');
  });

  it('rejects a bad clock, nonce or payer address with typed errors', () => {
    const { requirements } = makeTerms();
    const from = newAccount().address;
    for (const fn of [
      () => createAuthorization(requirements, from, { now: -1 }),
      () => createAuthorization(requirements, from, { now: 1.5 }),
      () => createAuthorization(requirements, from, { nonce: '0x12' }),
      () => createAuthorization(requirements, '0xabc'),
      () => createAuthorization({ ...requirements, amount: 'x' }, from),
    ]) {
      expect(thrown(fn)).toBeInstanceOf(X402Error);
    }
  });
});

describe('signAuthorization and recoverAuthorizationSigner', () => {
  it('signs a payload that recovers to the signer', async () => {
    const terms = makeTerms();
    const account = newAccount();
    const payload = await signAuthorization(account, terms.requirements, { now: NOW });
    expect(payload.x402Version).toBe(2);
    expect(payload.accepted).toBe(terms.requirements);
    expect(await recoverAuthorizationSigner(payload.payload, terms.requirements)).toBe(account.address);
    expect(await isSignedByPayer(payload.payload, terms.requirements)).toBe(true);
  });

  it("signs the typed data viem verifies, under the token's EIP-712 domain", async () => {
    const asset = localAsset({ name: 'Local USD', version: '7' });
    const terms = makeTerms({ network: 'eip155:31337', asset });
    const account = newAccount();
    const { payload } = await signAuthorization(account, terms.requirements, { now: NOW });
    const typedData = authorizationTypedData(payload.authorization, terms.requirements);
    expect(typedData.domain).toEqual({ name: 'Local USD', version: '7', chainId: 31337, verifyingContract: asset.address });
    expect(await verifyTypedData({ ...typedData, address: account.address, signature: payload.signature })).toBe(true);
    expect(hashTypedData(typedData)).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('includes resource and extensions when given', async () => {
    const terms = makeTerms();
    const payload = await signAuthorization(newAccount(), terms.requirements, {
      resource: terms.paymentRequired.resource,
      extensions: { a: 1 },
    });
    expect(payload.resource).toEqual(terms.paymentRequired.resource);
    expect(payload.extensions).toEqual({ a: 1 });
  });

  it('accepts any signer with address and signTypedData', async () => {
    const account = newAccount();
    const signer: TypedDataSigner = { address: account.address, signTypedData: (data) => account.signTypedData(data) };
    const terms = makeTerms();
    const { payload } = await signAuthorization(signer, terms.requirements);
    expect(await recoverAuthorizationSigner(payload, terms.requirements)).toBe(account.address);
  });

  const tamperings: [keyof Authorization, (a: Authorization) => string][] = [
    ['from', () => newAccount().address],
    ['to', () => newAccount().address],
    ['value', (a) => String(BigInt(a.value) + 1n)],
    ['validAfter', (a) => String(BigInt(a.validAfter) + 1n)],
    ['validBefore', (a) => String(BigInt(a.validBefore) + 1n)],
    ['nonce', () => `0x${'ee'.repeat(32)}`],
  ];
  for (const [field, change] of tamperings) {
    it(`recovers a different address when authorization.${field} is tampered with`, async () => {
      const terms = makeTerms();
      const account = newAccount();
      const { payload } = await signAuthorization(account, terms.requirements, { now: NOW });
      const tampered = { ...payload, authorization: { ...payload.authorization, [field]: change(payload.authorization) } };
      expect(await recoverAuthorizationSigner(tampered, terms.requirements)).not.toBe(account.address);
      expect(await isSignedByPayer(tampered, terms.requirements)).toBe(false);
    });
  }

  it('recovers a different address under another domain (chain, token, name, version)', async () => {
    const terms = makeTerms();
    const account = newAccount();
    const { payload } = await signAuthorization(account, terms.requirements, { now: NOW });
    const r = terms.requirements;
    for (const other of [
      { ...r, network: 'eip155:8453' as const },
      { ...r, asset: newAccount().address },
      { ...r, extra: { ...r.extra, name: 'USD Coin' } },
      { ...r, extra: { ...r.extra, version: '1' } },
    ]) {
      expect(await recoverAuthorizationSigner(payload, other)).not.toBe(account.address);
    }
  });

  it('recovers the same signer from lowercase addresses (checksums are not significant)', async () => {
    const terms = makeTerms();
    const account = newAccount();
    const { payload } = await signAuthorization(account, terms.requirements, { now: NOW });
    const a = payload.authorization;
    const lower = {
      ...payload,
      authorization: { ...a, from: a.from.toLowerCase() as `0x${string}`, to: a.to.toLowerCase() as `0x${string}` },
    };
    expect(await recoverAuthorizationSigner(lower, terms.requirements)).toBe(account.address);
  });

  it('rejects unrecoverable signatures with invalid_signature', async () => {
    const terms = makeTerms();
    const { payload } = await signAuthorization(newAccount(), terms.requirements, { now: NOW });
    for (const signature of [
      `0x${'00'.repeat(65)}`,
      `0x${'ab'.repeat(64)}`,
      `0x${'ab'.repeat(200)}`,
      `${payload.signature.slice(0, 130)}05`,
    ]) {
      const error = await rejected(() =>
        recoverAuthorizationSigner({ ...payload, signature: signature as `0x${string}` }, terms.requirements),
      );
      expect(error).toBeInstanceOf(X402Error);
      expect((error as X402Error).code).toBe('invalid_signature');
      expect(await isSignedByPayer({ ...payload, signature: signature as `0x${string}` }, terms.requirements)).toBe(false);
    }
  });

  it('rejects requirements without an EIP-712 domain', async () => {
    const terms = makeTerms();
    const { payload } = await signAuthorization(newAccount(), terms.requirements, { now: NOW });
    const { extra: _extra, ...noDomain } = terms.requirements;
    const error = await rejected(() => recoverAuthorizationSigner(payload, noDomain));
    expect((error as X402Error).code).toBe('invalid_requirements');
    expect(((await rejected(() => signAuthorization(newAccount(), noDomain))) as X402Error).code).toBe('invalid_requirements');
  });

  it('rejects a malformed authorization with a typed error, not a TypeError', async () => {
    const terms = makeTerms();
    const { payload } = await signAuthorization(newAccount(), terms.requirements, { now: NOW });
    for (const authorization of [
      { ...payload.authorization, value: 'abc' },
      { ...payload.authorization, from: '0x1' },
      { ...payload.authorization, value: '9'.repeat(78) },
    ]) {
      const error = await rejected(() =>
        recoverAuthorizationSigner({ ...payload, authorization: authorization as Authorization }, terms.requirements),
      );
      expect(error).toBeInstanceOf(X402Error);
    }
  });
});

describe('splitSignature', () => {
  it('splits a 65-byte signature into v, r, s', async () => {
    const terms = makeTerms();
    const { payload } = await signAuthorization(newAccount(), terms.requirements, { now: NOW });
    const { v, r, s, yParity } = splitSignature(payload.signature);
    expect(r).toBe(`0x${payload.signature.slice(2, 66)}`);
    expect(s).toBe(`0x${payload.signature.slice(66, 130)}`);
    expect(v).toBe(Number.parseInt(payload.signature.slice(130), 16) as 27 | 28);
    expect(yParity).toBe(v === 27 ? 0 : 1);
  });

  it('normalizes a 0/1 recovery byte to 27/28', () => {
    const sig = `0x${'11'.repeat(32)}${'22'.repeat(32)}01` as const;
    expect(splitSignature(sig).v).toBe(28);
  });

  it('rejects other lengths and bad recovery bytes with invalid_signature', () => {
    for (const sig of ['0x', `0x${'11'.repeat(64)}`, `0x${'11'.repeat(66)}`, `0x${'11'.repeat(64)}05`, 'nothex']) {
      const error = thrown(() => splitSignature(sig as `0x${string}`));
      expect((error as X402Error).code).toBe('invalid_signature');
    }
  });
});
