/**
 * The checks of an exact-EVM payment, cheapest first: the terms (pure), the token's EIP-712
 * domain (one cached read), the signature (ECDSA recovery, ERC-1271 for contract wallets); the
 * chain state (a simulated transfer: nonce unused, balance, on-chain signature and window) is
 * checked by the service inside the payer's lock.
 */
import type { Hex } from 'viem';
import {
  X402Error,
  authorizationTypedData,
  paymentMatchesRequirements,
  recoverAuthorizationSigner,
  sameAddress,
  type Caip2Network,
} from 'skill-market/x402';
import type { ChainReader, SignerKind } from './chain';
import { REASONS } from './reasons';
import type { PaymentRequest } from './request';
import type { Rejection } from '../../chain';

/** An authorization must stay valid this long after verify, as the reference requires. */
const VALID_BEFORE_MARGIN_SECONDS = 6;

/** secp256k1 n / 2: FiatToken (and our token) reject signatures with a larger s. */
const HALF_CURVE_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

export interface TermsContext {
  /** The network this facilitator settles on. */
  network: Caip2Network;
  /** Accepted token addresses, lowercase. */
  assets: ReadonlySet<string>;
  /** Unix seconds. */
  now: number;
}

const reject = (reason: string, message: string): Rejection => ({ reason, message });

/**
 * Checks that need no I/O: network, asset, EIP-712 domain present, recipient, time window and
 * exact amount. v1 payloads carry no `accepted`, so these are what binds them to the terms.
 */
export function checkTerms(request: PaymentRequest, ctx: TermsContext): Rejection | undefined {
  const { payment, requirements: r } = request;
  const a = payment.authorization;
  if (payment.network !== r.network) {
    return reject(REASONS.networkMismatch, `The payment is for ${payment.network}, the requirements for ${r.network}`);
  }
  if (r.network !== ctx.network) return reject(REASONS.networkMismatch, `This facilitator settles on ${ctx.network}, not ${r.network}`);
  // The codec's one rule, the same the skill server applies: a payload the seller would refuse
  // must not be settled either (e.g. an `accepted` with another maxTimeoutSeconds or extra).
  if (!paymentMatchesRequirements(payment, r)) {
    return reject(REASONS.acceptedMismatch, 'paymentPayload.accepted does not match paymentRequirements');
  }
  if (!ctx.assets.has(r.asset.toLowerCase())) return reject(REASONS.assetNotAllowed, `Asset ${r.asset} is not settled here`);
  if (typeof r.extra?.name !== 'string' || r.extra.name === '' || typeof r.extra?.version !== 'string' || r.extra.version === '') {
    return reject(REASONS.missingEip712Domain, 'paymentRequirements.extra needs the token name and version');
  }
  if (!sameAddress(a.to, r.payTo)) return reject(REASONS.recipientMismatch, `The authorization pays ${a.to}, not ${r.payTo}`);
  if (BigInt(a.validBefore) < BigInt(ctx.now + VALID_BEFORE_MARGIN_SECONDS)) {
    return reject(REASONS.validBefore, `The authorization expires at ${a.validBefore} (now ${ctx.now})`);
  }
  if (BigInt(a.validAfter) > BigInt(ctx.now)) {
    return reject(REASONS.validAfter, `The authorization is valid only after ${a.validAfter} (now ${ctx.now})`);
  }
  if (BigInt(a.value) !== BigInt(r.amount))
    return reject(REASONS.valueMismatch, `The authorization moves ${a.value}, the price is ${r.amount}`);
  return undefined;
}

/** The requirements' domain (extra.name/version) against the token's name()/version() on chain. */
async function checkDomain(request: PaymentRequest, chain: ChainReader): Promise<Rejection | undefined> {
  const r = request.requirements;
  const domain = await chain.tokenDomain(r.asset);
  if (!domain) return reject(REASONS.assetNotDeployed, `No contract at ${r.asset}`);
  if (domain.name !== r.extra?.name) return reject(REASONS.tokenNameMismatch, `The token's EIP-712 name is "${domain.name}"`);
  if (domain.version !== undefined && domain.version !== r.extra?.version) {
    return reject(REASONS.tokenVersionMismatch, `The token's EIP-712 version is "${domain.version}"`);
  }
  return undefined;
}

/**
 * Who signed: an ECDSA signature recovering to `from` (low-s only, as the token demands), or,
 * when `from` is a contract, its ERC-1271 `isValidSignature`. Runs once per payment.
 */
async function checkSignature(request: PaymentRequest, chain: ChainReader): Promise<{ kind: SignerKind } | Rejection> {
  const { payment, requirements, payer } = request;
  if (/^0x[0-9a-fA-F]{130}$/.test(payment.signature)) {
    const signer = await recoverAuthorizationSigner(payment, requirements).catch((error: unknown) => {
      if (error instanceof X402Error && error.code === 'invalid_signature') return undefined;
      throw error;
    });
    if (signer !== undefined && sameAddress(signer, payer)) {
      if (isHighS(payment.signature)) return reject(REASONS.invalidSignature, 'Non-canonical (high-s) signature: the token refuses it');
      return { kind: 'ecdsa' };
    }
  }
  if (await chain.hasCode(payer)) {
    const typedData = authorizationTypedData(payment.authorization, requirements);
    if (await chain.verifyContractSignature(payer, typedData, payment.signature)) return { kind: 'erc1271' };
  }
  return reject(REASONS.invalidSignature, 'The signature is not the payer’s');
}

function isHighS(signature: Hex): boolean {
  return BigInt(`0x${signature.slice(66, 130)}`) > HALF_CURVE_ORDER;
}

/**
 * Everything after the terms that the payer's standing cannot change: the domain and the
 * signature. The chain state (a simulated transfer) is read in the payer's lock (service.ts).
 */
export async function checkAuthorization(request: PaymentRequest, chain: ChainReader): Promise<{ kind: SignerKind } | Rejection> {
  const domain = await checkDomain(request, chain);
  if (domain) return domain;
  return checkSignature(request, chain);
}
