import { signal } from '@preact/signals';
import { api, asApiError, type ApiError } from './api';
import type { PageConfig } from './types';

/**
 * The registry's page settings (`GET /web/config`). Pages render before they arrive (the
 * marketplace needs none of them), so each use reads the signal and copes with undefined, or
 * awaits `loadPageConfig()` when it cannot go on without them (a payment).
 */
export const pageConfig = signal<PageConfig | undefined>(undefined);
export const pageConfigError = signal<ApiError | undefined>(undefined);

let loading: Promise<PageConfig> | undefined;

export function loadPageConfig(): Promise<PageConfig> {
  loading ??= api.get<PageConfig>('/web/config').then(
    (value) => {
      pageConfigError.value = undefined;
      pageConfig.value = value;
      return value;
    },
    (error) => {
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
