/**
 * `tally`, a payment scheme made up for tests, as `@x402/core`'s own tests make up `cash`: shaped
 * like `batch-settlement` without the chain. The payer signs (EIP-712) a cumulative total per
 * (payer, payee, asset); each call raises it by the price. It plugs into all three sides through
 * their scheme interfaces alone (tally-client.ts, tally-server.ts, tally-facilitator.ts), so the
 * pipelines' own rules (retry, lost answer, hold, refusal, budgets) are tested in memory, with
 * real signatures and real HTTP, and no chain. This file is its wire: what all three sides share.
 */
import { keccak256, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import type { PaymentTypedData, Terms } from 'skill-market/client';
import { getKnownNetwork, type Caip2Network } from 'skill-market/x402';

export const TALLY_SCHEME = 'tally';
export const TALLY_NETWORK: Caip2Network = 'eip155:84532';
/** Base Sepolia's USDC: an asset the client pipeline accepts on that network without options. */
export const TALLY_ASSET = getKnownNetwork(TALLY_NETWORK)!.usdc.address;

/** The reasons tally's refusals give. */
export const TALLY_REASONS = {
  /** The payer's total is not the one held plus the price: a corrective 402 carries the held total. */
  mismatch: 'tally_mismatch',
  /** The total is above the payer's credit at the facilitator. */
  insufficientFunds: 'insufficient_funds',
  /** The signature is not the payer's, or the payment is not a tally payment. */
  invalid: 'invalid_tally_payment',
} as const;

/** The scheme's own payload (`paymentPayload.payload`). */
export interface TallyPayload {
  payer: Address;
  total: string;
  signature: Hex;
}

/** The x402 v2 PaymentPayload of a tally payment. */
export interface TallyPaymentPayload {
  x402Version: 2;
  accepted: Terms;
  payload: TallyPayload;
  resource?: unknown;
  extensions?: Record<string, unknown>;
}

export function tallyTypedData(payTo: Address, payer: Address, total: bigint): PaymentTypedData {
  return {
    domain: { name: 'Tally', version: '1', chainId: 84532, verifyingContract: payTo },
    types: {
      Tally: [
        { name: 'payer', type: 'address' },
        { name: 'total', type: 'uint256' },
      ],
    },
    primaryType: 'Tally',
    message: { payer, total },
  };
}

export const recoverTally = (typedData: PaymentTypedData, signature: Hex) =>
  recoverTypedDataAddress({ ...typedData, signature } as Parameters<typeof recoverTypedDataAddress>[0]);

/** Whether `signature` is `payer`'s over `total` to `payTo`. */
export async function signedBy(payTo: Address, payer: Address, total: bigint, signature: Hex): Promise<boolean> {
  try {
    const signer = await recoverTally(tallyTypedData(payTo, payer, total), signature);
    return signer.toLowerCase() === payer.toLowerCase();
  } catch {
    return false;
  }
}

/** What names one tally payment where a single-use key is asked for (the facilitator's `/settlements` nonce). */
export const tallyNonce = (signature: Hex): Hex => keccak256(signature);

/** The key of one payer's tally with one payee in one asset. */
export const tallyKey = (payer: string, payTo: string, asset: string) => `${payer}:${payTo}:${asset}`.toLowerCase();

/** The terms a tally server asks for. */
export function tallyTerms(payTo: Address, amount: bigint, extra: Record<string, unknown> = {}): Terms {
  return {
    scheme: TALLY_SCHEME,
    network: TALLY_NETWORK,
    amount: amount.toString(),
    asset: TALLY_ASSET,
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: 'Tally', version: '1', ...extra },
  };
}

/**
 * The tally payment in an x402 PaymentPayload, checked for shape and against `offer` (scheme,
 * network, asset, payee, amount); a sentence saying what is wrong otherwise.
 */
export function readTallyPayment(
  value: unknown,
  offer: { scheme: string; network: string; asset: string; payTo: string; amount: string },
): TallyPaymentPayload | string {
  const payment = value as Partial<TallyPaymentPayload> | null;
  const payload = payment?.payload as Partial<TallyPayload> | undefined;
  const accepted = payment?.accepted as Partial<Terms> | undefined;
  if (
    typeof payload?.payer !== 'string' ||
    typeof payload.signature !== 'string' ||
    typeof payload.total !== 'string' ||
    !/^[0-9]{1,78}$/.test(payload.total)
  )
    return 'a tally payment carries payer, total and signature';
  const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
  if (
    !accepted ||
    !same(accepted.scheme, offer.scheme) ||
    !same(accepted.network, offer.network) ||
    !same(accepted.asset, offer.asset) ||
    !same(accepted.payTo, offer.payTo) ||
    accepted.amount !== offer.amount
  )
    return 'the payment does not accept these terms';
  return payment as TallyPaymentPayload;
}
