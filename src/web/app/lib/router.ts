/**
 * A tiny history router: the current path is a signal, links are ordinary `<a href>` that the
 * document-level click handler turns into `navigate()` (so middle-click and "open in new tab"
 * keep working), and pages match paths with `:param` patterns.
 */
import { signal } from '@preact/signals';

export const location = signal({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });

function read(): void {
  location.value = { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

/** Goes to `to` (a path with an optional query) without reloading; `replace` keeps history short (typing in a search box). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  read();
  if (!options.replace) {
    window.scrollTo(0, 0);
    // Screen readers and keyboards start on the new page's main heading, as after a real load:
    // the App moves focus once the new page is committed (a timer could fire before that).
    focusPending = true;
  }
}

let focusPending = false;

/** Called by the App after a page is committed: moves focus to its main heading after a navigation. */
export function focusNewPage(): void {
  if (!focusPending) return;
  focusPending = false;
  document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: true });
}

/** Params of `pattern` (`/skill/:slug`, `/dashboard/*`) in `path`, or undefined when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const part = want[i]!;
    if (part === '*') return { ...params, rest: have.slice(i).map(decodeURIComponent).join('/') };
    const value = have[i];
    if (value === undefined) return undefined;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(value);
    else if (part !== value) return undefined;
  }
  return want.length === have.length ? params : undefined;
}

export function startRouter(): void {
  window.addEventListener('popstate', read);
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element).closest?.('a');
    if (!anchor || anchor.target || anchor.hasAttribute('download')) return;
    const url = new URL(anchor.href, window.location.href);
    if (url.origin !== window.location.origin || !isPagePath(url.pathname)) return;
    // An in-page anchor (the skip link) is the browser's to follow: it moves focus there.
    if (url.hash && url.pathname === window.location.pathname && url.search === window.location.search) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
}

/** Paths the app draws itself; anything else (the API, /docs) is left to a real navigation. */
export function isPagePath(path: string): boolean {
  return (
    path === '/' || /^\/(skill|creator)\/[^/]+$/.test(path) || path === '/signin' || path === '/dashboard' || path.startsWith('/dashboard/')
  );
}
