import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { asApiError, type ApiError } from '../lib/api';
import { loadPageConfig, pageConfig, pageConfigError } from '../lib/config';
import { shortAddress } from '../lib/format';
import { location } from '../lib/router';
import { account, signOut } from '../lib/session';
import { ErrorBox } from './states';

function NavLink({ href, children }: { href: string; children: ComponentChildren }) {
  const path = location.value.path;
  const current = href === '/' ? path === '/' || path.startsWith('/skill/') || path.startsWith('/creator/') : path.startsWith(href);
  return (
    <a href={href} aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}

function AccountArea() {
  const [error, setError] = useState<ApiError | undefined>();
  const me = account.value;
  // The slot keeps its width while the session check runs, so the header never jumps.
  if (me === undefined) return <span class="account-slot muted small" aria-hidden="true" />;
  if (me === null) {
    if (location.value.path === '/signin') return <span class="account-slot" />;
    return (
      <span class="account-slot">
        <a class="button button-primary" href={`/signin?next=${encodeURIComponent(location.value.path)}`}>
          Sign in
        </a>
      </span>
    );
  }
  const out = async () => {
    try {
      await signOut();
    } catch (e) {
      setError(asApiError(e));
    }
  };
  return (
    <span class="account-slot">
      <span class="small" title={me.walletAddress}>
        <span class="visually-hidden">Signed in as </span>
        {me.name ?? shortAddress(me.walletAddress)}
      </span>
      <button type="button" class="button button-small" onClick={out}>
        Sign out
      </button>
      {error && <ErrorBox error={error} title="Sign out failed" />}
    </span>
  );
}

export function Layout({ children }: { children: ComponentChildren }) {
  const network = pageConfig.value?.network;
  const configError = pageConfigError.value;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="site-header">
        <div class="container header-row">
          <a class="brand" href="/">
            <span aria-hidden="true">◆</span> Skill Market
          </a>
          <nav aria-label="Main">
            <NavLink href="/">Marketplace</NavLink>
            <NavLink href="/dashboard">Dashboard</NavLink>
          </nav>
          <AccountArea />
        </div>
      </header>
      <main id="main" class="container" tabIndex={-1}>
        {configError && (
          <ErrorBox
            error={configError}
            title="Some settings of this marketplace could not be loaded"
            retry={() => loadPageConfig().catch(() => undefined)}
          />
        )}
        {children}
      </main>
      <footer class="site-footer">
        <div class="container small muted">
          Paid per call in USDC{network ? ` on ${network.name}` : ''} with x402 · <a href="/docs">API reference</a>
        </div>
      </footer>
    </>
  );
}
