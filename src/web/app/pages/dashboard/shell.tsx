/**
 * The dashboard's frame: signed-in only, a side navigation, and one panel per section. Each
 * section's view lives in its own file in this folder and is listed in SECTIONS.
 */
import type { ComponentType } from 'preact';
import { useEffect } from 'preact/hooks';
import { Skeleton } from '../../components/states';
import { loadStanding, standing } from '../../lib/standing';
import { account } from '../../lib/session';
import { location } from '../../lib/router';
import { CallsView } from './calls';
import { CreatorChannelsView, PayerChannelsView } from './channels';
import { FavouritesView } from './favourites';
import { GroupsView } from './groups';
import { KeysView } from './keys';
import { OperatorView } from './operator';
import { ProfileView } from './profile';
import { ReportsView } from './reports';
import { SkillsView } from './skills';
import { WalletsView } from './wallets';
import { WebhooksView } from './webhooks';

interface Section {
  path: string;
  label: string;
  group: 'Creator' | 'Consumer' | 'Account' | 'Operator';
  /** Shown to the marketplace's operators only. */
  operatorOnly?: true;
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
  { path: 'reports', label: 'My reports', group: 'Account', View: ReportsView },
  { path: 'operator', label: 'Reports and audit log', group: 'Operator', View: OperatorView, operatorOnly: true },
];

/** Why the account is suspended, on every section: its skills are hidden and its writes refused. */
function SuspendedNotice() {
  const suspended = standing.value?.suspended;
  if (!suspended) return null;
  return (
    <div class="notice notice-warn" role="status">
      <strong>Your account is suspended by the marketplace’s operators</strong>
      <p>Reason: {suspended.reason}</p>
      <p class="muted small">
        Your skills are hidden from the marketplace and changes are refused until the suspension is lifted. You can still sign in, read your
        data and revoke keys.
      </p>
    </div>
  );
}

export function DashboardShell({ params }: { params: Record<string, string> }) {
  const me = account.value;
  useEffect(() => {
    if (me) void loadStanding(me.walletAddress);
  }, [me?.walletAddress]);
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
  const operator = standing.value?.operator === true;
  const sections = SECTIONS.filter((s) => !s.operatorOnly || operator);
  const current = sections.find((s) => s.path === first) ?? sections[0]!;
  const groups = [...new Set(sections.map((s) => s.group))];
  return (
    <div class="dashboard">
      <nav class="dashboard-nav" aria-label="Dashboard">
        {groups.map((group) => (
          <div key={group}>
            <h2 class="nav-group">{group}</h2>
            <ul>
              {sections
                .filter((s) => s.group === group)
                .map((s) => (
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
        <SuspendedNotice />
        <current.View key={current.path} rest={current.path === first ? rest : []} />
      </section>
    </div>
  );
}
