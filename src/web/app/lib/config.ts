import { signal } from '@preact/signals';
import { asApiError, pageJson, type ApiError } from './api';

/** What `GET /web/config` answers (built by src/web/config.ts). */
export interface PageConfig {
  /** The registry's public origin, for copy-ready snippets (`--registry`, curl). */
  publicUrl: string;
  network: { id: string; name: string; chainId: number };
  /** The token payments are made in on this registry's network (USDC, or a test token locally). */
  asset: { address: string; decimals: number };
  /** Absent on a local chain: transaction hashes show unlinked. */
  explorer: { name: string; url: string } | null;
  /** Identity-provider (Privy) login is offered only when the registry verifies its tokens. */
  privyAppId: string | null;
  /** `market dev`: the page offers the dev-only demo wallet. Never on in production. */
  devMode: boolean;
  /** A new listing goes public once its server answered a health check (MARKET_LIST_AFTER_FIRST_CHECK). */
  listAfterFirstCheck: boolean;
}

/**
 * The registry's page settings (`GET /web/config`). Pages render before they arrive (the
 * marketplace needs none of them), so each use reads the signal and copes with undefined, or
 * awaits `loadPageConfig()` when it cannot go on without them (a payment).
 */
export const pageConfig = signal<PageConfig | undefined>(undefined);
export const pageConfigError = signal<ApiError | undefined>(undefined);

let loading: Promise<PageConfig> | undefined;

export function loadPageConfig(): Promise<PageConfig> {
  loading ??= pageJson<PageConfig>('/web/config').then(
    (value: PageConfig) => {
      pageConfigError.value = undefined;
      pageConfig.value = value;
      return value;
    },
    (error: unknown) => {
      loading = undefined;
      pageConfigError.value = asApiError(error);
      throw error;
    },
  );
  return loading;
}

/** The network's name when known, else its CAIP-2 id. */
export function networkName(network: string): string {
  const config = pageConfig.value;
  return config && config.network.id === network ? config.network.name : network;
}
