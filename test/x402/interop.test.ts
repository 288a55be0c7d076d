/**
 * Interop with the reference x402 packages (@x402/core, @x402/evm 2.27), used only as test peers:
 * their client pays our terms, their decoders read our headers, ours read theirs.
 */
import { describe, expect, it } from 'bun:test';
import { x402Client } from '@x402/core/client';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentResponseHeader,
  encodePaymentSignatureHeader,
  x402HTTPClient,
} from '@x402/core/http';
import { validatePaymentPayload, validatePaymentRequired } from '@x402/core/schemas';
import { x402ResourceServer } from '@x402/core/server';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import {
  acceptedMatches,
  decodeSettleResponse,
  encodePaymentPayload,
  paymentMatchesRequirements,
  paymentRequiredResponse,
  readPaymentHeader,
  recoverAuthorizationSigner,
  settleResponseHeaders,
  signAuthorization,
  type DecodedPayment,
  type PaymentTerms,
} from 'skill-market/x402';
import { NOW, localAsset, makeTerms, newAccount } from './factories';

/** What the reference fetch wrapper does on a 402: read our response, pay, build the retry headers. */
async function referenceClientPays(terms: PaymentTerms, options: { allowAsset?: boolean } = {}) {
  const account = newAccount();
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  if (options.allowAsset) {
    client.setSpendControls({ allowedAssets: [{ network: terms.requirements.network, asset: terms.requirements.asset }] });
  }
  const http = new x402HTTPClient(client);
  const response = paymentRequiredResponse(terms);
  const headers = new Headers(response.headers);
  const paymentRequired = http.getPaymentRequiredResponse((name) => headers.get(name), response.body);
  const payload = await http.createPaymentPayload(paymentRequired);
  const retryHeaders = http.encodePaymentSignatureHeader(payload);
  return { account, retryHeaders: new Headers(retryHeaders) };
}

function decodedFrom(headers: Headers): DecodedPayment {
  const result = readPaymentHeader(headers);
  if (result.type !== 'payment') throw new Error(`expected a payment, got ${JSON.stringify(result)}`);
  return result.payment;
}

describe('reference client pays our terms', () => {
  it('sends a PAYMENT-SIGNATURE our codec decodes, matching our requirements and recovering to the payer', async () => {
    const terms = makeTerms();
    const { account, retryHeaders } = await referenceClientPays(terms);
    expect(retryHeaders.has('PAYMENT-SIGNATURE')).toBe(true);
    const payment = decodedFrom(retryHeaders);
    expect(payment.x402Version).toBe(2);
    expect(payment.authorization.from).toBe(account.address);
    expect(payment.authorization.value).toBe(terms.requirements.amount);
    expect(payment.resource).toEqual(terms.paymentRequired.resource);
    expect(acceptedMatches(payment.accepted, terms.requirements)).toBe(true);
    expect(paymentMatchesRequirements(payment, terms.requirements)).toBe(true);
    expect(await recoverAuthorizationSigner(payment, terms.requirements)).toBe(account.address);
  });

  it('pays a custom local-chain token once the asset is allowed', async () => {
    const terms = makeTerms({ network: 'eip155:31337', asset: localAsset() });
    const { account, retryHeaders } = await referenceClientPays(terms, { allowAsset: true });
    const payment = decodedFrom(retryHeaders);
    expect(payment.network).toBe('eip155:31337');
    expect(acceptedMatches(payment.accepted, terms.requirements)).toBe(true);
    expect(await recoverAuthorizationSigner(payment, terms.requirements)).toBe(account.address);
  });

  it('pays Base mainnet terms built from a dollar price', async () => {
    const terms = makeTerms({ network: 'eip155:8453' });
    const { account, retryHeaders } = await referenceClientPays(terms);
    const payment = decodedFrom(retryHeaders);
    expect(await recoverAuthorizationSigner(payment, terms.requirements)).toBe(account.address);
  });

  it('produces a v1 X-PAYMENT payload our codec decodes and recovers', async () => {
    const terms = makeTerms({ network: 'base-sepolia' });
    const account = newAccount();
    const r = terms.requirements;
    const v1Requirements = {
      scheme: 'exact',
      network: 'base-sepolia',
      maxAmountRequired: r.amount,
      resource: 'https://skills.example/echo',
      description: 'Echo',
      mimeType: 'application/json',
      payTo: r.payTo,
      maxTimeoutSeconds: r.maxTimeoutSeconds,
      asset: r.asset,
      extra: r.extra,
    };
    const partial = await new ExactEvmSchemeV1(account).createPaymentPayload(1, v1Requirements as never);
    const payment = decodedFrom(new Headers({ 'X-PAYMENT': encodePaymentSignatureHeader(partial as never) }));
    expect(payment.x402Version).toBe(1);
    expect(payment.network).toBe('eip155:84532');
    expect(paymentMatchesRequirements(payment, r)).toBe(true);
    expect(await recoverAuthorizationSigner(payment, r)).toBe(account.address);
  });
});

describe('reference decoders read what we produce', () => {
  it('decodes our PAYMENT-REQUIRED header into a schema-valid PaymentRequired', () => {
    const terms = makeTerms({ description: 'Übersetzung ✓' });
    const header = paymentRequiredResponse(terms, 'payment required').headers['PAYMENT-REQUIRED'] as string;
    const decoded = decodePaymentRequiredHeader(header);
    expect(validatePaymentRequired(decoded)).toEqual({ ...terms.paymentRequired, error: 'payment required' } as never);
  });

  it('decodes our signed PaymentPayload and accepts it as a schema-valid payload', async () => {
    const terms = makeTerms();
    const payload = await signAuthorization(newAccount(), terms.requirements, { now: NOW, resource: terms.paymentRequired.resource });
    const decoded = decodePaymentSignatureHeader(encodePaymentPayload(payload));
    expect(decoded).toEqual(JSON.parse(JSON.stringify(payload)));
    expect(() => validatePaymentPayload(decoded)).not.toThrow();
  });

  it('the reference server finds our requirements for the payload we sign', async () => {
    const terms = makeTerms();
    const payload = await signAuthorization(newAccount(), terms.requirements, { now: NOW });
    const server = new x402ResourceServer();
    const other = makeTerms({ amount: 5000n }).requirements;
    const found = server.findMatchingRequirements(
      [other, terms.requirements] as never,
      decodePaymentSignatureHeader(encodePaymentPayload(payload)),
    );
    expect(found).toEqual(terms.requirements as never);
  });

  it('decodes our PAYMENT-RESPONSE receipt, and we decode theirs', () => {
    const receipt = { success: true, payer: newAccount().address, transaction: `0x${'cd'.repeat(32)}`, network: 'eip155:84532' };
    const ours = settleResponseHeaders(receipt);
    expect(decodePaymentResponseHeader(ours['PAYMENT-RESPONSE'] as string)).toEqual(receipt as never);
    const theirs = encodePaymentResponseHeader({ ...receipt, extensionResponses: { x: {} } } as never);
    expect(decodeSettleResponse(theirs)).toEqual(receipt);
  });

  it('rejects the base64url forms the reference decoders also reject', async () => {
    const terms = makeTerms();
    const payload = await signAuthorization(newAccount(), terms.requirements, { now: NOW });
    let header = encodePaymentPayload(payload);
    for (let i = 0; !/[+/]/.test(header) && i < 100; i++) {
      header = encodePaymentPayload({ ...payload, extensions: { pad: `${'?'.repeat(i)}>` } });
    }
    const url = header.replace(/\+/g, '-').replace(/\//g, '_');
    expect(() => decodePaymentSignatureHeader(url)).toThrow();
    expect(readPaymentHeader(new Headers({ 'PAYMENT-SIGNATURE': url })).type).toBe('error');
  });
});
