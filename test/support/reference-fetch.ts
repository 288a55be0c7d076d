/**
 * The reference x402 client as a buyer uses it: `@x402/fetch` around `@x402/core`'s client with
 * `@x402/evm`'s exact scheme, paying only in the chain's test USDC; and the live 402 of a server,
 * to compare a catalogue's listing with, and to pay from a listing instead of the server's own 402.
 */
import { expect } from 'bun:test';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentRequired, encodeBase64Json, type PaymentRequired } from 'skill-market/x402';
import type { LocalChain, TestAccount } from './chain';

/** A fetch that pays 402s by `exact` from `account` on `chain`, sending through `send` (default the global fetch). */
export function referenceExactFetch(chain: LocalChain, account: TestAccount, send: typeof fetch = fetch) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  return wrapFetchWithPayment(send, client);
}

/** The PaymentRequired of an unpaid POST without a body, as the server answers it. */
export async function asked(endpoint: string): Promise<PaymentRequired> {
  const res = await fetch(endpoint, { method: 'POST' });
  expect(res.status).toBe(402);
  return decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!);
}

/** A fetch whose 402s offer `accepts` (a listing's) instead of the server's own: the client pays from the listing. */
export const offering = (accepts: unknown[]) =>
  (async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    if (res.status !== 402) return res;
    const required = decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!);
    const headers = new Headers(res.headers);
    headers.set('PAYMENT-REQUIRED', encodeBase64Json({ ...required, accepts }));
    return new Response(await res.text(), { status: 402, headers });
  }) as typeof fetch;
