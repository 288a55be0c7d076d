/**
 * Signs EIP-3009 TransferWithAuthorization messages for the local token, independently of the
 * project's own x402 code, so tests can use it as a known-good peer.
 */
import { type Address, type Hex, type LocalAccount, bytesToHex, parseSignature } from 'viem';
import { transferWithAuthorizationTypes } from './abi';
import type { LocalChain } from './anvil';

export type Authorization = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

export type SignedAuthorization = {
  authorization: Authorization;
  /** 65-byte r‖s‖v signature, for the `bytes signature` overload and x402 payloads. */
  signature: Hex;
  v: number;
  r: Hex;
  s: Hex;
};

/** A random 32-byte authorization nonce. */
export function randomNonce(): Hex {
  return bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Signs a transfer authorization with `signer`. Defaults follow the x402 reference client:
 * `from` = signer (pass the smart wallet's address when its owner signs), `validAfter` = now − 600 s,
 * `validBefore` = now + 60 s (wall clock, which a fresh anvil follows), a random nonce.
 */
export async function signAuthorization(
  chain: Pick<LocalChain, 'domain'>,
  signer: LocalAccount,
  fields: Partial<Authorization> & Pick<Authorization, 'to' | 'value'>,
): Promise<SignedAuthorization> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization: Authorization = {
    from: fields.from ?? signer.address,
    to: fields.to,
    value: fields.value,
    validAfter: fields.validAfter ?? now - 600n,
    validBefore: fields.validBefore ?? now + 60n,
    nonce: fields.nonce ?? randomNonce(),
  };
  const signature = await signer.signTypedData({
    domain: chain.domain,
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  const { r, s, v } = parseSignature(signature);
  if (v === undefined) throw new Error('expected a legacy (v) signature from a local account');
  return { authorization, signature, v: Number(v), r, s };
}

/** Arguments for `transferWithAuthorization(…, v, r, s)`. */
export function vrsArgs({ authorization: a, v, r, s }: SignedAuthorization) {
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, v, r, s] as const;
}

/** Arguments for `transferWithAuthorization(…, bytes signature)`. */
export function bytesArgs({ authorization: a, signature }: SignedAuthorization) {
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature] as const;
}
