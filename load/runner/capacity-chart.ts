import { escapeMarkup } from '../../core/report-text.ts';
import { passed, type Step } from './capacity-search.ts';

/**
 * The capacity charts as SVG, drawn in Node: the same drawing goes into the page (inline) and into
 * reports/capacity/capacity.svg, which a README or a ticket can show as it is. No text of a target reaches them:
 * they hold numbers and the fixed labels below.
 */

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1).replace(/\.0$/, '') : n.toFixed(2).replace(/\.?0+$/, ''));
const byRate = (steps: readonly Step[]) => [...steps].sort((a, b) => a.rate - b.rate);

interface Panel {
  top: number;
  height: number;
  y: (v: number) => number;
  ticks: number[];
}

const WIDTH = 720;
const LEFT = 64;
const RIGHT = 175;
const PLOT = WIDTH - LEFT - RIGHT;

function linearTicks(max: number): number[] {
  const raw = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((m) => m >= raw) ?? raw;
  return Array.from({ length: Math.floor(max / step) + 1 }, (_, i) => i * step);
}

function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e += 1) {
    for (const m of [1, 3]) {
      const v = m * 10 ** e;
      if (v >= min && v <= max) ticks.push(v);
    }
  }
  return ticks;
}

function axes(panel: Panel, label: string, xTicks: number[], x: (v: number) => number, xLabel: string | undefined): string {
  const bottom = panel.top + panel.height;
  const parts = [
    `<line x1="${LEFT}" y1="${bottom}" x2="${LEFT + PLOT}" y2="${bottom}" stroke="#555"/>`,
    `<line x1="${LEFT}" y1="${panel.top}" x2="${LEFT}" y2="${bottom}" stroke="#555"/>`,
    ...panel.ticks.map(
      (t) =>
        `<line x1="${LEFT}" y1="${panel.y(t).toFixed(1)}" x2="${LEFT + PLOT}" y2="${panel.y(t).toFixed(1)}" stroke="#eee"/><text x="${LEFT - 6}" y="${(panel.y(t) + 4).toFixed(1)}" text-anchor="end" font-size="11">${fmt(t)}</text>`,
    ),
    `<text x="14" y="${panel.top + panel.height / 2}" transform="rotate(-90 14 ${panel.top + panel.height / 2})" text-anchor="middle" font-size="12">${label}</text>`,
  ];
  if (xLabel !== undefined) {
    parts.push(
      ...xTicks.map((t) => `<text x="${x(t).toFixed(1)}" y="${bottom + 16}" text-anchor="middle" font-size="11">${fmt(t)}</text>`),
    );
    parts.push(`<text x="${LEFT + PLOT / 2}" y="${bottom + 34}" text-anchor="middle" font-size="12">${xLabel}</text>`);
  }
  return parts.join('');
}

/** A point: filled where the step held its SLOs, open where it missed; a triangle where the value is a lower bound. */
function point(cx: number, cy: number, color: string, held: boolean, lowerBound: boolean): string {
  const fill = held ? color : '#fff';
  if (lowerBound)
    return `<path class="point lower-bound" d="M${cx.toFixed(1)},${(cy - 5).toFixed(1)} l4.5,8 h-9 z" fill="${fill}" stroke="${color}"/>`;
  return `<circle class="point" cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" r="3.5" fill="${fill}" stroke="${color}"/>`;
}

const LATENCY_SERIES = [
  { name: 'p50', color: '#2a7', value: (s: Step) => s.latencyMs.p50 },
  { name: 'p95', color: '#e80', value: (s: Step) => s.latencyMs.p95 },
  { name: 'p99', color: '#c22', value: (s: Step) => s.latencyMs.p99 },
  { name: 'p99.9', color: '#707', value: (s: Step) => s.latencyMs.p999 },
] as const;

/**
 * Achieved throughput (top) and latency (bottom, log scale) against the rate asked, one point per step, the
 * repeats of a rate side by side. The dashed diagonal is throughput equal to the rate asked; the dashed line below
 * is the p95 SLO.
 */
export function throughputAndLatencySvg(
  steps: readonly Step[],
  options: { title: string; p95SloMs: number; capacity: number | null },
): string {
  const sorted = byRate(steps);
  const xMax = Math.max(1, ...sorted.map((s) => Math.max(s.rate, s.throughput))) * 1.05;
  const x = (v: number) => LEFT + (v / xMax) * PLOT;
  const xTicks = linearTicks(xMax);
  const top: Panel = { top: 40, height: 170, ticks: linearTicks(xMax), y: (v) => 40 + 170 - (v / xMax) * 170 };
  const latencies = sorted.flatMap((s) => LATENCY_SERIES.map((se) => se.value(s))).filter((v) => v > 0);
  const yMin = Math.max(0.1, Math.min(options.p95SloMs, ...latencies) / 1.5);
  const yMax = Math.max(options.p95SloMs, ...latencies) * 1.5;
  const bottom: Panel = {
    top: 250,
    height: 190,
    ticks: logTicks(yMin, yMax),
    y: (v) => 250 + 190 - ((Math.log10(Math.max(v, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * 190,
  };
  const height = 250 + 190 + 44;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="capacity-chart" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" role="img" aria-label="achieved throughput and latency against the arrival rate asked">`,
    `<rect width="${WIDTH}" height="${height}" fill="#fafafa"/>`,
    `<text x="${LEFT}" y="22" font-size="14" font-weight="bold">${escapeMarkup(options.title)}</text>`,
    axes(top, 'answered per second', xTicks, x, undefined),
    axes(bottom, 'latency (ms, log scale)', xTicks, x, 'arrival rate asked (per second)'),
    `<line class="asked" x1="${x(0)}" y1="${top.y(0)}" x2="${x(xMax).toFixed(1)}" y2="${top.y(xMax).toFixed(1)}" stroke="#999" stroke-dasharray="4 4"/>`,
    `<line class="slo" x1="${LEFT}" y1="${bottom.y(options.p95SloMs).toFixed(1)}" x2="${LEFT + PLOT}" y2="${bottom.y(options.p95SloMs).toFixed(1)}" stroke="#e80" stroke-dasharray="4 4"/>`,
  ];
  if (options.capacity !== null)
    parts.push(
      `<line class="capacity" x1="${x(options.capacity).toFixed(1)}" y1="${top.top}" x2="${x(options.capacity).toFixed(1)}" y2="${bottom.top + bottom.height}" stroke="#176117" stroke-dasharray="2 3"/>`,
    );
  const series = (name: string, color: string, panel: Panel, value: (s: Step) => number, bound: (s: Step) => boolean) => {
    const points = sorted.map((s) => ({ s, v: value(s) })).filter((p) => p.v > 0 || panel === top);
    parts.push(
      `<polyline class="series" data-series="${name}" points="${points.map((p) => `${x(p.s.rate).toFixed(1)},${panel.y(p.v).toFixed(1)}`).join(' ')}" fill="none" stroke="${color}" stroke-width="1.5"/>`,
    );
    for (const p of points) parts.push(point(x(p.s.rate), panel.y(p.v), color, passed(p.s), bound(p.s)));
  };
  series(
    'answered',
    '#36c',
    top,
    (s) => s.throughput,
    () => false,
  );
  for (const se of LATENCY_SERIES) series(se.name, se.color, bottom, se.value, (s) => s.latencyLowerBound);
  const legend = [
    ['#36c', 'answered (the mix)', 'solid'],
    ['#999', 'equal to the rate asked', 'dash'],
    ...LATENCY_SERIES.map((se) => [se.color, se.name, 'solid']),
    ['#e80', 'p95 SLO', 'dash'],
    ...(options.capacity !== null ? [['#176117', 'capacity', 'dot']] : []),
  ];
  legend.forEach(([color, name, style], i) => {
    const y = 52 + i * 18;
    parts.push(
      `<line x1="${LEFT + PLOT + 14}" y1="${y - 4}" x2="${LEFT + PLOT + 34}" y2="${y - 4}" stroke="${color}" stroke-width="2"${style === 'dash' ? ' stroke-dasharray="4 4"' : style === 'dot' ? ' stroke-dasharray="2 3"' : ''}/><text x="${LEFT + PLOT + 40}" y="${y}" font-size="11">${name}</text>`,
    );
  });
  const notes = ['filled: SLOs held', 'open: SLOs missed', '▲: at least (dropped', 'iterations capped it)'];
  notes.forEach((note, i) => {
    parts.push(`<text x="${LEFT + PLOT + 14}" y="${52 + (legend.length + 1) * 18 + i * 15}" font-size="11" fill="#555">${note}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** One step's window over time: the mix's p95 and p99 (log scale) and its throughput per slice. */
export function timelineSvg(step: Step, title: string): string {
  const points = step.timeline;
  const tMax = Math.max(1, step.durationSeconds);
  const x = (v: number) => LEFT + (v / tMax) * PLOT;
  const xTicks = linearTicks(tMax);
  const rateMax = Math.max(1, step.rate, ...points.map((p) => p.throughput)) * 1.1;
  const top: Panel = { top: 40, height: 90, ticks: linearTicks(rateMax), y: (v) => 40 + 90 - (v / rateMax) * 90 };
  const values = points.flatMap((p) => [p.p95, p.p99, p.max]).filter((v) => v > 0);
  const yMin = Math.max(0.1, Math.min(...values, 1) / 1.5);
  const yMax = Math.max(...values, 10) * 1.5;
  const bottom: Panel = {
    top: 160,
    height: 120,
    ticks: logTicks(yMin, yMax),
    y: (v) => 160 + 120 - ((Math.log10(Math.max(v, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * 120,
  };
  const slice = points.length > 1 ? points[1]!.at - points[0]!.at : tMax;
  const mid = (at: number) => x(Math.min(tMax, at + slice / 2));
  const height = 160 + 120 + 44;
  const line = (name: string, color: string, panel: Panel, value: (p: (typeof points)[number]) => number) =>
    `<polyline class="series" data-series="${name}" points="${points
      .filter((p) => value(p) > 0 || panel === top)
      .map((p) => `${mid(p.at).toFixed(1)},${panel.y(value(p)).toFixed(1)}`)
      .join(' ')}" fill="none" stroke="${color}" stroke-width="1.5"/>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="timeline-chart" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" role="img" aria-label="throughput and latency over the measured window">`,
    `<rect width="${WIDTH}" height="${height}" fill="#fafafa"/>`,
    `<text x="${LEFT}" y="22" font-size="13" font-weight="bold">${escapeMarkup(title)}</text>`,
    axes(top, 'answered/s', xTicks, x, undefined),
    axes(bottom, 'ms (log)', xTicks, x, 'seconds into the measured window (latency by start, throughput by answer)'),
    `<line x1="${LEFT}" y1="${top.y(step.rate).toFixed(1)}" x2="${LEFT + PLOT}" y2="${top.y(step.rate).toFixed(1)}" stroke="#999" stroke-dasharray="4 4"/>`,
    line('answered', '#36c', top, (p) => p.throughput),
    line('p95', '#e80', bottom, (p) => p.p95),
    line('p99', '#c22', bottom, (p) => p.p99),
    line('max', '#707', bottom, (p) => p.max),
    ...[
      ['#36c', 'answered/s'],
      ['#999', 'rate asked'],
      ['#e80', 'p95'],
      ['#c22', 'p99'],
      ['#707', 'max'],
    ].map(
      ([color, name], i) =>
        `<line x1="${LEFT + PLOT + 14}" y1="${48 + i * 18}" x2="${LEFT + PLOT + 34}" y2="${48 + i * 18}" stroke="${color}" stroke-width="2"${name === 'rate asked' ? ' stroke-dasharray="4 4"' : ''}/><text x="${LEFT + PLOT + 40}" y="${52 + i * 18}" font-size="11">${name}</text>`,
    ),
    '</svg>',
  ].join('\n');
}
