import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { loadRegistryConfig, type RegistryConfig } from '../../src/config';

export const PROVIDER_APP_ID = 'test-app-id';
/** The registry's PUBLIC_URL in these tests. */
export const TEST_PUBLIC_URL = 'https://registry.test';
/** What a browser adds to a write from the registry's own pages: cookie-authenticated writes need it. */
export const sameOrigin: Record<string, string> = { origin: TEST_PUBLIC_URL };

/** An ES256 key pair standing in for the identity provider's signing key. */
export async function providerKeys(): Promise<{ privateKey: CryptoKey; publicKeyPem: string }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicKeyPem: await exportSPKI(publicKey) };
}

/** A provider access token as Privy issues them, with overridable claims and header. */
export async function providerToken(
  privateKey: CryptoKey,
  options: { sub?: string; wallet?: string; iss?: string; aud?: string; expiresIn?: number; now?: Date } = {},
): Promise<string> {
  const iat = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const claims: Record<string, unknown> = { sid: 'provider-session' };
  if (options.wallet) claims.linked_accounts = JSON.stringify([{ type: 'wallet', address: options.wallet, chain_type: 'ethereum' }]);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setSubject(options.sub ?? `did:privy:${crypto.randomUUID()}`)
    .setIssuer(options.iss ?? 'privy.io')
    .setAudience(options.aud ?? PROVIDER_APP_ID)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.expiresIn ?? 3600))
    .sign(privateKey);
}

/** Registry configuration for auth tests: provider login on, a fixed JWT secret, no rate limits. */
export function authTestConfig(publicKeyPem: string, overrides: Partial<RegistryConfig> = {}): RegistryConfig {
  return loadRegistryConfig(
    {
      NODE_ENV: 'test',
      PUBLIC_URL: TEST_PUBLIC_URL,
      AUTH_JWT_SECRET: 'test-secret-that-is-at-least-32-chars!',
      PRIVY_APP_ID: PROVIDER_APP_ID,
      PRIVY_VERIFICATION_KEY: publicKeyPem,
      RATE_LIMIT_AUTH: 'off',
      RATE_LIMIT_WRITE: 'off',
      RATE_LIMIT_READ: 'off',
      // Tests never reach a public chain: a failed ECDSA check's ERC-1271 fallback meets a
      // refused loopback port unless a test points the RPC at its own anvil.
      MARKET_RPC_URL: 'http://127.0.0.1:9',
      MARKET_RPC_TIMEOUT_MS: '500',
    },
    process.cwd(),
    overrides,
  );
}

export function newWallet(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

/** Reads Set-Cookie headers into {name: {value, attributes}}. */
export function parseSetCookies(res: Response): Record<string, { value: string; attributes: Record<string, string | true> }> {
  const out: Record<string, { value: string; attributes: Record<string, string | true> }> = {};
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(';').map((s) => s.trim());
    const eq = pair!.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const a of attrs) {
      const i = a.indexOf('=');
      attributes[(i < 0 ? a : a.slice(0, i)).toLowerCase()] = i < 0 ? true : a.slice(i + 1);
    }
    out[pair!.slice(0, eq)] = { value: decodeURIComponent(pair!.slice(eq + 1)), attributes };
  }
  return out;
}

export const jsonPost = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Signs `wallet` in through POST /auth/challenge and /auth/verify; returns the session result. */
export async function walletSignIn(
  request: (path: string, init?: RequestInit) => Promise<Response>,
  wallet: PrivateKeyAccount = newWallet(),
): Promise<{
  token: string;
  refreshToken: string;
  creator: { id: string; walletAddress: string };
  wallet: PrivateKeyAccount;
  response: Response;
}> {
  const challenge = await request('/auth/challenge', jsonPost({ address: wallet.address }));
  const { message } = (await challenge.json()) as { message: string };
  const response = await request('/auth/verify', jsonPost({ message, signature: await wallet.signMessage({ message }) }));
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  const body = (await response.clone().json()) as { token: string; refreshToken: string; creator: { id: string; walletAddress: string } };
  return { ...body, wallet, response };
}

/** Creates an API key with a signed-in session's token. */
export async function createKey(
  request: (path: string, init?: RequestInit) => Promise<Response>,
  token: string,
  type: 'creator' | 'consumer' = 'creator',
  name = `${type} key`,
): Promise<{ id: string; key: string; keyPrefix: string }> {
  const res = await request('/auth/api-keys', jsonPost({ name, type }, bearer(token)));
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; key: string; keyPrefix: string };
}
