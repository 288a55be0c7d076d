/**
 * The identity provider's server (Privy), simulated at the network edge: the browser context's
 * requests to the provider's HTTPS API (and to the social provider's consent page) are answered
 * here as the provider answers them, with ES256 tokens signed by a test key that the registry
 * under test trusts (PRIVY_VERIFICATION_KEY). The provider's SDK in the page, the page itself and
 * the registry's token verification are the real ones; only the provider's servers are not.
 *
 * What is simulated follows the SDK's own routes: app settings, analytics events, the email
 * one-time code (init, authenticate), OAuth with PKCE (init, the consent redirect, authenticate)
 * and session logout. A wrong code is refused as the provider does (`invalid_credentials`); the
 * OAuth code is only accepted with the PKCE verifier whose challenge was sent at init.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { CryptoKey } from 'jose';
import type { BrowserContext, Route } from 'playwright-core';
import { providerToken } from '../auth';

export const PROVIDER_API = 'https://auth.privy.io';
const CONSENT = 'https://accounts.google.com/o/oauth2/v2/auth';
/** The account a social login signs in as (add it to `users` with a wallet). */
export const SOCIAL_EMAIL = 'social@example.com';

export interface SimulatedUser {
  /** The provider's user id (`did:privy:…`). */
  id: string;
  email: string;
  /** The wallet linked to the provider account, carried in the identity token; none for a bare email account. */
  wallet?: `0x${string}`;
}

export interface ProviderSimulation {
  /** Every request the page made to the provider, as "METHOD /path". */
  requests: string[];
  /** The one-time code last "emailed" to each address. */
  codes: Map<string, string>;
  /** Accounts by email; a login with an unknown email creates one without a wallet. */
  users: Map<string, SimulatedUser>;
  /** false: the provider does not issue identity tokens (an app setting), the access token alone comes back. */
  identityTokens: boolean;
  /** true: every request to the provider fails as when it cannot be reached. */
  unreachable: boolean;
  /** Refresh tokens whose session was logged out. */
  loggedOut: string[];
}

export interface ProviderOptions {
  appId: string;
  privateKey: CryptoKey;
  /** The provider app's login settings (defaults: email and Google on). */
  settings?: Record<string, unknown>;
}

export async function simulateProvider(context: BrowserContext, options: ProviderOptions): Promise<ProviderSimulation> {
  const sim: ProviderSimulation = {
    requests: [],
    codes: new Map(),
    users: new Map(),
    identityTokens: true,
    unreachable: false,
    loggedOut: [],
  };
  const oauth = new Map<string, { challenge: string; redirectTo: string; provider: string; code: string; email: string }>();

  const cors = (origin: string | undefined): Record<string, string> => ({
    'access-control-allow-origin': origin ?? '*',
    'access-control-allow-credentials': 'true',
    'access-control-allow-headers':
      'authorization, content-type, accept, privy-app-id, privy-client, privy-client-id, privy-ca-id, privy-retry-attempt',
    'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
    vary: 'origin',
  });

  const tokensFor = async (user: SimulatedUser) => {
    const accessToken = await providerToken(options.privateKey, { sub: user.id });
    const linked: Record<string, unknown>[] = [{ type: 'email', address: user.email, verified_at: 1 }];
    if (user.wallet)
      linked.push({ type: 'wallet', address: user.wallet, chain_type: 'ethereum', wallet_client_type: 'metamask', verified_at: 1 });
    return {
      user: { id: user.id, created_at: 1, linked_accounts: linked, mfa_methods: [], has_accepted_terms: true, is_guest: false },
      token: accessToken,
      privy_access_token: accessToken,
      refresh_token: `refresh-${randomUUID()}`,
      identity_token: sim.identityTokens ? await providerToken(options.privateKey, { sub: user.id, wallet: user.wallet }) : undefined,
      session_update_action: 'set',
      is_new_user: false,
    };
  };

  const userFor = (email: string): SimulatedUser => {
    let user = sim.users.get(email);
    if (!user) {
      user = { id: `did:privy:${randomUUID()}`, email };
      sim.users.set(email, user);
    }
    return user;
  };

  const handle = async (route: Route) => {
    const request = route.request();
    const url = new URL(request.url());
    const origin = (await request.headerValue('origin')) ?? undefined;
    sim.requests.push(`${request.method()} ${url.pathname}`);
    if (sim.unreachable) return route.abort('internetdisconnected');
    const answer = (status: number, body: unknown) =>
      route.fulfill({ status, headers: { ...cors(origin), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (request.method() === 'OPTIONS') return route.fulfill({ status: 204, headers: cors(origin) });
    if ((await request.headerValue('privy-app-id')) !== options.appId)
      return answer(400, { error: 'Invalid app ID', code: 'missing_or_invalid_privy_app_id' });
    const body = (request.postDataJSON() ?? {}) as Record<string, string>;
    const path = url.pathname;

    if (request.method() === 'GET' && path === `/api/v1/apps/${options.appId}`) {
      return answer(200, {
        id: options.appId,
        name: 'Skill Market (test app)',
        email_auth: true,
        sms_auth: false,
        google_oauth: true,
        twitter_oauth: false,
        discord_oauth: false,
        github_oauth: false,
        apple_oauth: false,
        passkey_auth: false,
        captcha_enabled: false,
        custom_api_url: null,
        allowed_domains: [],
        embedded_wallet_config: { create_on_login: 'off' },
        ...options.settings,
      });
    }
    if (path === '/api/v1/analytics_events') return answer(200, {});
    if (path === '/api/v1/passwordless/init') {
      const code = String(Math.floor(100_000 + Math.random() * 900_000));
      sim.codes.set(body.email!, code);
      return answer(200, { success: true });
    }
    if (path === '/api/v1/passwordless/authenticate') {
      if (!body.email || sim.codes.get(body.email) !== body.code)
        return answer(401, { error: 'Invalid email and code combination', code: 'invalid_credentials' });
      sim.codes.delete(body.email);
      return answer(200, await tokensFor(userFor(body.email)));
    }
    if (path === '/api/v1/oauth/init') {
      const code = randomUUID();
      oauth.set(body.state_code!, {
        challenge: body.code_challenge!,
        redirectTo: body.redirect_to!,
        provider: body.provider!,
        code,
        email: SOCIAL_EMAIL,
      });
      const consent = new URL(CONSENT);
      consent.searchParams.set('state', body.state_code!);
      return answer(200, { url: consent.toString() });
    }
    if (path === '/api/v1/oauth/authenticate') {
      const flow = oauth.get(body.state_code!);
      const verifier = createHash('sha256')
        .update(body.code_verifier ?? '')
        .digest('base64url');
      if (!flow || flow.code !== body.authorization_code || flow.challenge !== verifier) {
        return answer(401, { error: 'Invalid OAuth authorization code or verifier', code: 'invalid_credentials' });
      }
      oauth.delete(body.state_code!);
      return answer(200, await tokensFor(userFor(flow.email)));
    }
    if (path === '/api/v1/sessions/logout') {
      sim.loggedOut.push(body.refresh_token!);
      return answer(200, {});
    }
    return answer(404, { error: `Not simulated: ${request.method()} ${path}` });
  };

  await context.route(`${PROVIDER_API}/**`, handle);
  // The social provider's consent screen: the user agrees, and the provider sends the browser back
  // to the page with its code and state, as Privy's OAuth callback does.
  await context.route(`${CONSENT}**`, async (route) => {
    const state = new URL(route.request().url()).searchParams.get('state') ?? '';
    const flow = oauth.get(state);
    sim.requests.push(`GET ${new URL(CONSENT).host} (consent)`);
    if (!flow) return route.fulfill({ status: 400, body: 'unknown state' });
    const back = new URL(flow.redirectTo);
    back.searchParams.set('privy_oauth_code', flow.code);
    back.searchParams.set('privy_oauth_state', state);
    back.searchParams.set('privy_oauth_provider', flow.provider);
    return route.fulfill({ status: 302, headers: { location: back.toString() } });
  });
  return sim;
}
