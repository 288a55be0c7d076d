/**
 * Calls per day over the last 30 days (uPlot). The box has a fixed height before the chart draws,
 * and the same numbers are in a visually hidden table for screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Analytics } from '../lib/types';

const HEIGHT = 220;

export function CallsChart({ daily }: { daily: Analytics['daily'] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = daily.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const accent = getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() || '#2563eb';
    const text = getComputedStyle(document.documentElement).getPropertyValue('--text-muted').trim() || '#555';
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: HEIGHT,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.2))] } },
        axes: [
          { stroke: text, grid: { show: false } },
          { stroke: text, size: 40, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000] },
        ],
        series: [{}, { label: 'Calls', stroke: accent, width: 2, fill: `${accent}22`, points: { show: false } }],
      },
      [xs, daily.map((d) => d.calls)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [daily]);
  const total = daily.reduce((sum, d) => sum + d.calls, 0);
  return (
    <figure class="chart">
      <figcaption>
        Calls per day, last 30 days <span class="muted">({total} in all)</span>
      </figcaption>
      <div ref={box} class="chart-box" style={{ height: `${HEIGHT}px` }} aria-hidden="true" />
      <table class="visually-hidden">
        <caption>Calls per day</caption>
        <tbody>
          {daily.map((d) => (
            <tr key={d.date}>
              <th scope="row">{d.date}</th>
              <td>{d.calls}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
