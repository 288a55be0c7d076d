/**
 * The `exact` scheme on EVM: EIP-3009 TransferWithAuthorization, signed as EIP-712 typed data.
 * Time is injected (`now`, unix seconds) everywhere it matters; Date.now() is only a default.
 */
import { bytesToHex, getAddress, parseSignature, recoverTypedDataAddress } from 'viem';
import { parsePaymentRequirements } from './codec';
import { Checkers, checkShape } from './schemas';
import { X402Error } from './errors';
import { parseCaip2 } from './networks';
import { ADDRESS_PATTERN, BYTES32_PATTERN, isUint256String, type Address, type Hex } from './patterns';
import type { Authorization, PaymentPayloadV2, PaymentRequirements, ResourceInfo } from './schemas';

/**
 * How far back `validAfter` is set, as the reference client does (clock-skew tolerance).
 *
 * @example
 * const now = Math.floor(Date.now() / 1000);
 * createAuthorization(requirements, payer, { now }).validAfter; // String(now - VALID_AFTER_SKEW_SECONDS)
 */
export const VALID_AFTER_SKEW_SECONDS = 600;

/**
 * EIP-712 types of EIP-3009 `TransferWithAuthorization`.
 *
 * @example
 * import { hashTypedData } from 'viem';
 *
 * const { message } = authorizationTypedData(authorization, requirements); // amounts as bigint
 * const digest = hashTypedData({
 *   domain: authorizationDomain(requirements),
 *   types: TRANSFER_WITH_AUTHORIZATION_TYPES,
 *   primaryType: 'TransferWithAuthorization',
 *   message,
 * }); // what the payer signs
 * TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization.map((f) => f.name); // ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce']
 */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** EIP-712 domain of an EIP-3009 token. */
export interface AuthorizationDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

/** Complete typed data for signing or verifying one authorization. */
export interface AuthorizationTypedData {
  domain: AuthorizationDomain;
  types: typeof TRANSFER_WITH_AUTHORIZATION_TYPES;
  primaryType: 'TransferWithAuthorization';
  message: { from: Address; to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex };
}

/** Anything that signs EIP-712 typed data, e.g. a viem `LocalAccount` from `privateKeyToAccount`. */
export interface TypedDataSigner {
  address: Address;
  /** Signs the typed data with the key of `address`; the 65-byte signature as 0x-hex. */
  signTypedData(typedData: AuthorizationTypedData): Promise<Hex>;
}

/** Clock and randomness overrides. */
export interface AuthorizationOptions {
  /** Current time in unix seconds; default `Math.floor(Date.now() / 1000)`. */
  now?: number;
  /** bytes32 nonce; default 32 bytes from `crypto.getRandomValues`. */
  nonce?: Hex;
}

const checksum = (address: string): Address => getAddress(address.toLowerCase());

/**
 * 32 random bytes as 0x-hex, from the Web Crypto API.
 *
 * @example
 * createAuthorization(requirements, payer, { nonce: randomNonce() }); // '0x' + 64 hex
 */
export function randomNonce(): Hex {
  return bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * The EIP-712 domain for requirements: `{ name: extra.name, version: extra.version, chainId,
 * verifyingContract: asset }`.
 *
 * @throws X402Error("invalid_requirements") when `extra.name` / `extra.version` are missing
 *   (the facilitator's `invalid_exact_evm_missing_eip712_domain`)
 *
 * @example
 * authorizationDomain(terms.requirements); // { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: '0x8335…2913' }
 */
export function authorizationDomain(requirements: PaymentRequirements): AuthorizationDomain {
  const name = requirements.extra?.name;
  const version = requirements.extra?.version;
  if (typeof name !== 'string' || name === '' || typeof version !== 'string' || version === '') {
    throw new X402Error('invalid_requirements', 'Missing EIP-712 domain: requirements.extra needs name and version');
  }
  return { name, version, chainId: parseCaip2(requirements.network), verifyingContract: checksum(requirements.asset) };
}

/**
 * Typed data of `authorization` under the domain of `requirements` (for sign, verify, hash).
 *
 * @example
 * const typedData = authorizationTypedData(payment.authorization, requirements);
 * const digest = hashTypedData(typedData); // viem; or account.signTypedData(typedData)
 */
export function authorizationTypedData(authorization: Authorization, requirements: PaymentRequirements): AuthorizationTypedData {
  checkShape<Authorization>(Checkers.authorization, authorization, 'malformed_payment', 'authorization');
  for (const field of ['value', 'validAfter', 'validBefore'] as const) {
    if (!isUint256String(authorization[field])) throw new X402Error('malformed_payment', `authorization.${field} exceeds uint256`);
  }
  return {
    domain: authorizationDomain(requirements),
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: checksum(authorization.from),
      to: checksum(authorization.to),
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  };
}

/**
 * A fresh authorization paying `requirements` from `from`: value = amount, to = payTo,
 * validAfter = now - 600 (floored at 0), validBefore = now + maxTimeoutSeconds, random nonce.
 *
 * @example
 * const authorization = createAuthorization(terms.requirements, account.address);
 * const signature = await account.signTypedData(authorizationTypedData(authorization, terms.requirements));
 */
export function createAuthorization(requirements: PaymentRequirements, from: string, options: AuthorizationOptions = {}): Authorization {
  const req = parsePaymentRequirements(requirements);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(now) || now < 0) throw new X402Error('invalid_requirements', `Invalid clock value ${now}`);
  const nonce = options.nonce ?? randomNonce();
  if (!BYTES32_PATTERN.test(nonce)) throw new X402Error('invalid_requirements', 'nonce must be 0x + 64 hex');
  if (typeof from !== 'string' || !ADDRESS_PATTERN.test(from)) throw new X402Error('invalid_requirements', 'from must be 0x + 40 hex');
  return {
    from: checksum(from),
    to: checksum(req.payTo),
    value: req.amount,
    validAfter: String(Math.max(0, now - VALID_AFTER_SKEW_SECONDS)),
    validBefore: String(now + req.maxTimeoutSeconds),
    nonce,
  };
}

/** Options of {@link signAuthorization}. */
export interface SignOptions extends AuthorizationOptions {
  /** Resource echoed in the payload (v2 `resource`), usually PaymentRequired.resource. */
  resource?: ResourceInfo;
  /** Extensions echoed in the payload. */
  extensions?: Record<string, unknown>;
}

/**
 * Signs an authorization for `requirements` and returns the complete v2 PaymentPayload, with
 * `accepted` set to `requirements` verbatim, ready for `encodePaymentPayload`.
 *
 * @example
 * const payload = await signAuthorization(privateKeyToAccount(key), terms.requirements, { resource });
 * headers.set("PAYMENT-SIGNATURE", encodePaymentPayload(payload));
 */
export async function signAuthorization(
  account: TypedDataSigner,
  requirements: PaymentRequirements,
  options: SignOptions = {},
): Promise<PaymentPayloadV2> {
  const authorization = createAuthorization(requirements, account.address, options);
  const signature = await account.signTypedData(authorizationTypedData(authorization, requirements));
  const payload: PaymentPayloadV2 = { x402Version: 2, accepted: requirements, payload: { signature, authorization } };
  if (options.resource !== undefined) payload.resource = options.resource;
  if (options.extensions !== undefined) payload.extensions = options.extensions;
  return payload;
}

/**
 * Recovers the ECDSA signer of an authorization (EOA wallets). Compare the result with
 * `authorization.from`; contract wallets (ERC-1271 / ERC-6492) need an on-chain check instead.
 *
 * @throws X402Error("invalid_signature") when the signature is not a recoverable 65-byte ECDSA signature;
 *   X402Error("invalid_requirements") when the requirements lack the EIP-712 domain
 *
 * @example
 * const payment = decodePaymentPayload(header);
 * const signer = await recoverAuthorizationSigner(payment, terms.requirements);
 * if (!sameAddress(signer, payment.authorization.from)) return reject('invalid_exact_evm_signature');
 */
export async function recoverAuthorizationSigner(
  payment: { authorization: Authorization; signature: Hex },
  requirements: PaymentRequirements,
): Promise<Address> {
  const typedData = authorizationTypedData(payment.authorization, requirements);
  if (!/^0x[0-9a-fA-F]{130}$/.test(payment.signature)) {
    throw new X402Error('invalid_signature', 'Not a 65-byte ECDSA signature (a contract wallet needs ERC-1271 verification)');
  }
  try {
    return await recoverTypedDataAddress({ ...typedData, signature: payment.signature });
  } catch (cause) {
    throw new X402Error('invalid_signature', 'No signer can be recovered from the signature', { cause });
  }
}

/**
 * True when the authorization was signed (ECDSA) by its own `from`. Never throws on bad signatures.
 *
 * @example
 * if (!(await isSignedByPayer(decodePaymentPayload(header), terms.requirements))) return reject('invalid_exact_evm_signature');
 */
export async function isSignedByPayer(
  payment: { authorization: Authorization; signature: Hex },
  requirements: PaymentRequirements,
): Promise<boolean> {
  try {
    const signer = await recoverAuthorizationSigner(payment, requirements);
    return signer.toLowerCase() === payment.authorization.from.toLowerCase();
  } catch (error) {
    if (error instanceof X402Error && error.code === 'invalid_signature') return false;
    throw error;
  }
}

/**
 * A 65-byte signature split for `transferWithAuthorization(..., v, r, s)`; v is 27 or 28.
 *
 * @example
 * const { v, r, s } = splitSignature(payment.signature);
 * // token.transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, v, r, s)
 */
export function splitSignature(signature: Hex): { v: 27 | 28; r: Hex; s: Hex; yParity: 0 | 1 } {
  if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(signature)) {
    throw new X402Error('invalid_signature', 'Expected a 65-byte signature (0x + 130 hex)');
  }
  try {
    const { r, s, yParity } = parseSignature(signature);
    if (yParity !== 0 && yParity !== 1) throw new Error(`yParity ${yParity}`);
    return { v: yParity === 0 ? 27 : 28, r, s, yParity };
  } catch (cause) {
    throw new X402Error('invalid_signature', 'Signature has an invalid recovery byte', { cause });
  }
}
