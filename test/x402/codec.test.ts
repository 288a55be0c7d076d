import { describe, expect, it } from 'bun:test';
import {
  decodePaymentPayload,
  decodePaymentRequired,
  decodeSettleResponse,
  decodeBase64Json,
  encodeBase64Json,
  encodePaymentPayload,
  encodePaymentRequired,
  encodeSettleResponse,
  parsePaymentPayload,
  readPaymentHeader,
  readSettleResponseHeader,
  settleResponseHeaders,
  signAuthorization,
  type PaymentPayloadV1,
  type SettleResponse,
} from 'skill-market/x402';
import { NOW, makeTerms, newAccount } from './factories';

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

async function signedPayload() {
  const terms = makeTerms();
  const account = newAccount();
  const payload = await signAuthorization(account, terms.requirements, { now: NOW, resource: terms.paymentRequired.resource });
  return { terms, account, payload };
}

describe('base64 JSON', () => {
  it('encodes UTF-8 JSON as standard padded base64, like Buffer does, ASCII or not', () => {
    for (const value of [{ description: 'Übersetzung ✓ 日本語 🚀', q: '???>>>' }, { description: 'plain', q: '???>>>', n: 1 }, {}]) {
      const encoded = encodeBase64Json(value);
      expect(encoded).toMatch(STANDARD_BASE64);
      expect(encoded).toBe(Buffer.from(JSON.stringify(value), 'utf8').toString('base64'));
      expect(decodeBase64Json(encoded, 'malformed_payment', 'payment')).toEqual(value);
    }
  });

  it('round-trips non-ASCII text in a PaymentRequired', () => {
    const terms = makeTerms({ description: 'Übersetzung ✓ 日本語 🚀' });
    expect(decodePaymentRequired(encodePaymentRequired(terms.paymentRequired))).toEqual(terms.paymentRequired);
  });
});

describe('PaymentRequired', () => {
  it('round-trips through the PAYMENT-REQUIRED header form', () => {
    const { paymentRequired } = makeTerms();
    const withError = { ...paymentRequired, error: 'payment required' };
    expect(decodePaymentRequired(encodePaymentRequired(withError))).toEqual(withError);
  });

  it('keeps other schemes and networks a server lists', () => {
    const { paymentRequired } = makeTerms();
    const solana = {
      scheme: 'exact',
      network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      amount: '1000',
      asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      payTo: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
      maxTimeoutSeconds: 60,
    };
    const mixed = { ...paymentRequired, accepts: [solana, ...paymentRequired.accepts] };
    expect(decodePaymentRequired(encodeBase64Json(mixed)).accepts).toEqual(mixed.accepts);
  });

  it('drops null optionals the reference schemas allow', () => {
    const { paymentRequired } = makeTerms();
    const nulls = { ...paymentRequired, error: null, extensions: null, resource: { url: 'https://a.test', description: null } };
    expect(decodePaymentRequired(encodeBase64Json(nulls))).toEqual({
      x402Version: 2,
      resource: { url: 'https://a.test' },
      accepts: paymentRequired.accepts,
    });
  });
});

describe('PaymentPayload v2', () => {
  it('round-trips a signed payload and normalizes it', async () => {
    const { terms, account, payload } = await signedPayload();
    const decoded = decodePaymentPayload(encodePaymentPayload(payload));
    expect(decoded.x402Version).toBe(2);
    expect(decoded.scheme).toBe('exact');
    expect(decoded.network).toBe('eip155:84532');
    expect(decoded.accepted).toEqual(terms.requirements);
    expect(decoded.authorization.from).toBe(account.address);
    expect(decoded.signature).toBe(payload.payload.signature);
    expect(decoded.resource).toEqual(terms.paymentRequired.resource);
    expect(decoded.original).toEqual(JSON.parse(JSON.stringify(payload)));
  });

  it('tolerates unknown fields and drops null optionals', async () => {
    const { payload } = await signedPayload();
    const decoded = parsePaymentPayload({
      ...payload,
      resource: null,
      extensions: null,
      future: 1,
      accepted: { ...payload.accepted, extra: null },
    });
    expect(decoded.resource).toBeUndefined();
    expect(decoded.extensions).toBeUndefined();
    expect(decoded.accepted).not.toHaveProperty('extra');
  });

  it('keeps extensions', async () => {
    const { payload } = await signedPayload();
    const decoded = parsePaymentPayload({ ...payload, extensions: { 'payment-identifier': { id: 'abc' } } });
    expect(decoded.extensions).toEqual({ 'payment-identifier': { id: 'abc' } });
  });
});

describe('PaymentPayload v1', () => {
  it('decodes a v1 payload and maps its network name to CAIP-2', async () => {
    const { payload } = await signedPayload();
    const v1: PaymentPayloadV1 = { x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: payload.payload };
    const decoded = decodePaymentPayload(encodePaymentPayload(v1));
    expect(decoded).toEqual({
      x402Version: 1,
      scheme: 'exact',
      network: 'eip155:84532',
      authorization: payload.payload.authorization,
      signature: payload.payload.signature,
      original: v1,
    });
  });
});

describe('SettleResponse', () => {
  const success: SettleResponse = {
    success: true,
    payer: newAccount().address,
    transaction: `0x${'ab'.repeat(32)}`,
    network: 'eip155:84532',
  };
  const failure: SettleResponse = {
    success: false,
    errorReason: 'settlement_pending',
    errorMessage: 'receipt not seen in time',
    transaction: '',
    network: 'eip155:84532',
  };

  it('round-trips a success and a failure receipt', () => {
    expect(decodeSettleResponse(encodeSettleResponse(success))).toEqual(success);
    expect(decodeSettleResponse(encodeSettleResponse(failure))).toEqual(failure);
  });

  it('encodes only the receipt fields, dropping extras such as extensionResponses', () => {
    const decoded = JSON.parse(atob(encodeSettleResponse({ ...success, extensionResponses: { x: 1 } } as SettleResponse)));
    expect(decoded).toEqual(success);
  });

  it('sets PAYMENT-RESPONSE and X-PAYMENT-RESPONSE to the same value and reads either back', () => {
    const headers = settleResponseHeaders(success);
    expect(headers['PAYMENT-RESPONSE']).toBe(headers['X-PAYMENT-RESPONSE'] as string);
    expect(readSettleResponseHeader(new Headers(headers))).toEqual({ type: 'receipt', receipt: success });
    const legacyOnly = new Headers({ 'X-PAYMENT-RESPONSE': headers['X-PAYMENT-RESPONSE'] as string });
    expect(readSettleResponseHeader(legacyOnly)).toEqual({ type: 'receipt', receipt: success });
    expect(readSettleResponseHeader(new Headers())).toEqual({ type: 'none' });
  });
});

describe('readPaymentHeader', () => {
  it('answers none without a proof header', () => {
    expect(readPaymentHeader(new Headers({ 'content-type': 'application/json' }))).toEqual({ type: 'none' });
  });

  it('reads the proof from PAYMENT-SIGNATURE', async () => {
    const { payload } = await signedPayload();
    const result = readPaymentHeader(new Headers({ 'payment-signature': encodePaymentPayload(payload) }));
    expect(result.type).toBe('payment');
    if (result.type === 'payment') {
      expect(result.header).toBe('PAYMENT-SIGNATURE');
      expect(result.payment.signature).toBe(payload.payload.signature);
    }
  });

  it('reads the proof from X-Payment', async () => {
    const { payload } = await signedPayload();
    const result = readPaymentHeader(new Headers({ 'X-Payment': encodePaymentPayload(payload) }));
    expect(result.type === 'payment' && result.header).toBe('X-PAYMENT');
  });

  it('accepts both headers when they carry the same proof', async () => {
    const { payload } = await signedPayload();
    const value = encodePaymentPayload(payload);
    expect(readPaymentHeader(new Headers({ 'X-Payment': value, 'PAYMENT-SIGNATURE': value })).type).toBe('payment');
  });

  it('rejects two different proofs', async () => {
    const a = await signedPayload();
    const b = await signedPayload();
    const result = readPaymentHeader(
      new Headers({ 'X-Payment': encodePaymentPayload(a.payload), 'PAYMENT-SIGNATURE': encodePaymentPayload(b.payload) }),
    );
    expect(result.type === 'error' && result.error.code).toBe('malformed_payment');
  });

  it('returns a typed error for a malformed proof instead of throwing', () => {
    const result = readPaymentHeader(new Headers({ 'X-Payment': 'not base64!' }));
    expect(result.type === 'error' && result.error.code).toBe('malformed_payment');
  });

  it('works with any object that has get()', async () => {
    const { payload } = await signedPayload();
    const value = encodePaymentPayload(payload);
    const reader = { get: (name: string) => (name === 'X-PAYMENT' ? value : undefined) };
    expect(readPaymentHeader(reader).type).toBe('payment');
  });
});
