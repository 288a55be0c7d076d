/**
 * The `upto` scheme on EVM: the payer signs a Permit2 `PermitWitnessTransferFrom` of at most
 * `permitted.amount`, whose spender is the x402 upto proxy and whose witness names the recipient,
 * the facilitator allowed to settle it and the time it becomes valid. The facilitator later settles
 * the amount the resource server charged, at most that maximum, once.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { bytesToBigInt, getAddress } from 'viem';
import { X402Error } from './errors';
import { ADDRESS_PATTERN, HEX_BYTES_PATTERN, UINT_PATTERN, type Address, type Hex } from './patterns';
import { checkShape } from './schemas';

/**
 * The scheme's wire id.
 *
 * @example accepts.filter((a) => a.scheme === UPTO_SCHEME) // the 402's usage-based offers
 */
export const UPTO_SCHEME = 'upto';
/**
 * The canonical Permit2 contract (the same address on every chain), which the payer approves once on the token.
 *
 * @example await wallet.writeContract({ address: usdc, abi: erc20Abi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
 */
export const PERMIT2_ADDRESS = '0x000000000022D473030F116dDEE9F6B43aC78BA3';
/**
 * The x402 upto proxy: the spender of every upto authorization, which the facilitator calls to settle.
 *
 * @example authorization.spender === UPTO_PROXY_ADDRESS // an authorization the proxy can settle
 */
export const UPTO_PROXY_ADDRESS = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002';

/**
 * EIP-712 types of an upto authorization (Permit2's witness transfer with the upto witness); see {@link uptoTypedData}.
 *
 * @example UPTO_PERMIT_TYPES.Witness.map((f) => f.name) // ['to', 'facilitator', 'validAfter']
 */
export const UPTO_PERMIT_TYPES = {
  PermitWitnessTransferFrom: [
    { name: 'permitted', type: 'TokenPermissions' },
    { name: 'spender', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
    { name: 'witness', type: 'Witness' },
  ],
  TokenPermissions: [
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
  ],
  Witness: [
    { name: 'to', type: 'address' },
    { name: 'facilitator', type: 'address' },
    { name: 'validAfter', type: 'uint256' },
  ],
} as const;

/**
 * Permit2's EIP-712 domain on chain `chainId` (no version field).
 *
 * @example permit2Domain(8453) // { name: 'Permit2', chainId: 8453, verifyingContract: PERMIT2_ADDRESS }
 */
export function permit2Domain(chainId: number): { name: 'Permit2'; chainId: number; verifyingContract: Address } {
  return { name: 'Permit2', chainId, verifyingContract: PERMIT2_ADDRESS };
}

/** `payload.permit2Authorization` of an upto payment; numbers as decimal strings. */
export interface UptoAuthorization {
  from: Address;
  permitted: { token: Address; amount: string };
  spender: Address;
  /** uint256: a decimal string (the reference client) or 0x-hex. */
  nonce: string;
  deadline: string;
  witness: { to: Address; facilitator: Address; validAfter: string };
}

/** The `payload` of an upto payment. */
export interface UptoPayload {
  signature: Hex;
  permit2Authorization: UptoAuthorization;
}

let checker: TypeCheck<TSchema> | undefined;
/** Compiled at first use, so a bundle that never parses an upto payload (a payer's page) leaves it out. */
function uptoPayloadChecker(): TypeCheck<TSchema> {
  const address = () => Type.String({ pattern: ADDRESS_PATTERN.source });
  const uint = () => Type.String({ pattern: UINT_PATTERN.source });
  checker ??= TypeCompiler.Compile(
    Type.Object({
      signature: Type.String({ pattern: HEX_BYTES_PATTERN.source, maxLength: 8192 }),
      permit2Authorization: Type.Object({
        from: address(),
        permitted: Type.Object({ token: address(), amount: uint() }),
        spender: address(),
        nonce: Type.String({ pattern: '^(?:0|[1-9][0-9]{0,77}|0x[0-9a-fA-F]{1,64})$' }),
        deadline: uint(),
        witness: Type.Object({ to: address(), facilitator: address(), validAfter: uint() }),
      }),
    }),
  );
  return checker;
}
const UINT256_LIMIT = 2n ** 256n;

/**
 * The upto payload of a payment, checked field by field (every number a uint256).
 *
 * @throws X402Error("malformed_payment") naming the first offending field
 * @example const { permit2Authorization: a } = parseUptoPayload(payment.payload); BigInt(a.permitted.amount) // the maximum
 */
export function parseUptoPayload(payload: unknown): UptoPayload {
  const parsed = checkShape<UptoPayload>(uptoPayloadChecker(), payload, 'malformed_payment', 'upto payload');
  const a = parsed.permit2Authorization;
  for (const [field, value] of [
    ['permitted.amount', a.permitted.amount],
    ['deadline', a.deadline],
    ['witness.validAfter', a.witness.validAfter],
  ] as const) {
    if (BigInt(value) >= UINT256_LIMIT) throw new X402Error('malformed_payment', `permit2Authorization.${field} exceeds uint256`);
  }
  return parsed;
}

/**
 * The typed data the payer signs for `authorization` on chain `chainId`, amounts as bigint.
 *
 * @example const signature = await account.signTypedData(uptoTypedData(authorization, 8453));
 */
export function uptoTypedData(authorization: UptoAuthorization, chainId: number) {
  const a = authorization;
  return {
    domain: permit2Domain(chainId),
    types: UPTO_PERMIT_TYPES,
    primaryType: 'PermitWitnessTransferFrom' as const,
    message: {
      permitted: { token: getAddress(a.permitted.token), amount: BigInt(a.permitted.amount) },
      spender: getAddress(a.spender),
      nonce: BigInt(a.nonce),
      deadline: BigInt(a.deadline),
      witness: { to: getAddress(a.witness.to), facilitator: getAddress(a.witness.facilitator), validAfter: BigInt(a.witness.validAfter) },
    },
  };
}

/**
 * A fresh random Permit2 nonce (256 bits) as a decimal string, as the reference client writes it.
 *
 * @example const authorization = { ...terms, nonce: randomPermit2Nonce() };
 */
export function randomPermit2Nonce(): string {
  return bytesToBigInt(crypto.getRandomValues(new Uint8Array(32))).toString();
}
