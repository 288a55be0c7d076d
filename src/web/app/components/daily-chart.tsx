/**
 * Daily series of one skill (`GET /analytics/:skillId` → `daily`) as a uPlot line chart: calls
 * on the skill page; views, calls or revenue in the dashboard. The box has its height before the
 * chart draws, and the same numbers are in a visually hidden table for screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Analytics } from '../lib/types';

const HEIGHT = 220;

type Day = Analytics['daily'][number];

export interface Series {
  label: string;
  /** The day's value (revenue arrives as a decimal string: plotted as a number, shown as given). */
  value: (day: Day) => number;
  /** A CSS colour or custom property name; default the accent colour. */
  color?: string;
}

const cssVar = (name: string, fallback: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

export function DailyChart({ daily, series, caption }: { daily: Day[]; series: Series[]; caption: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = daily.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const text = cssVar('--text-muted', '#555');
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: HEIGHT,
        legend: { show: series.length > 1 },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.2))] } },
        axes: [{ stroke: text, grid: { show: false } }, { stroke: text, size: 48 }],
        series: [
          {},
          ...series.map((s) => {
            const color = s.color?.startsWith('--') ? cssVar(s.color, '#2563eb') : (s.color ?? cssVar('--accent', '#2563eb'));
            return { label: s.label, stroke: color, width: 2, fill: series.length === 1 ? `${color}22` : undefined, points: { show: false } };
          }),
        ],
      },
      [xs, ...series.map((s) => daily.map(s.value))],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [daily, series]);
  return (
    <figure class="chart">
      <figcaption>{caption}</figcaption>
      <div ref={box} class="chart-box" style={{ height: `${HEIGHT}px` }} aria-hidden="true" />
      <table class="visually-hidden">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {series.map((s) => (
              <th key={s.label} scope="col">
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {daily.map((d) => (
            <tr key={d.date}>
              <th scope="row">{d.date}</th>
              {series.map((s) => (
                <td key={s.label}>{s.value(d)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

const CALLS: Series[] = [{ label: 'Calls', value: (d) => d.calls }];

/** The skill page's chart: calls per day over the last 30 days. */
export function CallsChart({ daily }: { daily: Day[] }) {
  const total = daily.reduce((sum, d) => sum + d.calls, 0);
  return <DailyChart daily={daily} series={CALLS} caption={`Calls per day, last 30 days (${total} in all)`} />;
}
