import { useEffect, useMemo, useRef, useState } from 'react';
import { consolePath, consoleRequest } from '../api';
import { Empty, ErrorNote, Loading } from '../ui';
import { Chart } from './Chart';

export interface Sample {
  at: number;
  requestsPerSec: number;
  errorsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  signInsPerMin: number;
  failedSignInsPerMin: number;
  commitsPerSec: number;
  listeners: number;
  webChannelSessions: number;
  rssMb: number;
}

const hourMs = 60 * 60 * 1000;

/** Reads the ring of samples once, then only what is new, every interval the server samples at. */
export function MetricsPage() {
  const [samples, setSamples] = useState<Sample[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [paused, setPaused] = useState(false);
  const [intervalMs, setIntervalMs] = useState(5000);
  const last = useRef(0);

  useEffect(() => {
    if (paused) return;
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function poll() {
      let interval = 5000;
      try {
        const answer = await consoleRequest<{ intervalMs: number; samples: Sample[] }>(consolePath(`metrics${last.current ? `?since=${last.current}` : ''}`));
        if (!current) return;
        interval = answer.intervalMs > 0 ? answer.intervalMs : interval;
        setIntervalMs(interval);
        const fresh = answer.samples.filter((sample) => sample.at > last.current);
        if (fresh.length) last.current = fresh[fresh.length - 1]!.at;
        setSamples((old) => {
          const merged = [...(old ?? []), ...fresh];
          const cutoff = Date.now() - hourMs;
          return merged.filter((sample) => sample.at >= cutoff);
        });
        setError(null);
      } catch (caught) {
        if (current) setError(caught);
      }
      if (current) timer = setTimeout(() => void poll(), interval);
    }
    void poll();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [paused]);

  const column = (pick: (sample: Sample) => number) => (samples ?? []).map(pick);
  const times = useMemo(() => (samples ?? []).map((sample) => sample.at / 1000), [samples]);
  const charts = useMemo(
    () => [
      { name: 'Requests', title: 'Requests per second', unit: '/s', series: [{ label: 'requests', color: '#2563eb' }, { label: 'errors', color: '#dc2626' }], data: [times, column((s) => s.requestsPerSec), column((s) => s.errorsPerSec)] },
      { name: 'Latency', title: 'Latency (milliseconds)', unit: 'ms', series: [{ label: 'p50', color: '#16a34a' }, { label: 'p99', color: '#ea580c' }], data: [times, column((s) => s.p50Ms), column((s) => s.p99Ms)] },
      { name: 'Sign-ins', title: 'Sign-ins per minute', unit: '/min', series: [{ label: 'sign-ins', color: '#7c3aed' }, { label: 'failed', color: '#dc2626' }], data: [times, column((s) => s.signInsPerMin), column((s) => s.failedSignInsPerMin)] },
      { name: 'Database', title: 'Database: commits per second, open listeners and sessions', unit: '', series: [{ label: 'commits', color: '#0891b2', unit: '/s' }, { label: 'listeners', color: '#65a30d', unit: 'open' }, { label: 'WebChannel sessions', color: '#a16207', unit: 'open' }], data: [times, column((s) => s.commitsPerSec), column((s) => s.listeners), column((s) => s.webChannelSessions)] },
      { name: 'Memory', title: 'Memory (megabytes)', unit: 'MB', series: [{ label: 'RSS', color: '#475569' }], data: [times, column((s) => s.rssMb)] },
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [samples, times],
  );

  return (
    <section>
      <h1>Metrics</h1>
      <div className="console-row">
        <button type="button" onClick={() => setPaused(!paused)} aria-pressed={paused}>
          {paused ? 'Resume live updates' : 'Pause live updates'}
        </button>
        <span className="console-muted">
          The last hour, sampled every {intervalMs >= 1000 ? `${intervalMs / 1000} s` : `${intervalMs} ms`}. Prometheus scrapers read <code>/metrics</code>.
        </span>
      </div>
      <ErrorNote error={error} />
      {samples === null && !error && <Loading what="metrics" />}
      {samples !== null && samples.length === 0 && <Empty>No samples yet: the first arrives one sampling interval after the server starts.</Empty>}
      {samples !== null && samples.length > 0 && (
        <div className="console-charts">
          {charts.map((chart) => (
            <Chart key={chart.name} name={chart.name} title={chart.title} unit={chart.unit} series={chart.series} data={chart.data} />
          ))}
        </div>
      )}
    </section>
  );
}
