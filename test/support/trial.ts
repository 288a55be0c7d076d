/** Free trial calls as a payer makes them: the 402's sign-in, signed by the wallet, sent back. */
import type { LocalAccount } from 'viem';
import { decodePaymentRequired, readSiwxDeclaration, signSiwx, type SiwxDeclaration } from 'skill-market/x402';

type Send = (request: Request) => Promise<Response>;
const overHttp: Send = (request) => fetch(request);

/** The sign-in a skill's 402 declares. */
export async function trialChallenge(url: string, send: Send = overHttp): Promise<SiwxDeclaration> {
  const unpaid = await send(new Request(url, { method: 'POST' }));
  if (unpaid.status !== 402) throw new Error(`expected 402 from ${url}, got ${unpaid.status}`);
  const declaration = readSiwxDeclaration(decodePaymentRequired(unpaid.headers.get('PAYMENT-REQUIRED')!).extensions);
  if (!declaration) throw new Error(`${url} declares no sign-in`);
  return declaration;
}

/** A signed `SIGN-IN-WITH-X` header for `url`'s current sign-in (`edit` changes the info before signing). */
export async function trialHeader(
  url: string,
  payer: LocalAccount,
  options: { send?: Send; edit?: (d: SiwxDeclaration) => SiwxDeclaration } = {},
): Promise<string> {
  const declaration = await trialChallenge(url, options.send);
  return signSiwx(options.edit ? options.edit(declaration) : declaration, payer);
}

/** POSTs `input` to `url` with a sign-in header. */
export const trialPost = (url: string, input: unknown, header: string, send: Send = overHttp) =>
  send(
    new Request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'SIGN-IN-WITH-X': header },
      body: JSON.stringify(input),
    }),
  );
