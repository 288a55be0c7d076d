/**
 * The dashboard's frame: signed-in only, a side navigation, and one panel per section. Each
 * section's view lives in its own file in this folder and is listed in SECTIONS.
 */
import type { ComponentType } from 'preact';
import { Skeleton } from '../../components/states';
import { account } from '../../lib/session';
import { location } from '../../lib/router';
import { Placeholder } from './placeholder';

interface Section {
  path: string;
  label: string;
  group: 'Creator' | 'Consumer' | 'Account';
  View: ComponentType;
}

/** Add a section here; its path is /dashboard/<path>. */
export const SECTIONS: Section[] = [
  { path: 'skills', label: 'My skills', group: 'Creator', View: Placeholder },
  { path: 'groups', label: 'Groups', group: 'Creator', View: Placeholder },
  { path: 'keys', label: 'API keys', group: 'Creator', View: Placeholder },
  { path: 'wallets', label: 'Spending wallets', group: 'Consumer', View: Placeholder },
  { path: 'calls', label: 'My paid calls', group: 'Consumer', View: Placeholder },
  { path: 'favourites', label: 'Favourites', group: 'Consumer', View: Placeholder },
  { path: 'profile', label: 'Profile', group: 'Account', View: Placeholder },
];

export function DashboardShell({ params }: { params: Record<string, string> }) {
  const me = account.value;
  if (me === undefined) {
    return (
      <section>
        <h1 tabIndex={-1}>Dashboard</h1>
        <Skeleton lines={4} label="Checking your session" />
      </section>
    );
  }
  if (me === null) {
    return (
      <section class="narrow">
        <h1 tabIndex={-1}>Dashboard</h1>
        <p>Sign in to manage your skills, groups, API keys and spending wallets.</p>
        <a class="button button-primary" href={`/signin?next=${encodeURIComponent(location.value.path)}`}>
          Sign in
        </a>
      </section>
    );
  }
  const current = SECTIONS.find((s) => s.path === (params.rest ?? '').split('/')[0]) ?? SECTIONS[0]!;
  const groups = [...new Set(SECTIONS.map((s) => s.group))];
  return (
    <div class="dashboard">
      <nav class="dashboard-nav" aria-label="Dashboard">
        {groups.map((group) => (
          <div key={group}>
            <h2 class="nav-group">{group}</h2>
            <ul>
              {SECTIONS.filter((s) => s.group === group).map((s) => (
                <li key={s.path}>
                  <a href={`/dashboard/${s.path}`} aria-current={s === current ? 'page' : undefined}>
                    {s.label}
                  </a>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <section class="dashboard-panel" aria-labelledby="dashboard-title">
        <h1 id="dashboard-title" tabIndex={-1}>
          {current.label}
        </h1>
        <current.View />
      </section>
    </div>
  );
}
