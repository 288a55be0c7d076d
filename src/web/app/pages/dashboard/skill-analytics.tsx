/** One skill's analytics: counters and daily views, calls and revenue over 7 or 30 days (uPlot). */
import { useState } from 'preact/hooks';
import { SeriesChart } from '../../components/series-chart';
import { ErrorBox, Skeleton } from '../../components/states';
import { registry } from '../../lib/api';
import { count, usdc } from '../../lib/format';
import { useResource } from '../../lib/use-resource';

const money = (n: number) => `$${Number(n.toFixed(6))}`;

export function SkillAnalytics({ slug }: { slug: string }) {
  const [days, setDays] = useState<7 | 30>(30);
  const [data, retry] = useResource(
    async (signal) => {
      const skill = await registry.skill(slug, signal);
      const analytics = await registry.analytics(skill.id, days, signal);
      return { skill, analytics };
    },
    [slug, days],
  );
  return (
    <div>
      <p>
        <a href="/dashboard/skills">← All my skills</a>
      </p>
      <div class="analytics-head">
        <h2 class="no-top">{data.state === 'ready' ? data.data.skill.name : slug}</h2>
        {/* biome-ignore lint/a11y/useSemanticElements: toggle buttons styled as one segmented control */}
        <div class="segmented" role="group" aria-label="Period">
          {([7, 30] as const).map((d) => (
            <button key={d} type="button" class="button button-small" aria-pressed={days === d} onClick={() => setDays(d)}>
              {d} days
            </button>
          ))}
        </div>
      </div>
      {data.state === 'loading' && <Skeleton lines={6} label="Loading the analytics" />}
      {data.state === 'error' && <ErrorBox error={data.error} title="Could not load the analytics" retry={retry} />}
      {data.state === 'ready' && (
        <>
          <dl class="stats">
            <div>
              <dt>Calls</dt>
              <dd data-testid="stat-calls">{count(data.data.analytics.callCount)}</dd>
            </div>
            <div>
              <dt>Views</dt>
              <dd>{count(data.data.analytics.viewCount)}</dd>
            </div>
            <div>
              <dt>Favourites</dt>
              <dd>{count(data.data.analytics.favoriteCount)}</dd>
            </div>
            <div>
              <dt>Revenue</dt>
              <dd data-testid="stat-revenue">{usdc(data.data.analytics.totalRevenue)}</dd>
            </div>
          </dl>
          <div class="chart-grid">
            <SeriesChart
              title="Calls"
              dates={data.data.analytics.daily.map((d) => d.date)}
              values={data.data.analytics.daily.map((d) => d.calls)}
            />
            <SeriesChart
              title="Views"
              dates={data.data.analytics.daily.map((d) => d.date)}
              values={data.data.analytics.daily.map((d) => d.views)}
            />
            <SeriesChart
              title="Revenue (USDC)"
              dates={data.data.analytics.daily.map((d) => d.date)}
              values={data.data.analytics.daily.map((d) => Number(d.revenue))}
              format={money}
            />
          </div>
          <p class="small">
            <a href={`/skill/${encodeURIComponent(slug)}`}>Open the public page</a>
          </p>
        </>
      )}
    </div>
  );
}
