import { createPublicClient, getAddress, http, parseAbi, type Address } from 'viem';
import { KNOWN_NETWORKS, getKnownNetwork, type AssetInfo } from 'skill-market/x402';
import type { ChainConfig } from '../../../config/chain';
import { AppError } from '../../../http';
import type { Logger } from '../../../log';

/** The tokens skills are paid in, by network: what a skill server asks for by default. */
export interface PaymentAssets {
  /** Networks whose token is known: the registry's own and those with a built-in USDC. Skills on others are not offered. */
  readonly networks: readonly string[];
  /** The token of one of `networks`; throws UNAVAILABLE when the registry's token cannot be described (its chain is unreachable). */
  assetOf(network: string): Promise<AssetInfo>;
}

/** Reads a token's EIP-712 domain name and version. */
export type DomainReader = (token: Address) => Promise<{ name: string; version: string }>;

const domainAbi = parseAbi(['function name() view returns (string)', 'function version() view returns (string)']);

/** `name()` and `version()` of the token over the registry's RPC, bounded by its timeout. */
function chainDomainReader(chain: ChainConfig): DomainReader {
  const client = createPublicClient({ transport: http(chain.rpcUrl, { timeout: chain.rpcTimeoutMs, retryCount: 0 }) });
  return async (token) => {
    const [name, version] = await Promise.all([
      client.readContract({ address: token, abi: domainAbi, functionName: 'name' }),
      client.readContract({ address: token, abi: domainAbi, functionName: 'version' }),
    ]);
    return { name, version };
  };
}

/**
 * On the registry's network its configured token (MARKET_USDC_ADDRESS), elsewhere the network's
 * built-in USDC: the asset a skill server pays in unless told otherwise. The configured token's
 * EIP-712 domain is the built-in one when it is that network's USDC, else read from the chain
 * once (a failed read is tried again on the next request), as the facilitator checks it there.
 */
export function paymentAssets(chain: ChainConfig, logger: Logger, readDomain: DomainReader = chainDomainReader(chain)): PaymentAssets {
  const own = getKnownNetwork(chain.network)?.usdc;
  const token = getAddress(chain.usdcAddress);
  let configured: Promise<AssetInfo> | undefined = own && own.address === token ? Promise.resolve({ ...own }) : undefined;
  const describeToken = (): Promise<AssetInfo> => {
    configured ??= readDomain(token).then(
      ({ name, version }) => ({ address: token, name, version, decimals: chain.usdcDecimals }),
      (error: unknown) => {
        configured = undefined;
        logger.warn('cannot read the payment token’s EIP-712 domain; discovery answers 503 until it can', {
          network: chain.network,
          token,
          errorName: (error as Error)?.name,
        });
        throw new AppError('UNAVAILABLE', 'Payment terms unavailable: the payment token cannot be read from the chain');
      },
    );
    return configured;
  };
  return {
    networks: [...new Set([chain.network, ...KNOWN_NETWORKS.map((n) => n.network)])],
    async assetOf(network) {
      if (network === chain.network) return describeToken();
      const known = getKnownNetwork(network);
      if (!known) throw new AppError('INTERNAL', `No payment token known on ${network}`);
      return { ...known.usdc };
    },
  };
}
