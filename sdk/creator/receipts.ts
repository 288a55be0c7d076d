/**
 * The skill server's receipts (x402/receipt.ts says what one is and why it is our own EIP-712
 * type): the receipt key, given (`serve({ receiptKey })`, `MARKET_RECEIPT_KEY`) or made once and
 * kept in the server's data folder so its address outlives restarts, and the signing of one paid
 * answer. Only the key's address leaves the process (the registration's `receiptSigner`); the key
 * is never logged or sent.
 *
 * Signed: every paid answer a scheme gives at once (exact, upto, channel calls; paid-call.ts
 * `paidAnswer`), an `exact` result held while its settlement's outcome was unknown once it is
 * released (`signBody`), and a resend of either (a replayed proof, a channel's lost answer: the
 * receipt is kept with the answer). A buyer's client takes an answer without a receipt (a server
 * that signs none, or one whose signing failed: logged) as unsigned.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  bodyDigest,
  checksumAddress,
  decodeBase64Json,
  encodeBase64Json,
  encodeReceiptHeader,
  OFFER_RECEIPT_EXTENSION,
  PAYMENT_RESPONSE_HEADER,
  RECEIPT_HEADER,
  signOfferReceipt,
  signSkillReceipt,
  X_PAYMENT_RESPONSE_HEADER,
  type Address,
  type ReceiptSigningAccount,
  type SignedSkillReceipt,
} from '../x402/index';
import { ServeConfigError } from './errors';
import { DEFAULT_CHANNELS_DIR } from './schemes/channel/settings';
import type { SettledCall, SkillRoute } from './scheme';

/** The file a generated receipt key is kept in, in the server's data folder. */
const RECEIPT_KEY_FILE = 'receipt-key';

const KEY_PATTERN = /^0x[0-9a-fA-F]{64}$/;

/**
 * The data folder a generated receipt key is kept in: the folder that holds the channel store
 * (`channels` as a folder: its parent; default `.market`).
 *
 * @example receiptKeyFolder('/var/lib/skills/channels'); // '/var/lib/skills'
 */
export function receiptKeyFolder(channelsFolder: string | undefined): string {
  return dirname(channelsFolder ?? DEFAULT_CHANNELS_DIR);
}

/**
 * The receipt signer: the given key, else the one kept in `folder` (made there, readable by the
 * owner only, the first time).
 *
 * @example
 * const signer = await loadReceiptSigner({ folder: '.market' });
 * console.log(signer.address); // what the registry lists as the skills' receiptSigner
 * @throws ServeConfigError when the given or kept key is not a private key
 */
export async function loadReceiptSigner(options: { key?: string | undefined; folder: string }): Promise<ReceiptSigningAccount> {
  if (options.key !== undefined) {
    if (!KEY_PATTERN.test(options.key)) throw new ServeConfigError('receiptKey must be a private key (0x + 64 hex)');
    return privateKeyToAccount(options.key as `0x${string}`);
  }
  const file = join(options.folder, RECEIPT_KEY_FILE);
  let kept: string | undefined;
  try {
    kept = (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (kept !== undefined) {
    if (!KEY_PATTERN.test(kept))
      throw new ServeConfigError(`${file} does not hold a private key (0x + 64 hex); remove it to make a new one`);
    return privateKeyToAccount(kept as `0x${string}`);
  }
  const key = generatePrivateKey();
  await mkdir(options.folder, { recursive: true });
  // `wx`: two servers starting at once in one folder keep the first key, not two.
  try {
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    await chmod(file, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadReceiptSigner(options);
    throw error;
  }
  return privateKeyToAccount(key);
}

/**
 * Signs the receipt of a paid answer: `settled` says who paid what through which payment, `body`
 * is the answer's exact text, `headers` the scheme's (its `PAYMENT-RESPONSE`). Answers the headers
 * to send: the skill-market receipt in `X-Receipt`, and the `offer-receipt` extension's receipt of
 * the same payment in `PAYMENT-RESPONSE`'s extensions. Without a signer, nothing is signed.
 */
export async function signAnswer(
  signer: ReceiptSigningAccount | undefined,
  route: SkillRoute,
  settled: SettledCall,
  body: string,
  now: () => number,
  headers: Record<string, string>,
): Promise<{ receipt: SignedSkillReceipt; headers: Record<string, string> } | undefined> {
  if (!signer) return undefined;
  const channel = settled.channelId !== undefined;
  const receipt = await signSkillReceipt(signer, {
    version: 1,
    resourceUrl: route.terms.paymentRequired.resource.url,
    skill: route.name,
    network: settled.network,
    scheme: settled.scheme,
    payer: (checksumAddress(settled.payer) ?? settled.payer) as Address,
    amount: settled.amountAtomic ?? route.amount.toString(),
    transaction: channel ? settled.channelId! : settled.transaction,
    cumulativeAmount: channel ? (settled.chargedCumulativeAmount ?? '0') : '0',
    issuedAt: Math.floor(now() / 1000),
    bodyDigest: bodyDigest(body),
  });
  const sent: Record<string, string> = { ...headers, [RECEIPT_HEADER]: encodeReceiptHeader(receipt) };
  const settlement = headers[PAYMENT_RESPONSE_HEADER];
  if (settlement !== undefined) {
    const read = decodeBase64Json(settlement, 'malformed_settle_response', 'PAYMENT-RESPONSE') as Record<string, unknown>;
    const extensions = { ...(read.extensions as Record<string, unknown> | undefined) };
    extensions[OFFER_RECEIPT_EXTENSION] = { info: { receipt: await signOfferReceipt(signer, receipt.payload) } };
    const value = encodeBase64Json({ ...read, extensions });
    sent[PAYMENT_RESPONSE_HEADER] = value;
    if (X_PAYMENT_RESPONSE_HEADER in headers) sent[X_PAYMENT_RESPONSE_HEADER] = value;
  }
  return { receipt, headers: sent };
}
