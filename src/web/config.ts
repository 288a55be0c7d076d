import type { RegistryConfig } from '../config';
import type { PageConfig } from './app/lib/config';

export type { PageConfig };

/** Names and block explorers of the networks we know; a local chain has no explorer, so hashes show unlinked. */
const NETWORKS: Readonly<Record<string, { name: string; explorer: { name: string; url: string } | null }>> = {
  'eip155:8453': { name: 'Base', explorer: { name: 'BaseScan', url: 'https://basescan.org' } },
  'eip155:84532': { name: 'Base Sepolia', explorer: { name: 'BaseScan', url: 'https://sepolia.basescan.org' } },
  'eip155:31337': { name: 'Local test chain', explorer: null },
};

/** What `GET /web/config` answers: read once at start from the registry's own configuration. */
export function pageConfig(config: RegistryConfig): PageConfig {
  const { network, usdcAddress, usdcDecimals } = config.chain;
  const chainId = Number(network.split(':')[1]);
  const known = NETWORKS[network];
  return {
    publicUrl: config.publicUrl.origin,
    network: { id: network, name: known?.name ?? `Chain ${chainId}`, chainId },
    asset: { address: usdcAddress, decimals: usdcDecimals },
    explorer: known?.explorer ?? null,
    privyAppId: config.auth.provider?.appId ?? null,
    devMode: config.devTools === true && config.mode !== 'production',
    listAfterFirstCheck: config.health.listAfterFirstCheck,
  };
}
