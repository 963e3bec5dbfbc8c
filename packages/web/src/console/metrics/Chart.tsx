import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  color: string;
  /** The series' own unit, when the chart's does not fit it. */
  unit?: string;
}

/**
 * One uPlot line chart. `data` is [times in seconds, ...one array per series]; the chart is made
 * once and fed new data, and follows its box's width (390 px phones to wide screens).
 */
export function Chart({ name, title, series, data, unit }: { name: string; title: string; series: Series[]; data: number[][]; unit: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const options: uPlot.Options = {
      title,
      width: Math.max(240, element.clientWidth),
      height: 200,
      series: [{}, ...series.map((one) => ({ label: one.label, stroke: one.color, width: 2, value: (_: uPlot, value: number | null) => (value == null ? '—' : `${+value.toFixed(2)} ${one.unit ?? unit}`) }))],
      // The y axis says its unit (the title says it in words too).
      axes: [{}, { size: 64, ...(unit ? { label: unit, labelSize: 18 } : {}), values: (_: uPlot, ticks: number[]) => ticks.map((tick) => `${+tick.toFixed(2)}${unit ? ` ${unit}` : ''}`) }],
      scales: { y: { range: (_u, min, max) => [0, Math.max(1, max, min)] } },
    };
    const made = new uPlot(options, data as uPlot.AlignedData, element);
    plot.current = made;
    const observer = new ResizeObserver(() => made.setSize({ width: Math.max(240, element.clientWidth), height: 200 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      made.destroy();
      plot.current = null;
    };
    // The chart is rebuilt only when its shape changes; new points go through setData below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [title, unit, series.map((one) => one.label).join('|')]);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData);
  }, [data]);

  // What the chart holds, for readers that cannot see the canvas (screen readers, tests): each series' peak.
  const peaks = series.map((one, index) => `${one.label} peak ${Math.max(0, ...(data[index + 1] ?? []))}${unit}`).join(', ');
  return <div className="console-chart" ref={box} role="img" aria-label={`${title}: ${data[0]?.length ?? 0} points; ${peaks}`} data-testid="metrics-chart" data-title={name} data-unit={unit} data-points={data[0]?.length ?? 0} data-peak={Math.max(0, ...(data[1] ?? []))} />;
}
