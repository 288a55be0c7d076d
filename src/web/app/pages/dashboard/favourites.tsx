/** Favourites: the skills I starred, most recent first (paused ones flagged). */
import { SkillCard } from '../../components/skill-card';
import { Empty, ErrorBox, Skeleton } from '../../components/states';
import { registry } from '../../lib/api';
import { useResource } from '../../lib/use-resource';

export function FavouritesView() {
  const [skills, retry] = useResource((signal) => registry.favorites(signal), []);
  if (skills.state === 'loading') return <Skeleton lines={4} label="Loading your favourites" />;
  if (skills.state === 'error') return <ErrorBox error={skills.error} title="Could not load your favourites" retry={retry} />;
  if (skills.data.length === 0) {
    return (
      <Empty title="No favourites yet">
        Star a skill on its page to find it here. <a href="/">Browse the marketplace</a>
      </Empty>
    );
  }
  const paused = skills.data.filter((s) => !s.isActive).length;
  return (
    <>
      {paused > 0 && (
        <p class="muted small">
          {paused === 1 ? 'One of them is' : `${paused} of them are`} paused by the creator and cannot be called now.
        </p>
      )}
      <ul class="skill-grid">
        {skills.data.map((s) => (
          <SkillCard key={s.id} skill={s} />
        ))}
      </ul>
    </>
  );
}
