import type { ComponentType } from 'preact';
import { useLayoutEffect } from 'preact/hooks';
import { Layout } from './components/layout';
import { focusNewPage, match, location } from './lib/router';
import { CreatorPage } from './pages/creator';
import { DashboardShell } from './pages/dashboard/shell';
import { MarketplacePage } from './pages/marketplace';
import { NotFoundPage } from './pages/not-found';
import { SignInPage } from './pages/signin';
import { SkillPage } from './pages/skill';

type Params = Record<string, string>;

/** Page paths (the same list the server answers in src/web/server.ts), first match wins. */
const ROUTES: [string, ComponentType<{ params: Params }>][] = [
  ['/', MarketplacePage],
  ['/skill/:slug', SkillPage],
  ['/creator/:address', CreatorPage],
  ['/signin', SignInPage],
  ['/dashboard', DashboardShell],
  ['/dashboard/*', DashboardShell],
];

export function App() {
  const path = location.value.path;
  let Page: ComponentType<{ params: Params }> = NotFoundPage;
  let params: Params = {};
  for (const [pattern, component] of ROUTES) {
    const found = match(pattern, path);
    if (found) {
      Page = component;
      params = found;
      break;
    }
  }
  // At commit, not after paint: the new heading holds the focus from the first frame it is seen in.
  useLayoutEffect(() => {
    document.title = 'Skill Market';
    focusNewPage();
  }, [path]);
  return (
    <Layout>
      <Page params={params} />
    </Layout>
  );
}
