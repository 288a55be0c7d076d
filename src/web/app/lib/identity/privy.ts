/**
 * The identity provider's own browser SDK (Privy), in a chunk of its own: the sign-in page loads
 * it only when this registry offers provider login, so no other page pays for it.
 *
 * The SDK keeps the provider's session in this tab's sessionStorage (the OAuth round trip needs
 * its PKCE verifier and state to survive the redirect), never in cookies (our registry would see
 * them). Once its token has been exchanged for our session, the provider session is logged out
 * and its tokens are gone from the page.
 */
import Privy, { PrivyApiError, PrivyClientError, type Storage } from '@privy-io/js-sdk-core';

/** The social logins the page offers when the provider's app has them enabled. */
export const SOCIAL = [
  { id: 'google', name: 'Google', flag: 'google_oauth' },
  { id: 'twitter', name: 'X (Twitter)', flag: 'twitter_oauth' },
  { id: 'discord', name: 'Discord', flag: 'discord_oauth' },
  { id: 'github', name: 'GitHub', flag: 'github_oauth' },
] as const;

export type SocialId = (typeof SOCIAL)[number]['id'];

/** What the provider's app allows, from its app settings. */
export interface ProviderMethods {
  email: boolean;
  social: { id: SocialId; name: string }[];
}

/** `Storage` over sessionStorage: this tab only, gone when it closes. */
const tabStorage: Storage = {
  get: (key) => {
    const value = sessionStorage.getItem(key);
    return value === null ? undefined : JSON.parse(value);
  },
  put: (key, value) => (value === undefined ? sessionStorage.removeItem(key) : sessionStorage.setItem(key, JSON.stringify(value))),
  del: (key) => sessionStorage.removeItem(key),
  getKeys: () => Object.keys(sessionStorage),
};

export class ProviderClient {
  private readonly privy: Privy;

  constructor(appId: string) {
    this.privy = new Privy({ appId, storage: tabStorage, sessions: { cookieWriteBehavior: 'never' } });
  }

  /** Loads the provider app's settings (its first request); tells which login methods it allows. */
  async methods(): Promise<ProviderMethods> {
    await this.privy.initialize();
    const config = this.privy.app.getConfig() as unknown as Record<string, unknown> | undefined;
    return {
      email: config?.email_auth === true,
      social: SOCIAL.filter((s) => config?.[s.flag] === true).map(({ id, name }) => ({ id, name })),
    };
  }

  /** The provider emails a one-time code. */
  async sendEmailCode(email: string): Promise<void> {
    await this.privy.auth.email.sendCode(email);
  }

  /** Logs in with the emailed code; answers the token to exchange at our registry. */
  async loginWithEmailCode(email: string, code: string): Promise<string> {
    await this.privy.auth.email.loginWithCode(email, code);
    return this.token();
  }

  /** The provider's address to send the browser to; it comes back to `returnTo` with a code. */
  async socialLoginUrl(provider: SocialId, returnTo: string): Promise<string> {
    const { url } = await this.privy.auth.oauth.generateURL(provider, returnTo);
    return url;
  }

  /** Completes the social login with what the provider appended to our address. */
  async loginWithSocialCode(code: string, state: string, provider: SocialId): Promise<string> {
    await this.privy.auth.oauth.loginWithCode(code, state, provider);
    return this.token();
  }

  /** Ends the provider's session (ours is in the registry's cookies by now) and drops its tokens. */
  async logout(): Promise<void> {
    await this.privy.auth.logout();
  }

  /**
   * The identity token when the app issues them (it carries the linked wallets the registry signs
   * the account in with), else the access token (enough for an account linked before).
   */
  private async token(): Promise<string> {
    const token = (await this.privy.getIdentityToken()) ?? (await this.privy.getAccessToken());
    if (!token) throw new Error('The sign-in service did not return a token. Try again.');
    return token;
  }
}

/** The provider's words for a failure, in plain language where we know the case. */
export function providerErrorMessage(error: unknown): string {
  if (error instanceof PrivyApiError) {
    if (error.code === 'invalid_credentials') return 'That code is not right, or it has expired. Check the email and try again.';
    if (error.status === 429) return 'Too many attempts. Wait a minute, then try again.';
    return error.error || `The sign-in service answered ${error.status}.`;
  }
  if (error instanceof PrivyClientError) {
    if (error.code === 'pkce_state_code_mismatch') return 'This sign-in link does not belong to this browser tab. Start again.';
    return error.error;
  }
  if (error instanceof TypeError) return 'The sign-in service could not be reached. Check your connection and try again.';
  return error instanceof Error ? error.message : String(error);
}
