import { useCallback, useEffect, useRef, useState } from 'react';
import { useLatestCall } from '../latest-call.js';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatSize } from '../format';
import { can, type AdminSession } from './session';
import { t } from './strings';
import { usePolling } from './usePolling';
import { DEFAULT_RANGE, RANGES, bucketLabel, bucketTimes, peak, sum, tickLabel, type Buckets, type ChartData, type Range, type TopUser } from './charts-data';
import { loadCharts, loadTopUsers } from './charts-api';

/** How often the charts ask again (they cover hours and days: no need for the dashboard's 5 s). */
export const CHARTS_REFRESH_MS = 60_000;
const HEIGHT = 220;

/** Whether the system is in dark mode, following its changes (the charts read their colours from the CSS variables then). */
function useDarkMode(): boolean {
  const query = '(prefers-color-scheme: dark)';
  const [dark, setDark] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const mq = matchMedia(query);
    const on = () => setDark(mq.matches);
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);
  return dark;
}

interface Series {
  label: string;
  values: number[];
  /** CSS variable of its colour (admin.css, with dark-mode values). */
  color: string;
}

/**
 * One uPlot chart (canvas) of `series` over `buckets`. uPlot sets only
 * element.style properties (CSSOM), which the CSP's `style-src 'self'`
 * allows; its stylesheet is bundled. The canvas is hidden from assistive
 * technology: the figure's caption and table carry the same data.
 */
function Chart({ buckets, series, bars, format }: { buckets: Buckets; series: Series[]; bars: boolean; format?: (v: number) => string }) {
  const box = useRef<HTMLDivElement>(null);
  const dark = useDarkMode();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(el);
    const v = (name: string) => css.getPropertyValue(name).trim();
    const axis: uPlot.Axis = { stroke: v('--text'), grid: { stroke: v('--border'), width: 1 }, ticks: { stroke: v('--border'), width: 1 } };
    const n = series.length;
    // bars stand on a scale of bucket indexes (uPlot's grouped bars need evenly spaced x), labelled with the buckets' times;
    // lines on a time scale
    const times = bucketTimes(buckets);
    const x = bars ? times.map((_, i) => i) : times;
    // both kinds of axis say the same things the same way (tickLabel): hours, and dates at midnight
    const hourly = buckets.interval < 86_400;
    const xAxis: uPlot.Axis = bars
      ? {
          ...axis,
          incrs: [1, 2, 3, 4, 6, 12, 24, 48, 96, 168],
          values: (_u, ticks) => ticks.map((i) => (Number.isInteger(i) && i >= 0 && i < buckets.count ? tickLabel(times[i]!, hourly) : '')),
        }
      : {
          ...axis,
          incrs: [1, 2, 3, 4, 6, 12, 24, 48, 96, 168].map((h) => h * 3600),
          values: (_u, ticks) => ticks.map((ts) => tickLabel(ts, hourly)),
        };
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 280),
        height: HEIGHT,
        scales: {
          x: bars ? { time: false, range: () => [-0.5, buckets.count - 0.5] } : { time: true },
          y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
        // counts on whole numbers; sizes where uPlot puts them
        axes: [
          xAxis,
          {
            ...axis,
            size: 70,
            ...(format ? {} : { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7] }),
            values: (_u, ticks) => ticks.map((v) => (format ? format(v) : String(v))),
          },
        ],
        legend: { show: true, live: false },
        cursor: { drag: { x: false, y: false } },
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: v(s.color),
            fill: bars ? v(s.color) : undefined,
            width: bars ? 0 : 2,
            points: { show: false },
            paths: bars ? uPlot.paths.bars!({ size: [0.8 / n, Infinity], align: n === 1 ? 0 : i === 0 ? -1 : 1 }) : undefined,
          })),
        ],
      },
      [x, ...series.map((s) => s.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 280), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [buckets, series, bars, format, dark]);
  return <div ref={box} className="chart" aria-hidden="true" />;
}

/** A chart with its summary (the figure's caption) and its data as a table, for screen readers and anyone who would rather read. */
function Figure(p: { id: string; title: string; summary: string; buckets: Buckets; series: Series[]; bars: boolean; format?: (v: number) => string }) {
  const show = p.format ?? String;
  return (
    <figure className="card chart-figure" aria-labelledby={`${p.id}-title`} data-testid={p.id}>
      <h2 id={`${p.id}-title`}>{p.title}</h2>
      <figcaption data-testid={`${p.id}-summary`}>{p.summary}</figcaption>
      <Chart buckets={p.buckets} series={p.series} bars={p.bars} format={p.format} />
      <details>
        <summary>{t.chartTable}</summary>
        <div className="scroll">
          <table className="grid" data-testid={`${p.id}-table`}>
            <caption className="visually-hidden">{p.title}</caption>
            <thead>
              <tr>
                <th scope="col">{p.buckets.interval >= 86_400 ? t.chartDay : t.chartHour}</th>
                {p.series.map((s) => (
                  <th scope="col" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {bucketTimes(p.buckets).map((_, i) => (
                <tr key={i}>
                  <th scope="row">{bucketLabel(p.buckets, i)}</th>
                  {p.series.map((s) => (
                    <td key={s.label} data-value={s.values[i]}>
                      {show(s.values[i]!)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

const size = (v: number) => formatSize(v);

/** The busiest bucket of `values`, as a sentence (empty when there is none). */
function busiest(b: Buckets, values: number[], show: (v: number) => string = String): string {
  const i = peak(values);
  return i < 0 ? '' : ' ' + t.chartPeak(bucketLabel(b, i), show(values[i]!));
}

function TopUsers() {
  const [top, setTop] = useState<{ users?: TopUser[]; message?: string } | null>(null);
  const load = useCallback(async () => setTop(await loadTopUsers()), []);
  usePolling(load, CHARTS_REFRESH_MS * 5);
  if (!top) return null;
  const max = Math.max(1, ...(top.users ?? []).map((u) => u.used));
  return (
    <section className="card" aria-labelledby="top-users-title">
      <h2 id="top-users-title">{t.topUsers}</h2>
      {top.message && (
        <p className="error" role="alert">
          {top.message}
        </p>
      )}
      {top.users && top.users.length === 0 && <p>{t.noStorageUsed}</p>}
      {top.users && top.users.length > 0 && (
        <table className="grid" data-testid="top-users">
          <caption className="visually-hidden">{t.topUsers}</caption>
          <thead>
            <tr>
              <th scope="col">{t.user}</th>
              <th scope="col">{t.storageUsed}</th>
              <th scope="col">{t.quota}</th>
            </tr>
          </thead>
          <tbody>
            {top.users.map((u) => (
              <tr key={u.username}>
                <th scope="row">{u.username}</th>
                <td data-value={u.used}>
                  <span className="bar-cell">
                    <meter min={0} max={max} value={u.used} aria-hidden="true" />
                    {size(u.used)}
                  </span>
                </td>
                <td>{u.quota > 0 ? size(u.quota) : t.unlimited}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * The dashboard's charts (loaded on first use with uPlot): uploads and
 * downloads per hour, bytes moved per day, failed logins per hour, over the
 * chosen range, from the events-search plugin's aggregates; and the users
 * using the most storage.
 */
export default function Charts({ session }: { session: AdminSession }) {
  const [range, setRange] = useState<Range>(DEFAULT_RANGE);
  const [data, setData] = useState<ChartData | null>(null);
  const [error, setError] = useState('');
  const [unavailable, setUnavailable] = useState('');
  const seeEvents = can(session, 'view_events');
  // the figures of a range left meanwhile (a slow answer to the previous choice) are dropped
  const begin = useLatestCall();
  const load = useCallback(async () => {
    if (!seeEvents) return;
    const current = begin();
    const r = await loadCharts(range);
    if (!current()) return;
    if (r.data) setData(r.data);
    setError(r.unavailable ? '' : (r.message ?? ''));
    setUnavailable(r.unavailable ? (r.message ?? '') : '');
  }, [range, seeEvents, begin]);
  usePolling(load, CHARTS_REFRESH_MS, range);

  const rangeName = t.ranges[range];
  return (
    <>
      {seeEvents && (
        <section aria-labelledby="charts-title" className="charts">
          <div className="row">
            <h2 id="charts-title">{t.activity}</h2>
            <label className="range">
              {t.timeRange}{' '}
              <select
                value={range}
                onChange={(e) => {
                  setData(null);
                  setRange(e.target.value as Range);
                }}
                data-testid="chart-range"
              >
                {RANGES.map((r) => (
                  <option key={r} value={r}>
                    {t.ranges[r]}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          {unavailable && (
            <p className="muted" data-testid="charts-unavailable">
              {t.chartsUnavailable(unavailable)}
            </p>
          )}
          {data && (
            <div className="chart-grid" aria-busy={false}>
              <Figure
                id="chart-transfers"
                title={t.transfersPerHour}
                summary={
                  t.transfersSummary(rangeName, sum(data.uploads), sum(data.downloads)) +
                  busiest(
                    data.hourly,
                    data.uploads.map((u, i) => u + data.downloads[i]!),
                  )
                }
                buckets={data.hourly}
                series={[
                  { label: t.uploads, values: data.uploads, color: '--chart-1' },
                  { label: t.downloads, values: data.downloads, color: '--chart-2' },
                ]}
                bars={false}
              />
              <Figure
                id="chart-bytes"
                title={t.bytesPerDay}
                summary={t.bytesSummary(rangeName, size(sum(data.uploadBytes)), size(sum(data.downloadBytes)))}
                buckets={data.daily}
                series={[
                  { label: t.uploaded, values: data.uploadBytes, color: '--chart-1' },
                  { label: t.downloaded, values: data.downloadBytes, color: '--chart-2' },
                ]}
                bars
                format={size}
              />
              <Figure
                id="chart-logins"
                title={t.failedLoginsPerHour}
                summary={t.failedLoginsSummary(rangeName, sum(data.failedLogins)) + busiest(data.hourly, data.failedLogins)}
                buckets={data.hourly}
                series={[{ label: t.failedLogins, values: data.failedLogins, color: '--chart-3' }]}
                bars
              />
            </div>
          )}
        </section>
      )}
      {can(session, 'view_users') && <TopUsers />}
    </>
  );
}
