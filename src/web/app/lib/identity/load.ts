/**
 * Loads the identity provider's SDK wrapper (./privy.ts) on demand. It is bundled apart, as the
 * page /web/identity-provider (the compiled binary bundles each HTML page whole, without chunk
 * splitting): its scripts are imported here and hand the wrapper over through a global. Only the
 * sign-in page calls this, and only when the registry offers provider login.
 */
import type * as Sdk from './privy';

export type ProviderSdk = typeof Sdk;

export const PROVIDER_SDK_GLOBAL = '__marketIdentityProvider';
/** Where the registry serves that bundle (src/web/server.ts). */
export const PROVIDER_SDK_PAGE = '/web/identity-provider';

let loading: Promise<ProviderSdk> | undefined;

export function loadProviderSdk(): Promise<ProviderSdk> {
  loading ??= (async () => {
    const res = await fetch(PROVIDER_SDK_PAGE, { credentials: 'same-origin' });
    if (!res.ok) throw new Error(`The sign-in bundle could not be loaded (${res.status}).`);
    const html = await res.text();
    for (const [, src] of html.matchAll(/<script\b[^>]*\bsrc="(\/[^"]+)"/g)) await import(src!);
    const sdk = (globalThis as { [PROVIDER_SDK_GLOBAL]?: ProviderSdk })[PROVIDER_SDK_GLOBAL];
    if (!sdk) throw new Error('The sign-in bundle did not load.');
    return sdk;
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
