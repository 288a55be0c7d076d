import { count, shortAddress, usdc } from '../lib/format';
import type { Skill } from '../lib/types';

export function SkillCard({ skill }: { skill: Skill }) {
  return (
    <li class="card skill-card">
      <h3>
        <a href={`/skill/${encodeURIComponent(skill.slug)}`}>{skill.name}</a>
      </h3>
      <p class="description">{skill.description ?? <span class="muted">No description</span>}</p>
      <dl class="card-facts">
        <div>
          <dt>Price</dt>
          <dd class="price">{usdc(skill.price)} USDC</dd>
        </div>
        <div>
          <dt>Calls</dt>
          <dd>{count(skill.callCount)}</dd>
        </div>
        <div>
          <dt>Favourites</dt>
          <dd>{count(skill.favoriteCount)}</dd>
        </div>
      </dl>
      <p class="small muted">
        by{' '}
        <a href={`/creator/${skill.creatorAddress}`} title={skill.creatorAddress}>
          {shortAddress(skill.creatorAddress)}
        </a>
        {skill.groups.length > 0 && <> · {skill.groups.join(', ')}</>}
      </p>
    </li>
  );
}

/** Placeholder cards of the same size while the list loads. */
export function SkillCardSkeletons({ n = 6 }: { n?: number }) {
  return (
    <ul class="skill-grid" aria-hidden="true">
      {Array.from({ length: n }, (_, i) => (
        <li key={i} class="card skill-card card-skeleton">
          <span class="skeleton-line" style={{ width: '50%', height: '1.3em' }} />
          <span class="skeleton-line" />
          <span class="skeleton-line" style={{ width: '70%' }} />
          <span class="skeleton-line" style={{ width: '40%' }} />
        </li>
      ))}
    </ul>
  );
}
