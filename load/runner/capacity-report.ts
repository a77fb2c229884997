import { reportSafe } from '../../harness/secrets/report-text.ts';
import type { Mix } from '../lib/mixes.ts';
import { crossedOf, passed, sloLabel, type Knee, type SearchSettings, type Step, type Verdict } from './capacity-search.ts';

/** capacity.json: everything index.html shows, for machines (schemas/capacity-report.schema.json). */
export interface CapacityReport {
  generatedAt: string;
  durationSeconds: number;
  target: string;
  mix: { name: string; operations: Mix };
  slos: Record<string, { value: number; setting: string; describe: string }>;
  search: SearchSettings & { vus: number; followShare: number; segments: number; warmupSeconds: number; ended: string };
  machine: { cpus: number; model: string; loadAverageAtStart: number; node: string };
  verdict: Verdict;
  knee: Knee;
  steps: Step[];
}

/** Text for HTML and XML: unsafe characters as \uXXXX (reportSafe), then the markup characters escaped. */
const esc = (text: string) => reportSafe(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const ms = (n: number | null) => (n === null ? '–' : `${n.toFixed(1)} ms`);
const byRate = (steps: readonly Step[]) => [...steps].sort((a, b) => a.rate - b.rate);

/**
 * The page: the verdict on top, then the charts (drawn by the page's own script from the data it carries, as
 * inline SVG; nothing is fetched), then a row per step. All text is escaped.
 */
export function capacityHtml(report: CapacityReport): string {
  const { verdict, knee } = report;
  const rows = byRate(report.steps).map((s) => `<tr class="${passed(s) ? 'held' : 'missed'}"><td>${s.rate}/s</td><td>${s.throughput.toFixed(0)}</td><td>${ms(s.latencyMs.p50)}</td><td>${ms(s.latencyMs.p95)}</td><td>${ms(s.latencyMs.p99)}</td><td>${(s.errorRate * 100).toFixed(2)}%</td><td>${ms(s.timeToFinalP95Ms)}</td><td>${s.dropped}</td><td>${s.vusPeak}/${s.vusMax}${s.vusExhausted ? ' (exhausted)' : ''}</td><td>${s.generatorCores.toFixed(2)}</td><td>${s.targetCpuPerRequestUs ?? '–'}</td><td>${passed(s) ? 'held' : esc(crossedOf(s).map((c) => `${sloLabel(c.slo)}: ${c.metric} ${c.expression} (${c.observed})`).join('; '))}</td></tr>`);
  const slos = Object.values(report.slos).map((s) => `<li>${esc(s.describe)}: <b>${esc(String(s.value))}</b> <code>${esc(s.setting)}</code></li>`);
  // JSON inside a script element: "<" is written as \u003c so no text of the data can close the element.
  const data = JSON.stringify(byRate(report.steps).map((s) => ({ rate: s.rate, throughput: s.throughput, p50: s.latencyMs.p50, p95: s.latencyMs.p95, p99: s.latencyMs.p99, errorRate: s.errorRate, timeToFinal: s.timeToFinalP95Ms, passed: passed(s) }))).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Capacity: ${esc(report.mix.name)}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}#verdict{font-size:1.3em;padding:.6em 1em;border-left:6px solid #176117;background:#f2f8f2}#verdict.none{border-color:#a11;background:#fbf0f0}#verdict.generator{border-color:#b70;background:#fdf6ea}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:last-child{text-align:left}tr.missed td{background:#fbf0f0}.charts{display:flex;flex-wrap:wrap;gap:2em}svg{background:#fafafa;border:1px solid #ddd}</style></head>
<body><h1>Capacity: ${esc(report.mix.name)}</h1>
<p id="verdict" class="${verdict.capacity === null ? 'none' : verdict.generatorLimited ? 'generator' : 'found'}">${esc(verdict.sentence)}</p>
<p id="knee">Knee: ${knee.above === null ? `not reached up to ${knee.below ?? '–'}/s` : `between ${knee.below ?? 'below the lowest rate'}/s and ${knee.above}/s`}; defined as ${esc(knee.definition)}.</p>
<p>Target: ${esc(report.target)}. Mix: ${esc(Object.entries(report.mix.operations).map(([op, share]) => `${op} ${share}`).join(', '))}. ${report.steps.length} steps of ${report.search.stepSeconds} s in ${report.durationSeconds} s (search ended: ${esc(report.search.ended)}${report.search.warmupSeconds > 0 ? `; after a warm-up of ${report.search.warmupSeconds} s up to ${report.search.startRate}/s, not judged` : ''}; a missed rate measured ${report.search.confirmMisses} more time${report.search.confirmMisses === 1 ? '' : 's'} before the miss was taken). Machine: ${report.machine.cpus} × ${esc(report.machine.model)}, load average ${report.machine.loadAverageAtStart} at the start, Node ${esc(report.machine.node)}; generated ${esc(report.generatedAt)}.</p>
<h2>SLOs</h2><ul>${slos.join('')}<li>every body valid against its schema</li></ul>
<h2>Per step</h2>
<div class="charts"><figure><figcaption>Latency (ms) against throughput (requests/s)</figcaption><svg id="latency-chart" width="540" height="320" role="img" aria-label="latency against throughput"></svg></figure>
<figure><figcaption>Error rate (%) and time to a final status, p95 (ms), against throughput</figcaption><svg id="errors-chart" width="540" height="320" role="img" aria-label="error rate and time to final status against throughput"></svg></figure></div>
<table id="steps"><tr><th>arrival rate</th><th>throughput (req/s)</th><th>p50</th><th>p95</th><th>p99</th><th>errors</th><th>time to final p95</th><th>dropped</th><th>VUs busy/allocated</th><th>k6 CPU (cores)</th><th>target CPU/request (µs)</th><th>SLOs</th></tr>${rows.join('')}</table>
<script type="application/json" id="data">${data}</script>
<script>
(function () {
  var steps = JSON.parse(document.getElementById('data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  function el(parent, name, attrs, text) {
    var node = document.createElementNS(NS, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    parent.appendChild(node);
    return node;
  }
  function chart(id, series) {
    var svg = document.getElementById(id), W = 540, H = 320, L = 56, R = 110, T = 14, B = 40;
    var points = steps.filter(function (s) { return s.throughput > 0; });
    var xs = points.map(function (s) { return s.throughput; });
    var ys = [];
    series.forEach(function (se) { points.forEach(function (s) { var v = se.value(s); if (v !== null) ys.push(v); }); });
    var xMax = Math.max.apply(null, xs.concat([1])) * 1.05, yMax = Math.max.apply(null, ys.concat([1])) * 1.1;
    var x = function (v) { return L + (v / xMax) * (W - L - R); }, y = function (v) { return H - B - (v / yMax) * (H - T - B); };
    el(svg, 'line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#555' });
    el(svg, 'line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#555' });
    for (var i = 0; i <= 4; i++) {
      el(svg, 'text', { x: L - 6, y: y(yMax * i / 4) + 4, 'text-anchor': 'end', 'font-size': 11 }, (yMax * i / 4).toFixed(yMax < 10 ? 1 : 0));
      el(svg, 'text', { x: x(xMax * i / 4), y: H - B + 16, 'text-anchor': 'middle', 'font-size': 11 }, (xMax * i / 4).toFixed(0));
    }
    el(svg, 'text', { x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 12 }, 'requests/s');
    series.forEach(function (se, n) {
      var pts = points.filter(function (s) { return se.value(s) !== null; });
      if (pts.length === 0) return;
      el(svg, 'polyline', { points: pts.map(function (s) { return x(s.throughput) + ',' + y(se.value(s)); }).join(' '), fill: 'none', stroke: se.color, 'stroke-width': 2, 'class': 'series' });
      pts.forEach(function (s) { el(svg, 'circle', { cx: x(s.throughput), cy: y(se.value(s)), r: 3.5, fill: s.passed ? se.color : '#fff', stroke: se.color, 'class': 'point' }); });
      el(svg, 'text', { x: W - R + 8, y: T + 14 + n * 16, fill: se.color, 'font-size': 12 }, se.name);
    });
  }
  chart('latency-chart', [
    { name: 'p50', color: '#2a7', value: function (s) { return s.p50; } },
    { name: 'p95', color: '#e80', value: function (s) { return s.p95; } },
    { name: 'p99', color: '#c22', value: function (s) { return s.p99; } },
  ]);
  chart('errors-chart', [
    { name: 'errors %', color: '#c22', value: function (s) { return s.errorRate * 100; } },
    { name: 'to final p95', color: '#36c', value: function (s) { return s.timeToFinal; } },
  ]);
})();
</script>
<p>Open circles are rates that missed an SLO.</p></body></html>
`;
}

/** JUnit for CI: one test case per SLO threshold at the capacity found (at the lowest rate when none held). */
export function capacityJunit(report: CapacityReport): string {
  const at = report.steps.find((s) => s.rate === report.verdict.capacity) ?? byRate(report.steps)[0];
  const thresholds = at?.thresholds ?? [];
  const failures = thresholds.filter((t) => !t.passed).length;
  const name = `capacity ${report.mix.name} at ${at?.rate ?? 0}/s`;
  const cases = thresholds.map((t) => `    <testcase classname="${esc(`capacity.${report.mix.name}`)}" name="${esc(`${sloLabel(t.slo)}: ${t.metric} ${t.expression}`)}">${t.passed ? `<system-out>${esc(t.observed)}</system-out>` : `\n      <failure message="${esc(`SLO missed at ${at!.rate}/s: ${t.metric} ${t.expression}`)}">${esc(t.observed)}</failure>\n    `}</testcase>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="MoMo capacity">`,
    `  <testsuite name="${esc(name)}" tests="${cases.length}" failures="${failures}" time="${report.durationSeconds.toFixed(1)}">`,
    `    <properties><property name="verdict" value="${esc(report.verdict.sentence)}"/></properties>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
