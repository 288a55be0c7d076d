/**
 * Email (one-time code) and social sign-in through the identity provider's own SDK, offered when
 * the registry verifies the provider's tokens (`privyAppId`). The SDK is a bundle of its own,
 * loaded here only. The provider's token is exchanged at `POST /auth/privy` for our HttpOnly
 * session cookies; then the provider's own session is ended.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, asApiError } from '../lib/api';
import { loadProviderSdk, type ProviderSdk as Sdk } from '../lib/identity/load';
import type { ProviderClient, ProviderMethods, SocialId } from '../lib/identity/privy';
import { signInWithProviderToken } from '../lib/session';
import { Field } from './field';
import { ErrorBox, Skeleton } from './states';

let loaded: { appId: string; sdk: Sdk; client: ProviderClient } | undefined;

async function providerClient(appId: string): Promise<{ sdk: Sdk; client: ProviderClient }> {
  if (loaded?.appId !== appId) {
    const sdk = await loadProviderSdk();
    loaded = { appId, sdk, client: new sdk.ProviderClient(appId) };
  }
  return loaded;
}

/** What the provider appended to our address when it sends the browser back from a social login. */
export function socialReturn(query: URLSearchParams): { code: string; state: string; provider: SocialId } | undefined {
  const code = query.get('privy_oauth_code');
  const state = query.get('privy_oauth_state');
  const provider = query.get('privy_oauth_provider');
  return code && state && provider ? { code, state, provider: provider as SocialId } : undefined;
}

interface Props {
  appId: string;
  /** Where the provider sends the browser back after a social login (this page, with `next`). */
  returnTo: string;
  /** Present when the browser just came back from a social login: finish it. */
  returned: ReturnType<typeof socialReturn>;
  onSignedIn: () => void;
}

export function ProviderLogin({ appId, returnTo, returned, onSignedIn }: Props) {
  const [methods, setMethods] = useState<ProviderMethods | undefined>();
  const [loadError, setLoadError] = useState<ApiError | undefined>();
  const [attempt, setAttempt] = useState(0);
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [codeSent, setCodeSent] = useState(false);
  const [busy, setBusy] = useState<string | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const codeInput = useRef<HTMLInputElement>(null);

  /** Runs one step; a provider failure reads in the provider's words, a registry one as the registry's. */
  const step = async (name: string, work: (sdk: Sdk, client: ProviderClient) => Promise<void>) => {
    setBusy(name);
    setError(undefined);
    const { sdk, client } = await providerClient(appId);
    try {
      await work(sdk, client);
    } catch (e) {
      setError(e instanceof ApiError ? e : asApiError(new Error(sdk.providerErrorMessage(e))));
    } finally {
      setBusy(undefined);
    }
  };

  const exchange = async (client: ProviderClient, token: string) => {
    await signInWithProviderToken(token);
    // Our session is set; the provider's is no longer needed in this page.
    await client.logout().catch(() => undefined);
    onSignedIn();
  };

  useEffect(() => {
    let live = true;
    setLoadError(undefined);
    providerClient(appId)
      .then(async ({ sdk, client }) => {
        try {
          const found = await client.methods();
          if (live) setMethods(found);
        } catch (e) {
          if (live) setLoadError(asApiError(new Error(sdk.providerErrorMessage(e))));
        }
      })
      .catch((e) => live && setLoadError(asApiError(e)));
    return () => {
      live = false;
    };
  }, [appId, attempt]);

  useEffect(() => {
    if (!returned || !methods) return;
    void step('social-return', async (_, client) =>
      exchange(client, await client.loginWithSocialCode(returned.code, returned.state, returned.provider)),
    );
  }, [returned?.code, methods]);

  // At commit, so the field has the focus in the first frame it is seen in.
  useLayoutEffect(() => {
    if (codeSent) codeInput.current?.focus();
  }, [codeSent]);

  const title = returned ? 'Could not finish signing in' : 'Could not sign in';
  return (
    <section class="provider-login" aria-labelledby="provider-login-title">
      <h2 id="provider-login-title">Sign in with email or a social account</h2>
      {loadError ? (
        <ErrorBox error={loadError} title="Email and social sign-in are unavailable" retry={() => setAttempt((n) => n + 1)} />
      ) : !methods ? (
        <Skeleton lines={2} label="Loading sign-in options" />
      ) : busy === 'social-return' ? (
        <p role="status">Finishing sign-in with {returned?.provider}…</p>
      ) : (
        <>
          {methods.email && !codeSent && (
            <form
              class="provider-form"
              onSubmit={(event) => {
                event.preventDefault();
                void step('send', async (_, client) => {
                  await client.sendEmailCode(email.trim());
                  setCodeSent(true);
                });
              }}
            >
              <Field id="provider-email" label="Email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
              <button type="submit" class="button button-primary" disabled={busy !== undefined}>
                {busy === 'send' ? 'Sending the code…' : 'Email me a sign-in code'}
              </button>
            </form>
          )}
          {methods.email && codeSent && (
            <form
              class="provider-form"
              onSubmit={(event) => {
                event.preventDefault();
                void step('code', async (_, client) => exchange(client, await client.loginWithEmailCode(email.trim(), code.trim())));
              }}
            >
              <p role="status">
                We sent a code to <strong>{email.trim()}</strong>. It can take a minute to arrive.
              </p>
              <Field
                id="provider-code"
                label="Code from the email"
                controlRef={codeInput}
                inputMode="numeric"
                autoComplete="one-time-code"
                pattern="[0-9]{6}"
                maxLength={6}
                required
                value={code}
                onValue={setCode}
              />
              <div class="row">
                <button type="submit" class="button button-primary" disabled={busy !== undefined}>
                  {busy === 'code' ? 'Signing in…' : 'Sign in'}
                </button>
                <button
                  type="button"
                  class="button"
                  disabled={busy !== undefined}
                  onClick={() => {
                    setCodeSent(false);
                    setCode('');
                    setError(undefined);
                  }}
                >
                  Use another email
                </button>
              </div>
            </form>
          )}
          {methods.social.length > 0 && (
            <ul class="wallet-list" aria-label="Social accounts">
              {methods.social.map((social) => (
                <li key={social.id}>
                  <button
                    type="button"
                    class="button wallet-button"
                    disabled={busy !== undefined}
                    onClick={() =>
                      step(social.id, async (_, client) => {
                        window.location.assign(await client.socialLoginUrl(social.id, returnTo));
                      })
                    }
                  >
                    Continue with {social.name}
                    {busy === social.id && <span class="muted small"> — opening {social.name}…</span>}
                  </button>
                </li>
              ))}
            </ul>
          )}
          {!methods.email && methods.social.length === 0 && (
            <p class="muted">The sign-in service has no email or social login enabled for this marketplace.</p>
          )}
        </>
      )}
      {error && <ErrorBox error={error} title={title} />}
      {error?.code === 'VALIDATION' && (
        <p class="muted small">
          The marketplace pays creators at the wallet of their account: link a wallet to your account with the sign-in service, or sign in
          with a browser wallet above.
        </p>
      )}
    </section>
  );
}
