/**
 * One skill: what it does and costs, its counters and 30-day chart of calls, how to call it
 * (snippets), its schemas, a favourite button for signed-in users, and Try it. Opening the
 * page records a view.
 */
import { useEffect, useState } from 'preact/hooks';
import { SeriesChart } from '../components/series-chart';
import { SchemaView } from '../components/schema-view';
import { Snippets } from '../components/snippets';
import { ErrorBox, Skeleton } from '../components/states';
import { TryIt } from '../components/try-it';
import { Byline } from '../components/skill-card';
import { ReportButton } from '../components/report-button';
import { asApiError, registry, type ApiError } from '../lib/api';
import { networkName } from '../lib/config';
import { count, priceWithTiers, trialText, uptime, usdc } from '../lib/format';
import { account } from '../lib/session';
import type { Analytics, Skill } from 'skill-market/registry';
import { useResource } from '../lib/use-resource';

function FavouriteButton({ skill, onCount }: { skill: Skill; onCount: (n: number) => void }) {
  const [favourited, setFavourited] = useState<boolean | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  if (!account.value) return null;
  const toggle = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await registry.favorite(skill.id, !favourited, skill.slug);
      setFavourited(r.favorited);
      onCount(r.favoriteCount);
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class="button" aria-pressed={favourited === true} disabled={busy} onClick={toggle}>
        {favourited ? '★ Favourited' : '☆ Add to favourites'}
      </button>
      {error && <ErrorBox error={error} title="Could not change your favourite" />}
    </>
  );
}

function Stats({ skill, analytics, favourites }: { skill: Skill; analytics: Analytics | undefined; favourites: number }) {
  const items: [string, string][] = [
    ['Calls', count(analytics?.callCount ?? skill.callCount ?? 0)],
    ['Buyers', count(skill.buyerCount ?? 0)],
    ['Uptime', uptime(skill.uptime)],
    ['Views', count(analytics?.viewCount ?? skill.viewCount ?? 0)],
    ['Favourites', count(favourites)],
    ['Revenue', `${usdc(analytics?.totalRevenue ?? skill.totalRevenue ?? '0')} USDC`],
  ];
  return (
    <dl class="stats stats-six">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function SkillPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug ?? '';
  const [skill, retry] = useResource((signal) => registry.skill(slug, signal), [slug]);
  const id = skill.state === 'ready' ? skill.data.id : undefined;
  const [analytics] = useResource((signal) => (id ? registry.analytics(id, undefined, signal) : new Promise<never>(() => undefined)), [id]);
  const [favourites, setFavourites] = useState<number | undefined>();

  useEffect(() => {
    if (id) registry.recordView(id).catch(() => undefined);
  }, [id]);
  useEffect(() => {
    if (skill.state === 'ready') document.title = `${skill.data.name} · Skill Market`;
  }, [skill]);

  if (skill.state !== 'ready') {
    return (
      // The same frame as the loaded page, so the heading (and the focus on it) stays put.
      <article class="skill-page">
        <header class="skill-header">
          <div>
            <h1 tabIndex={-1}>{slug}</h1>
          </div>
        </header>
        {skill.state === 'loading' ? (
          <Skeleton lines={6} label="Loading the skill" />
        ) : (
          <ErrorBox error={skill.error} title="Could not load this skill" retry={retry} />
        )}
      </article>
    );
  }
  const s = skill.data;
  return (
    <article class="skill-page">
      <header class="skill-header">
        <div>
          <h1 tabIndex={-1}>{s.name}</h1>
          <p class="muted">
            <Byline creatorAddress={s.creatorAddress} groups={s.groups} />
            {s.verified && <span class="badge">verified</span>}
            {!s.isActive && <span class="badge badge-warn">paused</span>}
          </p>
        </div>
        <div class="price-box">
          <span class="price-line">
            {s.usageBased && <span class="muted">up to </span>}
            <span class="price-big">{usdc(s.price)}</span> <span class="muted">USDC per call{s.usageBased ? ', charged by use' : ''}</span>
          </span>
          {s.trial && <span class="badge">{trialText(s.trial)}</span>}
          <FavouriteButton skill={s} onCount={setFavourites} />
          <ReportButton slug={s.slug} creatorAddress={s.creatorAddress} name={s.name} />
        </div>
      </header>
      <p class="lead">{s.description ?? <span class="muted">No description.</span>}</p>
      <Stats
        skill={s}
        analytics={analytics.state === 'ready' ? analytics.data : undefined}
        favourites={favourites ?? (analytics.state === 'ready' ? analytics.data.favoriteCount : (s.favoriteCount ?? 0))}
      />
      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Usage</h2>
        {analytics.state === 'ready' ? (
          <SeriesChart
            title="Calls per day, last 30 days"
            dates={analytics.data.daily.map((d) => d.date)}
            values={analytics.data.daily.map((d) => d.calls)}
          />
        ) : analytics.state === 'error' ? (
          <ErrorBox error={analytics.error} title="Could not load the chart" />
        ) : (
          <div class="chart-placeholder" aria-hidden="true" />
        )}
      </section>
      <div class="two-columns">
        <section aria-labelledby="try-title">
          <h2 id="try-title">Try it</h2>
          {s.isActive ? <TryIt skill={s} /> : <p class="muted">This skill is paused by its creator.</p>}
        </section>
        <section aria-labelledby="details-title">
          <h2 id="details-title">Details</h2>
          <dl class="details">
            <dt>Network</dt>
            <dd>
              {networkName(s.network)} <span class="muted small">({s.network})</span>
            </dd>
            <dt>Endpoint</dt>
            <dd class="mono break">{s.endpoint}</dd>
            <dt>Pays to</dt>
            <dd class="mono break">{s.paymentAddress}</dd>
            <dt>Price</dt>
            <dd>
              {s.usageBased ? 'up to ' : ''}
              {usdc(s.price)} USDC <span class="muted small">({s.priceAtomic} micro-USDC)</span>
              {s.usageBased && ', charged by use'}
            </dd>
            {s.tiers && (
              <>
                <dt>Volume prices</dt>
                <dd class="tiers">{priceWithTiers(s)}</dd>
              </>
            )}
            {s.trial && (
              <>
                <dt>Free trial</dt>
                <dd class="trial">
                  {trialText(s.trial)} <span class="muted small">({count(s.trialCallCount ?? 0)} trial calls so far)</span>
                </dd>
              </>
            )}
          </dl>
          <h3>Input</h3>
          <SchemaView schema={s.inputSchema} title="Input schema" />
          <h3>Output</h3>
          <SchemaView schema={s.outputSchema} title="Output schema" />
        </section>
      </div>
      <section aria-labelledby="code-title">
        <h2 id="code-title">Call it from code</h2>
        <Snippets skill={s} />
      </section>
    </article>
  );
}
