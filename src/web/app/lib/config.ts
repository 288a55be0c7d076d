import { signal } from '@preact/signals';
import { api } from './api';
import type { PageConfig } from './types';

/** The registry's page settings (`GET /web/config`), loaded once before the first render. */
export const pageConfig = signal<PageConfig | undefined>(undefined);

export async function loadPageConfig(): Promise<void> {
  pageConfig.value = await api.get<PageConfig>('/web/config');
}

/** The loaded settings; pages render only after loadPageConfig resolved. */
export function config(): PageConfig {
  const value = pageConfig.value;
  if (!value) throw new Error('page settings not loaded');
  return value;
}
