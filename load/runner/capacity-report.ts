import { renderJunit, type JunitCase } from '../../core/junit.ts';
import type { Mix } from '../lib/mixes.ts';
import {
  crossedOf,
  passed,
  sloLabel,
  type Knee,
  type Saturation,
  type SearchSettings,
  type Step,
  type Verdict,
} from './capacity-search.ts';
import { escapeMarkup as esc } from '../../core/report-text.ts';
import { throughputAndLatencySvg, timelineSvg } from './capacity-chart.ts';

/** capacity.json: everything index.html shows, for machines (schemas/capacity-report.schema.json). */
export interface CapacityReport {
  generatedAt: string;
  durationSeconds: number;
  target: string;
  mix: { name: string; operations: Mix };
  slos: Record<string, { value: number; setting: string; describe: string }>;
  search: SearchSettings & {
    vus: number;
    followShare: number;
    segments: number;
    warmupSeconds: number;
    rampSeconds: number;
    ended: string;
  };
  machine: { cpus: number; model: string; loadAverageAtStart: number; node: string };
  verdict: Verdict;
  knee: Knee;
  saturation: Saturation;
  steps: Step[];
}

const ms = (n: number | null, lowerBound = false) => (n === null ? '–' : `${lowerBound ? '≥ ' : ''}${n.toFixed(1)} ms`);
const perSecond = (n: number) => n.toFixed(n < 10 ? 1 : 0);
const byRate = (steps: readonly Step[]) => [...steps].sort((a, b) => a.rate - b.rate);

/** The chart of reports/capacity/capacity.svg: achieved throughput and latency against the rate asked. */
export function capacitySvg(report: CapacityReport): string {
  return `${throughputAndLatencySvg(report.steps, { title: `Capacity of ${report.mix.name}: ${report.verdict.capacity === null ? 'no rate held' : `${report.verdict.capacity}/s`}`, p95SloMs: report.slos.p95Ms?.value ?? 250, capacity: report.verdict.capacity })}\n`;
}

/** The steps whose window the page draws over time: the capacity, and the first rate above it that missed. */
function timelineSteps(report: CapacityReport): { step: Step; title: string }[] {
  const { capacity } = report.verdict;
  const at = report.steps.filter((s) => s.rate === capacity && passed(s)).at(-1);
  const missed = byRate(report.steps).find((s) => !passed(s) && (capacity === null || s.rate > capacity));
  return [
    ...(at ? [{ step: at, title: `${at.rate}/s, the capacity: over its window` }] : []),
    ...(missed
      ? [{ step: missed, title: `${missed.rate}/s, the first rate missed${capacity === null ? '' : ' above it'}: over its window` }]
      : []),
  ];
}

function operationRows(step: Step): string {
  return Object.entries(step.operations)
    .map(
      ([op, o]) =>
        `<tr><td>${esc(op)}</td><td>${o.answered}</td><td>${perSecond(o.throughput)}</td><td>${o.started}</td><td>${o.failed}</td>${(['p50', 'p90', 'p95', 'p99', 'p999', 'max'] as const).map((k) => `<td>${ms(o.latencyMs[k], step.latencyLowerBound)}</td>`).join('')}</tr>`,
    )
    .join('');
}

/**
 * The page: the verdict on top, what the figures mean, the chart of throughput and latency against the rate asked,
 * the windows of the capacity and of the first miss over time, then a row per step with its operations. Drawn in
 * Node as inline SVG: the page runs no script and fetches nothing. All text is escaped.
 */
export function capacityHtml(report: CapacityReport): string {
  const { verdict, knee, saturation } = report;
  const rows = byRate(report.steps).map((s) => {
    const bound = s.latencyLowerBound;
    return `<tr class="${passed(s) ? 'held' : 'missed'}"><td>${s.rate}/s</td><td>${perSecond(s.throughput)}</td><td>${perSecond(s.requestsPerSecond)}</td><td>${ms(s.latencyMs.p50, bound)}</td><td>${ms(s.latencyMs.p95, bound)}</td><td>${ms(s.latencyMs.p99, bound)}</td><td>${ms(s.latencyMs.p999, bound)}</td><td>${ms(s.latencyMs.max, bound)}</td><td>${(s.errorRate * 100).toFixed(2)}%</td><td>${ms(s.timeToFinalP95Ms)}</td><td>${s.dropped}</td><td>${s.vusPeak}/${s.vusMax}${s.vusExhausted ? ' (exhausted)' : ''}</td><td>${s.generatorCores.toFixed(2)}</td><td>${s.targetCpuPerRequestUs ?? '–'}</td><td>${
      passed(s)
        ? 'held'
        : esc(
            crossedOf(s)
              .map((c) => `${sloLabel(c.slo)}: ${c.metric} ${c.expression} (${c.observed})`)
              .join('; '),
          )
    }</td></tr>
<tr class="operations"><td colspan="15"><details><summary>${s.rate}/s: each operation over the ${s.durationSeconds.toFixed(1)} s window</summary><table><tr><th>operation</th><th>answered</th><th>per second</th><th>started</th><th>not as documented</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th></tr>${operationRows(s)}</table></details></td></tr>`;
  });
  const slos = Object.values(report.slos).map(
    (s) => `<li>${esc(s.describe)}: <b>${esc(String(s.value))}</b> <code>${esc(s.setting)}</code></li>`,
  );
  const kneeText =
    knee.above === null
      ? `not reached up to ${knee.below ?? '–'}/s`
      : `between ${knee.below ?? 'below the lowest rate'}/s and ${knee.above}/s, ${knee.confirmed ? 'confirmed by a second measurement' : 'seen in one measurement only'}`;
  const saturationText =
    saturation.fellBehindAt === null
      ? `kept up with every rate measured (up to ${saturation.keptUpTo ?? '–'}/s)`
      : `stops rising between ${saturation.keptUpTo ?? 'below the lowest rate'}/s and ${saturation.fellBehindAt}/s asked`;
  const lowerBounds = report.steps.some((s) => s.latencyLowerBound);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Capacity: ${esc(report.mix.name)}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222;max-width:1300px}#verdict{font-size:1.3em;padding:.6em 1em;border-left:6px solid #176117;background:#f2f8f2}#verdict.none{border-color:#a11;background:#fbf0f0}#verdict.generator{border-color:#b70;background:#fdf6ea}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}td:last-child{text-align:left;white-space:normal}tr.missed td{background:#fbf0f0}tr.operations>td{border:none;padding:0 8px;text-align:left;background:#fff}.charts{display:flex;flex-wrap:wrap;gap:2em}svg{border:1px solid #ddd}</style></head>
<body><h1>Capacity: ${esc(report.mix.name)}</h1>
<p id="verdict" class="${verdict.capacity === null ? 'none' : verdict.generatorLimited ? 'generator' : 'found'}">${esc(verdict.sentence)}</p>
<p id="throughput">Throughput: at most ${perSecond(saturation.peakThroughput)}/s of the mix answered inside a window${saturation.peakAtRate === null ? '' : ` (at ${saturation.peakAtRate}/s asked)`}; it ${saturationText}; defined as ${esc(saturation.definition)}.</p>
<p id="knee">Knee: ${kneeText}; defined as ${esc(knee.definition)}.</p>
<p>How each step is measured: ${report.search.vus} VUs and a pool of tokens are ready before the load (tokens come from <code>setup()</code>, so no VU fetches one while measured); the rate is reached in a ramp of ${report.search.rampSeconds} s that is not measured; then it is held for ${report.search.stepSeconds} s, the window. Throughput is the requests answered inside the window, divided by it; latency and errors are those of the requests started inside it. ${lowerBounds ? 'Latency marked ≥ is a lower bound: iterations were dropped in that window (every VU busy, or k6 late), and the requests that would have waited longest were never made. ' : ''}Target: ${esc(report.target)}. Mix: ${esc(
    Object.entries(report.mix.operations)
      .map(([op, share]) => `${op} ${share}`)
      .join(', '),
  )}. ${report.steps.length} steps in ${report.durationSeconds} s (search ended: ${esc(report.search.ended)}${report.search.warmupSeconds > 0 ? `; after a warm-up of ${report.search.warmupSeconds} s up to ${report.search.startRate}/s, not judged` : ''}; a missed rate measured ${report.search.confirmMisses} more time${report.search.confirmMisses === 1 ? '' : 's'} before the miss was taken). Machine: ${report.machine.cpus} × ${esc(report.machine.model)}, load average ${report.machine.loadAverageAtStart} at the start, Node ${esc(report.machine.node)}; generated ${esc(report.generatedAt)}.</p>
<h2>SLOs</h2><ul>${slos.join('')}<li>every body valid against its schema</li></ul>
<h2>Throughput and latency against the rate asked</h2>
<figure id="capacity-chart">${capacitySvg(report)}</figure>
<h2>Over each window</h2>
<div class="charts">${timelineSteps(report)
    .map(({ step, title }) => `<figure class="timeline">${timelineSvg(step, title)}</figure>`)
    .join('')}</div>
<h2>Per step</h2>
<table id="steps"><tr><th>rate asked</th><th>answered/s (the mix)</th><th>every request/s</th><th>p50</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th><th>time to final p95</th><th>dropped</th><th>VUs busy/allocated</th><th>k6 CPU (cores)</th><th>target CPU/request (µs)</th><th>SLOs</th></tr>${rows.join('')}</table>
</body></html>
`;
}

/** JUnit for CI: one test case per SLO threshold at the capacity found (at the lowest rate when none held). */
export function capacityJunit(report: CapacityReport): string {
  const at = report.steps.find((s) => s.rate === report.verdict.capacity) ?? byRate(report.steps)[0];
  const cases: JunitCase[] = (at?.thresholds ?? []).map((t) => ({
    classname: `capacity.${report.mix.name}`,
    name: `${sloLabel(t.slo)}: ${t.metric} ${t.expression}`,
    ...(t.passed
      ? { output: t.observed }
      : { failure: { message: `SLO missed at ${at!.rate}/s: ${t.metric} ${t.expression}`, text: t.observed } }),
  }));
  const suite = {
    name: `capacity ${report.mix.name} at ${at?.rate ?? 0}/s`,
    cases,
    timeSeconds: report.durationSeconds,
    properties: { verdict: report.verdict.sentence },
  };
  return renderJunit('MoMo capacity', [suite]);
}
