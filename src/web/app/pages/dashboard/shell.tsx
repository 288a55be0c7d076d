/**
 * The dashboard's frame: signed-in only, a side navigation, and one panel per section. Each
 * section's view lives in its own file in this folder and is listed in SECTIONS.
 */
import type { ComponentType } from 'preact';
import { Skeleton } from '../../components/states';
import { account } from '../../lib/session';
import { location } from '../../lib/router';
import { CallsView } from './calls';
import { CreatorChannelsView, PayerChannelsView } from './channels';
import { FavouritesView } from './favourites';
import { GroupsView } from './groups';
import { KeysView } from './keys';
import { ProfileView } from './profile';
import { SkillsView } from './skills';
import { WalletsView } from './wallets';
import { WebhooksView } from './webhooks';

interface Section {
  path: string;
  label: string;
  group: 'Creator' | 'Consumer' | 'Account';
  /** Gets the path below the section (`/dashboard/skills/<slug>` → ['<slug>']). */
  View: ComponentType<{ rest: string[] }>;
}

/** Add a section here; its path is /dashboard/<path>. */
const SECTIONS: Section[] = [
  { path: 'skills', label: 'My skills', group: 'Creator', View: SkillsView },
  { path: 'groups', label: 'Groups', group: 'Creator', View: GroupsView },
  { path: 'channels', label: 'Channels', group: 'Creator', View: CreatorChannelsView },
  { path: 'keys', label: 'API keys', group: 'Creator', View: KeysView },
  { path: 'webhooks', label: 'Webhooks', group: 'Creator', View: WebhooksView },
  { path: 'wallets', label: 'Spending wallets', group: 'Consumer', View: WalletsView },
  { path: 'calls', label: 'My paid calls', group: 'Consumer', View: CallsView },
  { path: 'my-channels', label: 'My channels', group: 'Consumer', View: PayerChannelsView },
  { path: 'favourites', label: 'Favourites', group: 'Consumer', View: FavouritesView },
  { path: 'profile', label: 'Profile', group: 'Account', View: ProfileView },
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
  const [first, ...rest] = (params.rest ?? '').split('/').filter(Boolean);
  const current = SECTIONS.find((s) => s.path === first) ?? SECTIONS[0]!;
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
        <current.View key={current.path} rest={current.path === first ? rest : []} />
      </section>
    </div>
  );
}
