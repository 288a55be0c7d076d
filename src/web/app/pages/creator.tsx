import { ReportButton } from '../components/report-button';
import { SkillCard, SkillCardSkeletons } from '../components/skill-card';
import { Empty, ErrorBox, Skeleton } from '../components/states';
import { registry } from '../lib/api';
import { date, shortAddress } from '../lib/format';
import { useResource } from '../lib/use-resource';

export function CreatorPage({ params }: { params: Record<string, string> }) {
  const address = params.address ?? '';
  const [creator, retry] = useResource((signal) => registry.creator(address, signal), [address]);
  if (creator.state === 'loading') {
    return (
      <section>
        <h1 tabIndex={-1}>
          <span class="visually-hidden">Creator </span>
          {shortAddress(address)}
        </h1>
        <Skeleton lines={2} label="Loading the creator" />
        <SkillCardSkeletons n={3} />
      </section>
    );
  }
  if (creator.state === 'error') {
    return (
      <section>
        <h1 tabIndex={-1}>Creator {shortAddress(address)}</h1>
        <ErrorBox error={creator.error} title="Could not load this creator" retry={retry} />
      </section>
    );
  }
  const c = creator.data;
  return (
    <section>
      <div class="profile">
        {c.avatar && <img class="avatar" src={c.avatar} alt="" width={64} height={64} />}
        <div>
          <h1 tabIndex={-1}>{c.name ?? shortAddress(c.walletAddress)}</h1>
          <p class="muted small mono">{c.walletAddress}</p>
          {c.bio && <p>{c.bio}</p>}
          <p class="muted small">Creator since {date(c.createdAt)}</p>
          <ReportButton creatorAddress={c.walletAddress} name={c.name ?? shortAddress(c.walletAddress)} />
        </div>
      </div>
      <h2>Skills</h2>
      {c.skills.length === 0 ? (
        <Empty title="No active skills">This creator has not published a skill yet, or has paused them all.</Empty>
      ) : (
        <ul class="skill-grid">
          {c.skills.map((s) => (
            <SkillCard key={s.id} skill={s} />
          ))}
        </ul>
      )}
    </section>
  );
}
