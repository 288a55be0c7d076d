/**
 * Client side of the marketplace's 402 JSON body: turn `{ accepts: { scheme, price, network,
 * payTo, maxTimeoutSeconds, ... }, description }` into payable v2 requirements, for servers that
 * send the documented body without a PAYMENT-REQUIRED header.
 */
import { getAddress } from 'viem';
import { X402Error } from './errors';
import { getKnownNetwork, normalizeNetwork } from './networks';
import { sameAddress } from './patterns';
import { parsePrice } from './price';
import { Checkers, checkShape, type PaymentRequirements } from './schemas';

interface BodyShape {
  accepts: {
    scheme: string;
    price: string;
    network: string;
    payTo: string;
    maxTimeoutSeconds: number;
    amount?: string;
    asset?: string;
    extra?: Record<string, unknown> | null;
  };
  description: string;
  error?: string | null;
}

/**
 * Reads the marketplace's 402 body into v2 requirements. `amount`, `asset` and `extra` are
 * taken from the body when present, otherwise derived from `price` and the network's built-in
 * USDC; when the asset is that USDC, `price` and `amount` must agree.
 *
 * @throws X402Error("malformed_payment_required" | "unsupported_scheme" | "invalid_network")
 *
 * @example
 * const answer = await fetch('https://skills.example/echo', { method: 'POST', body });
 * if (answer.status === 402 && !answer.headers.has('PAYMENT-REQUIRED')) {
 *   const requirements = requirementsFromBody(await answer.json()); // from { accepts: { price: '$0.001', ... } }
 *   const payload = await signAuthorization(account, requirements);
 * }
 */
export function requirementsFromBody(body: unknown): PaymentRequirements {
  const { accepts } = checkShape<BodyShape>(Checkers.body, body, 'malformed_payment_required', '402 body');
  if (accepts.scheme !== 'exact')
    throw new X402Error('unsupported_scheme', `Unsupported scheme ${JSON.stringify(accepts.scheme.slice(0, 32))}`);
  const network = normalizeNetwork(accepts.network);
  const usdc = getKnownNetwork(network)?.usdc;
  const asset = accepts.asset ?? usdc?.address;
  if (asset === undefined) throw new X402Error('invalid_network', `No asset in the 402 body and no built-in USDC on ${network}`);
  const isUsdc = usdc !== undefined && sameAddress(asset, usdc.address);
  const extra = accepts.extra ?? (isUsdc ? { name: usdc.name, version: usdc.version } : undefined);
  if (extra === undefined) throw new X402Error('malformed_payment_required', '402 body names an asset without its EIP-712 domain (extra)');

  let amount: string;
  if (isUsdc) {
    let priced: bigint;
    try {
      priced = parsePrice(accepts.price, usdc.decimals);
    } catch (cause) {
      throw new X402Error('malformed_payment_required', `402 body has an invalid price ${JSON.stringify(accepts.price)}`, { cause });
    }
    if (accepts.amount !== undefined && BigInt(accepts.amount) !== priced) {
      throw new X402Error('malformed_payment_required', `402 body price ${accepts.price} disagrees with amount ${accepts.amount}`);
    }
    amount = priced.toString();
  } else if (accepts.amount !== undefined) {
    amount = accepts.amount;
  } else {
    throw new X402Error('malformed_payment_required', '402 body names an asset of unknown decimals without an amount');
  }
  return {
    scheme: 'exact',
    network,
    amount,
    asset: getAddress(asset.toLowerCase()),
    payTo: getAddress(accepts.payTo.toLowerCase()),
    maxTimeoutSeconds: accepts.maxTimeoutSeconds,
    extra,
  };
}
