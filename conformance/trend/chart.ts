/**
 * The trend page's line charts, as inline SVG: one point a run, runs evenly spaced on the x axis and named by
 * their date and time, a y axis from 0 with ticks at round numbers, gridlines, and a title on each axis. This
 * module only draws: every string it is given is markup already (the page escapes what came from a target).
 */

/** One line of a chart: a value a run (undefined where the run has none), and each point's tooltip. */
export interface Series {
  /** The CSS class of its line and points (the page's legend shows the same colour). */
  className: string;
  values: readonly (number | undefined)[];
  /** The tooltip of the point of run `index`, as markup. */
  title: (index: number) => string;
}

export interface Chart {
  /** What the chart shows, for a screen reader (markup). */
  description: string;
  /** The y axis's title, with its unit: "response time (ms)". */
  yTitle: string;
  /** Counts are whole: their ticks never fall between two integers. */
  whole?: boolean;
  /** Each run's name on the x axis, oldest first: "2026-11-25 14:03" (the date and the time go on two lines). */
  runs: readonly string[];
  series: readonly Series[];
}

const WIDTH = 640;
const HEIGHT = 220;
/** Room for the y ticks and title on the left, and for half of the last run's name on the right. */
const PAD = { left: 64, right: 40, top: 12, bottom: 56 };
const PLOT = { width: WIDTH - PAD.left - PAD.right, height: HEIGHT - PAD.top - PAD.bottom };
/** The room a run's name takes on the x axis ("2026-11-25" at 10px, and a gap): closer names are thinned out. */
const RUN_NAME_ROOM = 68;
/** How many y ticks a chart aims at: enough to read a value off, few enough to stay quiet. */
const Y_TICKS = 5;

export function lineChart(chart: Chart): string {
  const n = chart.runs.length;
  const ticks = niceTicks(Math.max(0, ...chart.series.flatMap((s) => s.values.filter((v): v is number => v !== undefined))), {
    whole: chart.whole,
  });
  const top = ticks.at(-1)!;
  const x = (i: number) => PAD.left + (n <= 1 ? PLOT.width / 2 : (i * PLOT.width) / (n - 1));
  const y = (value: number) => PAD.top + PLOT.height * (1 - value / top);
  const bottom = PAD.top + PLOT.height;
  const named = namedRuns(n);
  const yAxis = ticks
    .map(
      (t) =>
        `<line class="grid" x1="${PAD.left}" y1="${f(y(t))}" x2="${PAD.left + PLOT.width}" y2="${f(y(t))}"/><text class="tick" x="${PAD.left - 6}" y="${f(y(t))}" dy=".32em" text-anchor="end">${t}</text>`,
    )
    .join('');
  const xAxis = named
    .map((i) => {
      const [date, time = ''] = splitOnce(chart.runs[i]!, ' ');
      return `<line class="grid" x1="${f(x(i))}" y1="${PAD.top}" x2="${f(x(i))}" y2="${bottom}"/><line class="axis" x1="${f(x(i))}" y1="${bottom}" x2="${f(x(i))}" y2="${bottom + 4}"/><text class="tick" x="${f(x(i))}" y="${bottom + 15}" text-anchor="middle">${date}<tspan x="${f(x(i))}" dy="1.2em">${time}</tspan></text>`;
    })
    .join('');
  const lines = chart.series
    .map((s) => {
      const points = s.values.flatMap((v, i) => (v === undefined ? [] : [{ i, v }]));
      const coords = points.map((p) => `${f(x(p.i))},${f(y(p.v))}`).join(' ');
      const dots = points
        .map((p) => `<circle class="${s.className}" cx="${f(x(p.i))}" cy="${f(y(p.v))}" r="3"><title>${s.title(p.i)}</title></circle>`)
        .join('');
      return `<polyline class="${s.className}" points="${coords}"/>${dots}`;
    })
    .join('');
  return `<svg role="img" aria-label="${chart.description}" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">
${yAxis}
${xAxis}
<line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${bottom}"/>
<line class="axis" x1="${PAD.left}" y1="${bottom}" x2="${PAD.left + PLOT.width}" y2="${bottom}"/>
<text class="axis-title" transform="translate(14 ${f(PAD.top + PLOT.height / 2)}) rotate(-90)" text-anchor="middle">${chart.yTitle}</text>
<text class="axis-title" x="${f(PAD.left + PLOT.width / 2)}" y="${HEIGHT - 4}" text-anchor="middle">run</text>
${lines}
</svg>`;
}

/**
 * The y ticks from 0 up to the first round number at or above `max`, in steps of 1, 2 or 5 times a power of
 * ten (7 → 0 2 4 6 8; 130 → 0 50 100 150; 2400 → 0 500 … 2500). A chart of nothing but zeros still gets an
 * axis (0 to 1), so its line lies on the floor instead of nowhere.
 */
export function niceTicks(max: number, { whole = false } = {}): number[] {
  const reach = Number.isFinite(max) && max > 0 ? max : 1;
  const rough = reach / Y_TICKS;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(whole ? 1 : 0, [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough)!);
  // Written with the step's decimals, so that 3 × 0.1 reads 0.3, not 0.30000000000000004.
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const steps = Math.ceil(reach / step - 1e-9);
  return Array.from({ length: steps + 1 }, (_, i) => Number((i * step).toFixed(decimals)));
}

/**
 * Which of `n` runs get their name under the x axis: the last run always (it is the one a reader came for),
 * then every k-th before it, k as small as keeps two names apart.
 */
export function namedRuns(n: number): number[] {
  if (n <= 1) return n === 1 ? [0] : [];
  const every = Math.max(1, Math.ceil((RUN_NAME_ROOM * (n - 1)) / PLOT.width));
  const named: number[] = [];
  for (let i = n - 1; i >= 0; i -= every) named.unshift(i);
  return named;
}

function splitOnce(value: string, separator: string): [string, string?] {
  const at = value.indexOf(separator);
  return at < 0 ? [value] : [value.slice(0, at), value.slice(at + separator.length)];
}

/** A coordinate, to a tenth of a pixel. */
function f(value: number): string {
  return value.toFixed(1);
}

/** The charts' look, for the page's stylesheet. */
export const CHART_STYLE = `
svg .axis { stroke: #8c8f94; }
svg .grid { stroke: #e6e7e8; }
svg .tick { font-size: 10px; fill: #50575e; }
svg .axis-title { font-size: 11px; fill: #1d2327; }
svg polyline { fill: none; stroke-width: 2; }
`;
