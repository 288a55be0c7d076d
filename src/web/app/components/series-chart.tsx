/**
 * One daily series (views, calls or revenue) as a uPlot line chart. The box has its height before
 * the chart draws (no layout shift), and the numbers are in a visually hidden table for screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const HEIGHT = 180;

/** Counts step by whole numbers; money (with `format`) by uPlot's own decimal steps. */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 100000];

export function SeriesChart({
  title,
  dates,
  values,
  format,
}: {
  title: string;
  dates: string[];
  values: number[];
  format?: (n: number) => string;
}) {
  const show = format ?? String;
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
        scales: {
          x: { time: true },
          y: { range: (_u, _min, max) => [0, format ? (max > 0 ? max * 1.2 : 1) : Math.max(4, Math.ceil(max * 1.2))] },
        },
        axes: [
          { stroke: text, grid: { show: false } },
          { stroke: text, size: 56, values: (_u, ticks) => ticks.map(show), ...(format ? {} : { incrs: WHOLE_STEPS }) },
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
        {title} <span class="muted">({show(total)} in all)</span>
      </figcaption>
      <div ref={box} class="chart-box" style={{ height: `${HEIGHT}px` }} aria-hidden="true" />
      {/* A table ignores height and overflow, so the hiding box is a div around it (else 30 rows stretch the page). */}
      <div class="visually-hidden">
        <table>
          <caption>{title} per day</caption>
          <tbody>
            {dates.map((d, i) => (
              <tr key={d}>
                <th scope="row">{d}</th>
                <td>{show(values[i] ?? 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
