import { count, priceWithTiers, shortAddress, stars, trialText, uptime } from '../lib/format';
import type { Skill, SkillView } from 'skill-market/registry';

/** What a card shows: a search result, or a skill of a creator's or group's page. */
type CardSkill = Pick<Skill, 'slug' | 'name' | 'description' | 'price' | 'groups'> &
  Partial<
    Pick<SkillView, 'callCount' | 'buyerCount' | 'creatorAddress' | 'rating' | 'reviewCount' | 'uptime' | 'trial' | 'tiers' | 'usageBased'>
  >;

export function SkillCard({ skill }: { skill: CardSkill }) {
  return (
    <li class="card skill-card">
      <h3>
        <a href={`/skill/${encodeURIComponent(skill.slug)}`}>{skill.name}</a>
      </h3>
      <p class="description">{skill.description ?? <span class="muted">No description</span>}</p>
      <dl class="card-facts">
        <div>
          {skill.usageBased ? <dt title="Each call is charged what it used, at most this price">Price by use</dt> : <dt>Price</dt>}
          <dd class="price">{priceWithTiers(skill)}</dd>
        </div>
        {skill.trial && (
          <div>
            <dt>Free trial</dt>
            <dd class="trial">{trialText(skill.trial)}</dd>
          </div>
        )}
        <div>
          <dt>Calls</dt>
          <dd>{count(skill.callCount ?? 0)}</dd>
        </div>
        <div>
          <dt>Rating</dt>
          <dd class="rating">{stars(skill.rating ?? null, skill.reviewCount ?? 0)}</dd>
        </div>
        <div>
          <dt title="Distinct wallets that paid for a call">Buyers</dt>
          <dd>{count(skill.buyerCount ?? 0)}</dd>
        </div>
        <div>
          <dt title="Share of the last week its server answered the marketplace's health checks">Uptime</dt>
          <dd>{uptime(skill.uptime)}</dd>
        </div>
      </dl>
      <p class="small muted">
        <Byline creatorAddress={skill.creatorAddress} groups={skill.groups} />
      </p>
    </li>
  );
}

/** "by 0x12…cdef · group, group": the creator linked to their page (absent from a listing that lacks it). */
export function Byline({ creatorAddress, groups }: { creatorAddress: string | undefined; groups: string[] }) {
  return (
    <>
      {creatorAddress && (
        <>
          by{' '}
          <a href={`/creator/${creatorAddress}`} title={creatorAddress}>
            {shortAddress(creatorAddress)}
          </a>
        </>
      )}
      {groups.length > 0 && (
        <>
          {creatorAddress ? ' · ' : ''}
          {groups.join(', ')}
        </>
      )}
    </>
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
