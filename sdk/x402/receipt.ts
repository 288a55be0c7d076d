/**
 * The skill-market receipt: what a skill server signs on every paid answer so the buyer (and the
 * registry) can check the charge. It names the skill (resource URL and name), the network, the
 * scheme, the payer, the amount actually charged (atomic units), the payment reference (the
 * settlement transaction; for a channel call the channel, with the channel's cumulative charge
 * after the call), the time and the SHA-256 of the exact answer body bytes.
 *
 * ## Why our own EIP-712 type, and not the x402 `offer-receipt` extension's receipt
 *
 * The extension (x402 specs/extensions/extension-offer-and-receipt.md, §5) defines a receipt of six
 * fields: version, network, resourceUrl, payer, issuedAt, transaction. It carries no amount and no
 * digest of the answer, the two facts a buyer checks a charge by. Its EIP-712 form signs exactly
 * that `Receipt` type in the `x402 receipt` domain: adding fields changes the type hash, so an
 * extension-only verifier would reject it (or, signing the six fields only, the extra fields
 * would be unsigned and worth nothing). Its JWS form could carry more in its JSON payload, but is
 * checked against a public key resolved from a `kid` (did:web, attestations): the buyer and the
 * registry here know the signer by the address on the skill's listing, which an EIP-712 signature
 * recovers directly. So the receipt is our own EIP-712 type (domain `skill-market receipt`, chain
 * of the payment's network) in the extension's signed-receipt shape (`{ format: 'eip712',
 * payload, signature }`, with the extension's field names where they mean the same), carried in
 * its own header, {@link RECEIPT_HEADER}, instead of the extension's place in `PAYMENT-RESPONSE`,
 * where an extension verifier would take it for its own type and refuse it. That place holds the
 * extension's own receipt of the same payment, signed by the same key ({@link signOfferReceipt}):
 * an extension-only client checks that one and recovers the same address.
 *
 * viem; receipt-digest.ts and signer-keys.ts (@noble/curves) are loaded at first use.
 */
import { hashTypedData, hexToBytes, recoverAddress, sha256, type Hex, type LocalAccount } from 'viem';
import { decodeBase64Json, encodeBase64Json, MAX_HEADER_LENGTH } from './base64';
import { parseCaip2 } from './networks';
import type { SignerKeys } from './signer-keys';
import { ADDRESS_PATTERN, BYTES32_PATTERN, sameAddress, type Address } from './patterns';

/**
 * The header a skill server's signed receipt travels in: base64 of the JSON {@link SignedSkillReceipt}.
 *
 * @example
 * const signed = readReceiptHeader(response.headers); // undefined when the server signs none
 */
export const RECEIPT_HEADER = 'X-Receipt';

/** What a receipt says about one paid answer. Amounts are decimal strings of atomic units. */
export interface SkillReceiptPayload {
  /** Receipt schema version: 1. */
  version: 1;
  /** The skill's call URL (the 402's `resource.url`). */
  resourceUrl: string;
  /** The skill's name on its server. */
  skill: string;
  /** CAIP-2 network of the payment, e.g. `eip155:8453`. */
  network: string;
  /** The x402 scheme that paid: `exact`, `upto` or `batch-settlement`. */
  scheme: string;
  payer: Address;
  /** What this call was charged, atomic units: the price (exact), the handler's charge (upto, channel). */
  amount: string;
  /** The settlement transaction (exact, upto); for a channel call its channelId. */
  transaction: string;
  /** Channel calls: the channel's cumulative charge after this call, atomic units; `"0"` otherwise. */
  cumulativeAmount: string;
  /** Unix seconds when the receipt was signed. */
  issuedAt: number;
  /** SHA-256 of the answer body's bytes, 0x hex. */
  bodyDigest: Hex;
}

/** A signed receipt, in the shape of the `offer-receipt` extension's EIP-712 receipts. */
export interface SignedSkillReceipt {
  format: 'eip712';
  payload: SkillReceiptPayload;
  /** The receipt key's EIP-712 signature (65 bytes, 0x hex). */
  signature: Hex;
}

const RECEIPT_FIELDS = [
  { name: 'version', type: 'uint256' },
  { name: 'resourceUrl', type: 'string' },
  { name: 'skill', type: 'string' },
  { name: 'network', type: 'string' },
  { name: 'scheme', type: 'string' },
  { name: 'payer', type: 'address' },
  { name: 'amount', type: 'uint256' },
  { name: 'transaction', type: 'string' },
  { name: 'cumulativeAmount', type: 'uint256' },
  { name: 'issuedAt', type: 'uint256' },
  { name: 'bodyDigest', type: 'bytes32' },
] as const;

/** The direct digest (receipt-digest.ts), loaded at the first receipt signed or checked. */
let digests: Promise<typeof import('./receipt-digest')> | undefined;
const receiptDigest = async (...args: Parameters<typeof import('./receipt-digest').receiptDigest>) => {
  digests ??= import('./receipt-digest');
  return (await digests).receiptDigest(...args);
};

/** The digest our receipt's signature is over (what receiptHash gives), computed directly. */
const skillReceiptDigest = (payload: SkillReceiptPayload) =>
  receiptDigest('skill-market receipt', parseCaip2(payload.network), RECEIPT_FIELDS, payload);

/** The EIP-712 typed data of a receipt payload (what a typed-data-only signer signs; receiptHash). */
function typedData(payload: SkillReceiptPayload) {
  return {
    domain: { name: 'skill-market receipt', version: '1', chainId: parseCaip2(payload.network) },
    types: { Receipt: RECEIPT_FIELDS },
    primaryType: 'Receipt' as const,
    message: {
      version: BigInt(payload.version),
      resourceUrl: payload.resourceUrl,
      skill: payload.skill,
      network: payload.network,
      scheme: payload.scheme,
      payer: payload.payer,
      amount: BigInt(payload.amount),
      transaction: payload.transaction,
      cumulativeAmount: BigInt(payload.cumulativeAmount),
      issuedAt: BigInt(payload.issuedAt),
      bodyDigest: payload.bodyDigest,
    },
  };
}

/** Something that signs with the receipt key (a viem local account). */
export type ReceiptSigningAccount = Pick<LocalAccount, 'address' | 'signTypedData'> & { sign?: LocalAccount['sign'] };

/**
 * The x402 `offer-receipt` extension's name: where its receipt travels in `PAYMENT-RESPONSE`
 * (`extensions['offer-receipt'].info.receipt`).
 *
 * @example const receipt = settleResponse.extensions?.[OFFER_RECEIPT_EXTENSION];
 */
export const OFFER_RECEIPT_EXTENSION = 'offer-receipt';

/** The `offer-receipt` extension's receipt (its §5): the six fields it signs. */
export interface OfferReceiptPayload {
  version: 1;
  network: string;
  resourceUrl: string;
  payer: string;
  issuedAt: number;
  transaction: string;
}

const OFFER_RECEIPT_FIELDS = [
  { name: 'version', type: 'uint256' },
  { name: 'network', type: 'string' },
  { name: 'resourceUrl', type: 'string' },
  { name: 'payer', type: 'string' },
  { name: 'issuedAt', type: 'uint256' },
  { name: 'transaction', type: 'string' },
] as const;

/**
 * The extension's own EIP-712 receipt of the same payment, signed by the same key: what an
 * extension-only verifier checks (domain `x402 receipt`, its six fields, nothing more signed or
 * claimed). It travels beside the skill-market receipt, in `PAYMENT-RESPONSE`'s extensions.
 *
 * @example
 * const offerReceipt = await signOfferReceipt(account, signed.payload);
 * settle.extensions = { [OFFER_RECEIPT_EXTENSION]: { info: { receipt: offerReceipt } } };
 */
export async function signOfferReceipt(
  account: ReceiptSigningAccount,
  receipt: SkillReceiptPayload,
): Promise<{ format: 'eip712'; payload: OfferReceiptPayload; signature: Hex }> {
  const payload: OfferReceiptPayload = {
    version: 1,
    network: receipt.network,
    resourceUrl: receipt.resourceUrl,
    payer: receipt.payer,
    issuedAt: receipt.issuedAt,
    transaction: receipt.transaction,
  };
  const signature = account.sign
    ? await account.sign({ hash: await receiptDigest('x402 receipt', 1, OFFER_RECEIPT_FIELDS, payload) })
    : await account.signTypedData({
        domain: { name: 'x402 receipt', version: '1', chainId: 1 },
        types: { Receipt: OFFER_RECEIPT_FIELDS },
        primaryType: 'Receipt',
        message: { ...payload, version: 1n, issuedAt: BigInt(payload.issuedAt) },
      });
  return { format: 'eip712', payload, signature };
}

/**
 * The SHA-256 of an answer body as sent (UTF-8 bytes of the text), 0x hex.
 *
 * @example
 * bodyDigest('{"success":true}') === signed.payload.bodyDigest; // the receipt is for this body
 */
export function bodyDigest(body: string | Uint8Array): Hex {
  return sha256(typeof body === 'string' ? new TextEncoder().encode(body) : body);
}

/**
 * Signs a receipt with the receipt key.
 *
 * @example
 * const signed = await signSkillReceipt(privateKeyToAccount(receiptKey), payload);
 * headers[RECEIPT_HEADER] = encodeReceiptHeader(signed);
 */
export async function signSkillReceipt(account: ReceiptSigningAccount, payload: SkillReceiptPayload): Promise<SignedSkillReceipt> {
  const signature = account.sign
    ? await account.sign({ hash: await skillReceiptDigest(payload) })
    : await account.signTypedData(typedData(payload));
  return { format: 'eip712', payload, signature };
}

/**
 * The EIP-712 digest a receipt's signature is over.
 *
 * @example const digest = receiptHash(signed.payload);
 */
export function receiptHash(payload: SkillReceiptPayload): Hex {
  return hashTypedData(typedData(payload));
}

/**
 * The address that signed a receipt; undefined when the signature is malformed.
 *
 * @example
 * if (!sameAddress(await receiptSignerOf(signed) ?? '', listing.receiptSigner)) throw new Error('forged receipt');
 */
export async function receiptSignerOf(signed: SignedSkillReceipt): Promise<Address | undefined> {
  try {
    return await recoverAddress({ hash: await skillReceiptDigest(signed.payload), signature: signed.signature });
  } catch {
    return undefined;
  }
}

/**
 * The receipt signers of the listings checked last: a buyer or the registry checks many receipts
 * of one server, each then a check against its kept key instead of a recovery (signer-keys.ts).
 * A key's multiples (some 10 ms of CPU, 25 more for the first key; each later check then costs a
 * third of a recovery) are made at its 64th check: a few calls do not pay for them.
 */
let receiptSigners: Promise<SignerKeys> | undefined;

/**
 * Whether `signer` signed the receipt: recovery's verdict, computed faster for a signer seen before.
 * The curve arithmetic is loaded at the first check (a page that pays loads it only then).
 */
async function signedByListed(signed: SignedSkillReceipt, signer: string): Promise<boolean> {
  receiptSigners ??= import('./signer-keys').then(({ SignerKeys }) => new SignerKeys({ keys: 64, multiplesAfter: 64, lowS: false }));
  const keys = await receiptSigners;
  try {
    return keys.signedBy(hexToBytes(await skillReceiptDigest(signed.payload)), signed.signature, signer);
  } catch {
    return false;
  }
}

/**
 * The header value of a signed receipt.
 *
 * @example headers.set(RECEIPT_HEADER, encodeReceiptHeader(signed));
 */
export function encodeReceiptHeader(signed: SignedSkillReceipt): string {
  return encodeBase64Json(signed);
}

const UINT = /^(0|[1-9][0-9]{0,77})$/;
const HASH = new RegExp(BYTES32_PATTERN.source);
const ADDRESS = new RegExp(ADDRESS_PATTERN.source);

/**
 * A receipt read from its JSON form, or the reason it is not one.
 *
 * @example
 * const read = parseSkillReceipt(JSON.parse(text));
 * if (typeof read === 'string') console.log('not a receipt:', read);
 */
export function parseSkillReceipt(value: unknown): SignedSkillReceipt | string {
  if (typeof value !== 'object' || value === null) return 'the receipt is not an object';
  const { format, payload, signature } = value as Record<string, unknown>;
  if (format !== 'eip712') return 'the receipt format is not eip712';
  if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(signature)) return 'the receipt signature is malformed';
  if (typeof payload !== 'object' || payload === null) return 'the receipt has no payload';
  const p = payload as Record<string, unknown>;
  const text = (name: string, max = 2048) => typeof p[name] === 'string' && (p[name] as string).length <= max;
  if (p.version !== 1) return 'the receipt version is not 1';
  if (!text('resourceUrl') || !text('skill', 200) || !text('scheme', 64) || !text('transaction', 200))
    return 'the receipt names no skill or payment';
  if (typeof p.network !== 'string' || !/^eip155:[1-9][0-9]{0,15}$/.test(p.network)) return 'the receipt network is not an eip155 network';
  if (typeof p.payer !== 'string' || !ADDRESS.test(p.payer)) return 'the receipt payer is not an address';
  if (typeof p.amount !== 'string' || !UINT.test(p.amount)) return 'the receipt amount is not an atomic amount';
  if (typeof p.cumulativeAmount !== 'string' || !UINT.test(p.cumulativeAmount))
    return 'the receipt cumulativeAmount is not an atomic amount';
  if (typeof p.issuedAt !== 'number' || !Number.isSafeInteger(p.issuedAt) || p.issuedAt < 0) return 'the receipt issuedAt is not a time';
  if (typeof p.bodyDigest !== 'string' || !HASH.test(p.bodyDigest)) return 'the receipt bodyDigest is not a sha-256 digest';
  return {
    format,
    signature: signature as Hex,
    payload: {
      version: 1,
      resourceUrl: p.resourceUrl as string,
      skill: p.skill as string,
      network: p.network,
      scheme: p.scheme as string,
      payer: p.payer as Address,
      amount: p.amount,
      transaction: p.transaction as string,
      cumulativeAmount: p.cumulativeAmount,
      issuedAt: p.issuedAt,
      bodyDigest: p.bodyDigest as Hex,
    },
  };
}

/**
 * The receipt an answer carries: none, one, or the reason its header cannot be read.
 *
 * @example
 * const read = readReceiptHeader(response.headers);
 * if (read?.type === 'receipt') console.log(read.receipt.payload.amount);
 */
export function readReceiptHeader(
  headers: Headers,
): { type: 'receipt'; receipt: SignedSkillReceipt } | { type: 'error'; reason: string } | undefined {
  const value = headers.get(RECEIPT_HEADER);
  if (value === null) return undefined;
  if (value.length > MAX_HEADER_LENGTH) return { type: 'error', reason: 'the receipt header is too long' };
  let json: unknown;
  try {
    json = decodeBase64Json(value, 'malformed_settle_response', 'receipt header');
  } catch {
    return { type: 'error', reason: 'the receipt header is not base64 JSON' };
  }
  const read = parseSkillReceipt(json);
  return typeof read === 'string' ? { type: 'error', reason: read } : { type: 'receipt', receipt: read };
}

/** What a receipt must match; each fact given is checked. */
export interface ReceiptExpectations {
  /** The listing's receipt signer. */
  signer: string;
  /** The answer body as received. */
  body?: string;
  /** The most the call may charge (the listed price). */
  maxAmount?: bigint;
  /** What the payment says was charged (PAYMENT-RESPONSE; the chain). */
  amount?: bigint;
  payer?: string;
  network?: string;
}

/**
 * Checks a signed receipt: its signer, then each fact given. Undefined when it holds, else the
 * problem in words (`the receipt is signed by 0x…, not the listed receipt signer 0x…`).
 *
 * @example
 * const problem = await receiptProblem(signed, { signer: skill.receiptSigner, body: text, maxAmount: 1000n, payer: wallet });
 * if (problem) throw new Error(problem);
 */
export async function receiptProblem(signed: SignedSkillReceipt, expect: ReceiptExpectations): Promise<string | undefined> {
  const p = signed.payload;
  if (!(await signedByListed(signed, expect.signer))) {
    // Recovered to name the signer in the refusal: the verdict is recovery's either way.
    const signer = await receiptSignerOf(signed);
    if (!signer) return 'the receipt signature cannot be read';
    if (!sameAddress(signer, expect.signer)) return `the receipt is signed by ${signer}, not the listed receipt signer ${expect.signer}`;
  }
  if (expect.body !== undefined && bodyDigest(expect.body) !== p.bodyDigest.toLowerCase())
    return 'the receipt bodyDigest does not match the answer body';
  const amount = BigInt(p.amount);
  if (expect.maxAmount !== undefined && amount > expect.maxAmount)
    return `the receipt amount ${amount} is above the listed price ${expect.maxAmount}`;
  if (expect.amount !== undefined && amount !== expect.amount)
    return `the receipt amount ${amount} differs from the amount charged, ${expect.amount}`;
  if (expect.payer !== undefined && !sameAddress(p.payer, expect.payer)) return `the receipt payer ${p.payer} is not ${expect.payer}`;
  if (expect.network !== undefined && p.network !== expect.network) return `the receipt network ${p.network} is not ${expect.network}`;
  return undefined;
}
