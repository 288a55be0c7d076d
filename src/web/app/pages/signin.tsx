import { ProviderLogin, socialReturn } from '../components/provider-login';
import { WalletPicker } from '../components/wallet-picker';
import { pageConfig } from '../lib/config';
import { isPagePath, location, navigate } from '../lib/router';
import { account, signInWithWallet } from '../lib/session';
import { Skeleton } from '../components/states';
import { shortAddress } from '../lib/format';

/** Where to go after signing in: a page path only, never another site. */
function nextPath(): string {
  const next = location.value.query.get('next') ?? '/dashboard';
  return next.startsWith('/') && !next.startsWith('//') && isPagePath(next.split('?')[0]!) && next !== '/signin' ? next : '/dashboard';
}

export function SignInPage() {
  const me = account.value;
  const privyAppId = pageConfig.value?.privyAppId;
  const returned = socialReturn(location.value.query);
  return (
    <section class="narrow">
      <h1 tabIndex={-1}>Sign in</h1>
      {me === undefined ? (
        <Skeleton lines={2} label="Checking your session" />
      ) : me ? (
        <p>
          You are signed in as <strong title={me.walletAddress}>{me.name ?? shortAddress(me.walletAddress)}</strong>.{' '}
          <a href={nextPath()}>Continue</a>
        </p>
      ) : (
        <>
          <p>
            Connect your wallet and sign one message to prove it is yours. Signing is free: it sends no transaction and moves no money.
            {privyAppId && ' No wallet? Sign in with your email or a social account below.'}
          </p>
          <WalletPicker
            action="Sign in"
            creator
            onPick={async (wallet) => {
              await signInWithWallet(wallet);
              navigate(nextPath());
            }}
          />
          {privyAppId && (
            <ProviderLogin
              appId={privyAppId}
              returnTo={`${window.location.origin}/signin?next=${encodeURIComponent(nextPath())}`}
              returned={returned}
              onSignedIn={() => navigate(nextPath())}
            />
          )}
        </>
      )}
    </section>
  );
}
