/**
 * The x402 `sign-in-with-x` extension (CAIP-122, EIP-4361 messages on `eip155` chains): a server's
 * 402 declares `extensions["sign-in-with-x"]` with `info` (domain, uri, nonce, times) and the chains
 * it takes; the client signs the EIP-4361 message those fields make with its wallet (no gas, no
 * payment) and sends the fields and the signature as base64 JSON in the `SIGN-IN-WITH-X` header.
 * Verified here by recovering the EOA signer (viem); contract wallets are not taken.
 */
import { verifyMessage } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { decodeBase64Json, encodeBase64Json } from './base64';
import { X402Error } from './errors';
import { parseCaip2 } from './networks';
import { ADDRESS_PATTERN, type Address, type Hex } from './patterns';

/**
 * The extension's key in a 402's `extensions`.
 *
 * @example
 * const declared = decodePaymentRequired(header).extensions?.[SIWX_EXTENSION]; // the sign-in a skill with a free trial asks for
 */
export const SIWX_EXTENSION = 'sign-in-with-x';
/**
 * The request header carrying a signed sign-in (base64 JSON).
 *
 * @example
 * await fetch(url, { method: 'POST', headers: { [SIWX_HEADER]: await signSiwx(declaration, account) }, body });
 */
export const SIWX_HEADER = 'SIGN-IN-WITH-X';

/** What a server's 402 asks to be signed (`extensions["sign-in-with-x"].info`). */
export interface SiwxInfo {
  domain: string;
  uri: string;
  version: string;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
  notBefore?: string;
  statement?: string;
  requestId?: string;
  resources?: string[];
}

/** The signed sign-in a client sends (`SIGN-IN-WITH-X`): the info, who signed, on which chain, and the signature. */
export interface SiwxPayload extends SiwxInfo {
  address: Address;
  chainId: string;
  type: 'eip191';
  signature: Hex;
}

/** The declaration of the extension in a 402 (`extensions["sign-in-with-x"]`). */
export interface SiwxDeclaration {
  info: SiwxInfo;
  supportedChains: { chainId: string; type: 'eip191' }[];
  schema: Record<string, unknown>;
}

const STRING = { type: 'string' };
/** The JSON Schema of the header's payload, as the extension declares it. */
const PAYLOAD_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    domain: STRING,
    address: STRING,
    statement: STRING,
    uri: { type: 'string', format: 'uri' },
    version: STRING,
    chainId: STRING,
    type: STRING,
    nonce: STRING,
    issuedAt: { type: 'string', format: 'date-time' },
    expirationTime: { type: 'string', format: 'date-time' },
    notBefore: { type: 'string', format: 'date-time' },
    requestId: STRING,
    resources: { type: 'array', items: { type: 'string', format: 'uri' } },
    signature: STRING,
  },
  required: ['domain', 'address', 'uri', 'version', 'chainId', 'type', 'nonce', 'issuedAt', 'signature'],
};

/**
 * The extension's declaration for a 402: `info` to sign on `network` (EOA signatures).
 *
 * @example
 * const extensions = { [SIWX_EXTENSION]: siwxDeclaration({ domain: 'skills.example', uri: 'https://skills.example/echo', version: '1', nonce, issuedAt: new Date().toISOString() }, 'eip155:8453') };
 */
export function siwxDeclaration(info: SiwxInfo, network: string): SiwxDeclaration {
  return { info, supportedChains: [{ chainId: network, type: 'eip191' }], schema: PAYLOAD_SCHEMA };
}

/**
 * The EIP-4361 message a wallet signs for `info` on `chainId` (CAIP-2).
 *
 * @example
 * const message = siwxMessage(declaration.info, account.address, 'eip155:8453'); // 'skills.example wants you to sign in with your Ethereum account: …'
 */
export function siwxMessage(info: SiwxInfo, address: Address, chainId: string): string {
  return createSiweMessage({
    domain: info.domain,
    address,
    uri: info.uri,
    version: '1',
    chainId: parseCaip2(chainId),
    nonce: info.nonce,
    issuedAt: new Date(info.issuedAt),
    ...(info.statement !== undefined ? { statement: info.statement } : {}),
    ...(info.expirationTime !== undefined ? { expirationTime: new Date(info.expirationTime) } : {}),
    ...(info.notBefore !== undefined ? { notBefore: new Date(info.notBefore) } : {}),
    ...(info.requestId !== undefined ? { requestId: info.requestId } : {}),
    ...(info.resources !== undefined ? { resources: info.resources } : {}),
  });
}

/**
 * Signs a 402's sign-in with `account` (anything with viem's `signMessage`) and encodes the header value.
 *
 * @example
 * const declaration = readSiwxDeclaration(decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!).extensions);
 * if (declaration) headers[SIWX_HEADER] = await signSiwx(declaration, privateKeyToAccount(key));
 */
export async function signSiwx(
  declaration: SiwxDeclaration,
  account: { address: Address; signMessage(args: { message: string }): Promise<Hex> },
): Promise<string> {
  const chainId = declaration.supportedChains.find((c) => c.type === 'eip191' && c.chainId.startsWith('eip155:'))?.chainId;
  if (!chainId) throw new X402Error('invalid_requirements', 'The sign-in names no eip155 chain');
  const signature = await account.signMessage({ message: siwxMessage(declaration.info, account.address, chainId) });
  const payload: SiwxPayload = { ...declaration.info, address: account.address, chainId, type: 'eip191', signature };
  return encodeBase64Json(payload);
}

/**
 * A 402's sign-in declaration, when it has a usable one.
 *
 * @example
 * const declaration = readSiwxDeclaration(decodePaymentRequired(header).extensions); // undefined: the skill offers no free trial
 */
export function readSiwxDeclaration(extensions: Record<string, unknown> | undefined): SiwxDeclaration | undefined {
  const found = extensions?.[SIWX_EXTENSION] as Partial<SiwxDeclaration> | undefined;
  const info = found?.info;
  if (!info || typeof info.domain !== 'string' || typeof info.uri !== 'string' || typeof info.nonce !== 'string') return undefined;
  if (typeof info.issuedAt !== 'string' || !Array.isArray(found.supportedChains)) return undefined;
  return found as SiwxDeclaration;
}

const TEXT_FIELDS = ['domain', 'uri', 'version', 'nonce', 'issuedAt', 'chainId', 'signature'] as const;
const OPTIONAL_TEXT = ['expirationTime', 'notBefore', 'statement', 'requestId'] as const;

/**
 * The `SIGN-IN-WITH-X` header's payload, its shape checked (not its signature).
 *
 * @example
 * const signIn = parseSiwxHeader(request.headers.get(SIWX_HEADER)!); // signIn.address, signIn.nonce, …
 *
 * @throws X402Error `malformed_payment` naming what is wrong
 */
export function parseSiwxHeader(header: string): SiwxPayload {
  const value = decodeBase64Json(header, 'malformed_payment', 'SIGN-IN-WITH-X header') as Record<string, unknown> | null;
  const bad = (what: string) => new X402Error('malformed_payment', `Malformed SIGN-IN-WITH-X header: ${what}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('not an object');
  for (const field of TEXT_FIELDS) if (typeof value[field] !== 'string' || value[field] === '') throw bad(`${field} is missing`);
  for (const field of OPTIONAL_TEXT)
    if (value[field] !== undefined && typeof value[field] !== 'string') throw bad(`${field} is not a string`);
  if (typeof value.address !== 'string' || !ADDRESS_PATTERN.test(value.address)) throw bad('address is not an address');
  if (value.type !== undefined && value.type !== 'eip191') throw bad('only eip191 signatures are taken');
  if (!/^0x[0-9a-fA-F]+$/.test(value.signature as string)) throw bad('signature is not hex');
  if (value.resources !== undefined && !(Array.isArray(value.resources) && value.resources.every((r) => typeof r === 'string')))
    throw bad('resources is not a list of URIs');
  return value as unknown as SiwxPayload;
}

/**
 * Whether the payload's signature is its `address`'s (an EOA) over the message its fields make.
 *
 * @example
 * if (!(await verifySiwxSignature(parseSiwxHeader(header)))) return new Response('bad sign-in', { status: 402 });
 */
export async function verifySiwxSignature(payload: SiwxPayload): Promise<boolean> {
  try {
    const message = siwxMessage(payload, payload.address, payload.chainId);
    return await verifyMessage({ address: payload.address, message, signature: payload.signature });
  } catch {
    return false;
  }
}
