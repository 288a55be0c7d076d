/**
 * One daily series (views, calls or revenue) as a uPlot line chart. The box has its height before
 * the chart draws (no layout shift), and the numbers are in a visually hidden table for screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const HEIGHT = 180;

export function SeriesChart({ title, dates, values, format = String }: { title: string; dates: string[]; values: number[]; format?: (n: number) => string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(document.documentElement);
    const accent = css.getPropertyValue('--accent').trim() || '#1d4ed8';
    const text = css.getPropertyValue('--text-muted').trim() || '#555';
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height: HEIGHT,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.2 : 1] } },
        axes: [
          { stroke: text, grid: { show: false } },
          { stroke: text, size: 56, values: (_u, ticks) => ticks.map(format) },
        ],
        series: [{}, { label: title, stroke: accent, width: 2, fill: `${accent}22`, points: { show: dates.length <= 7 } }],
      },
      [dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000), values],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [dates.join(), values.join()]);
  const total = values.reduce((sum, v) => sum + v, 0);
  return (
    <figure class="chart">
      <figcaption>
        {title} <span class="muted">({format(total)} in all)</span>
      </figcaption>
      <div ref={box} class="chart-box" style={{ height: `${HEIGHT}px` }} aria-hidden="true" />
      <table class="visually-hidden">
        <caption>{title} per day</caption>
        <tbody>
          {dates.map((d, i) => (
            <tr key={d}>
              <th scope="row">{d}</th>
              <td>{format(values[i] ?? 0)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
