import { escape } from '../certification/html.ts';
import { reportSafe } from '../../harness/secrets/report-text.ts';
import type { History, HistoryRecord } from './history.ts';

/** How a requirement's verdict reads across nights: passed, failed, flaky, not tested, or not checked that night. */
type Standing = 'passed' | 'failed' | 'flaky' | 'not tested' | 'not checked';

const STANDING: Record<string, Standing> = {
  PASS: 'passed', WARN: 'passed', WAIVED: 'passed', FAIL: 'failed', FLAKY: 'flaky', 'NOT TESTED': 'not tested', 'NOT APPLICABLE': 'not checked',
};
const STANDINGS: readonly Standing[] = ['passed', 'failed', 'flaky', 'not tested', 'not checked'];

/**
 * reports/trend/index.html: the history of runs on one page, with nothing fetched and no script. For each
 * requirement, the nights it passed, failed, was flaky or was not tested; for each operation, p50 and p95 of
 * its response times across the nights, as inline SVG written into the page. Every text that came from a
 * target (its description, operation names in a hand-edited history) is escaped.
 */
export function renderTrend(history: History, file: string): string {
  const runs = [...history.records].sort((a, b) => a.at.localeCompare(b.at));
  const targets = [...new Set(runs.map((r) => r.target))];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>MoMo conformance trend: ${runs.length} runs</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>MoMo conformance trend</h1>
<p class="meta">${runs.length} run${runs.length === 1 ? '' : 's'} of <code>${text(file)}</code>${runs.length > 0 ? `, from ${text(runs[0]!.at)} to ${text(runs.at(-1)!.at)}` : ''} · target${targets.length === 1 ? '' : 's'} ${targets.map((t) => `<b>${text(t)}</b>`).join(', ')}</p>
</header>
<main>
${corruptSection(history)}
${runsSection(runs)}
${requirementsSection(runs)}
${operationsSection(runs)}
</main>
</body>
</html>
`;
}

function text(value: string): string {
  return escape(reportSafe(value));
}

/** A night's short name: its date and time in UTC. */
function night(run: HistoryRecord): string {
  return run.at.slice(0, 16).replace('T', ' ');
}

function corruptSection(history: History): string {
  if (history.corrupt.length === 0) return '';
  return `<section id="corrupt" class="warning"><h2>Lines that are not run records</h2><p>They are kept in the file as they are, and left out of this page.</p><ul>${history.corrupt
    .map(({ line, why }) => `<li>line ${line}: ${text(why)}</li>`)
    .join('')}</ul></section>`;
}

function runsSection(runs: readonly HistoryRecord[]): string {
  const rows = runs
    .map((r) => `<tr><td>${text(night(r))}</td><td>${text(r.target)}</td><td>${text(r.profile)}</td><td class="outcome-${r.exitCode}">${text(r.outcome)} (${r.exitCode})</td><td class="n">${(r.durationMs / 1000).toFixed(1)} s</td></tr>`)
    .join('');
  return `<section id="runs"><h2>Runs</h2><table><thead><tr><th>Night (UTC)</th><th>Target</th><th>Profile</th><th>Outcome</th><th>Run time</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function requirementsSection(runs: readonly HistoryRecord[]): string {
  const ids = [...new Set(runs.flatMap((r) => Object.keys(r.requirements)))].sort();
  const head = runs.map((r) => `<th class="night" title="${text(night(r))}">${text(r.at.slice(5, 10))}</th>`).join('');
  const rows = ids.map((id) => {
    const standings = runs.map((r) => STANDING[r.requirements[id] ?? 'NOT APPLICABLE'] ?? 'not checked');
    const cells = standings.map((s, i) => `<td class="cell s-${cssName(s)}" title="${text(night(runs[i]!))}: ${s}"></td>`).join('');
    const counts = STANDINGS.filter((s) => s !== 'not checked').map((s) => `<td class="n count-${cssName(s)}">${standings.filter((x) => x === s).length}</td>`).join('');
    return `<tr data-requirement="${text(id)}"><td class="id">${text(id)}</td>${counts}${cells}</tr>`;
  });
  return `<section id="requirements"><h2>Requirements, night by night</h2>
<p class="legend">${STANDINGS.map((s) => `<span class="cell s-${cssName(s)}"></span> ${s}`).join(' ')}</p>
<div class="scroll"><table><thead><tr><th>Requirement</th><th>passed</th><th>failed</th><th>flaky</th><th>not tested</th>${head}</tr></thead><tbody>${rows.join('\n')}</tbody></table></div>
</section>`;
}

function operationsSection(runs: readonly HistoryRecord[]): string {
  const operations = [...new Set(runs.flatMap((r) => Object.keys(r.operations)))].sort();
  return `<section id="operations"><h2>Response times by operation</h2>
<p class="legend"><span class="key p50"></span> p50 <span class="key p95"></span> p95, in ms, per night</p>
${operations.map((operation) => operationChart(operation, runs)).join('\n')}
</section>`;
}

const WIDTH = 640;
const HEIGHT = 160;
const PAD = { left: 48, right: 12, top: 12, bottom: 24 };

/** One operation's p50 and p95 across the nights, as an SVG line chart with a point (and its value) per night. */
function operationChart(operation: string, runs: readonly HistoryRecord[]): string {
  const points = runs.map((r, i) => ({ i, run: r, times: r.operations[operation] })).filter((p) => p.times !== undefined);
  const max = Math.max(1, ...points.map((p) => p.times!.p95));
  const x = (i: number) => PAD.left + (runs.length === 1 ? (WIDTH - PAD.left - PAD.right) / 2 : (i * (WIDTH - PAD.left - PAD.right)) / (runs.length - 1));
  const y = (ms: number) => PAD.top + (HEIGHT - PAD.top - PAD.bottom) * (1 - ms / max);
  const line = (key: 'p50' | 'p95') => {
    const coords = points.map((p) => `${x(p.i).toFixed(1)},${y(p.times![key]).toFixed(1)}`).join(' ');
    const dots = points.map((p) => `<circle class="${key}" cx="${x(p.i).toFixed(1)}" cy="${y(p.times![key]).toFixed(1)}" r="3"><title>${text(night(p.run))}: ${key} ${p.times![key]} ms (${p.times!.count} responses)</title></circle>`).join('');
    return `<polyline class="${key}" points="${coords}"/>${dots}`;
  };
  const rows = points.map((p) => `<tr><td>${text(night(p.run))}</td><td class="n">${p.times!.p50}</td><td class="n">${p.times!.p95}</td><td class="n">${p.times!.count}</td></tr>`).join('');
  return `<figure class="operation" data-operation="${text(operation)}">
<figcaption>${text(operation)}</figcaption>
<svg role="img" aria-label="${text(operation)}: p50 and p95 response times per night" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">
<line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${HEIGHT - PAD.bottom}"/>
<line class="axis" x1="${PAD.left}" y1="${HEIGHT - PAD.bottom}" x2="${WIDTH - PAD.right}" y2="${HEIGHT - PAD.bottom}"/>
<text class="label" x="${PAD.left - 4}" y="${PAD.top + 4}" text-anchor="end">${max}</text>
<text class="label" x="${PAD.left - 4}" y="${HEIGHT - PAD.bottom}" text-anchor="end">0</text>
${line('p95')}${line('p50')}
</svg>
<details><summary>Values</summary><table><thead><tr><th>Night (UTC)</th><th>p50 ms</th><th>p95 ms</th><th>responses</th></tr></thead><tbody>${rows}</tbody></table></details>
</figure>`;
}

function cssName(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

const STYLE = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2327; background: #f6f7f7; }
header { background: #1d2327; color: #fff; padding: 1rem 2rem; }
header h1 { margin: 0 0 .3rem; font-size: 1.6rem; }
header .meta { margin: .15rem 0; color: #c3c4c7; }
main { padding: 1rem 2rem 3rem; }
h2 { border-bottom: 2px solid #dcdcde; padding-bottom: .2rem; }
table { border-collapse: collapse; background: #fff; margin: .5rem 0 1rem; }
th, td { border: 1px solid #dcdcde; padding: .2rem .45rem; text-align: left; }
th { background: #f0f0f1; }
th.night { font-weight: 400; font-size: .75rem; writing-mode: vertical-rl; }
td.n { text-align: right; }
td.id { white-space: nowrap; font-family: monospace; }
.scroll { overflow-x: auto; }
span.cell { display: inline-block; width: 1rem; height: 1rem; vertical-align: middle; }
td.cell { width: 1rem; min-width: 1rem; height: 1.2rem; padding: 0; }
.s-passed { background: #4ab866; } .s-failed { background: #b32d2e; } .s-flaky { background: #f0b849; }
.s-not-tested { background: #dba617; background-image: repeating-linear-gradient(45deg, transparent 0 3px, #fff8 3px 6px); }
.s-not-checked { background: #e0e0e0; }
.outcome-0 { color: #0a5c1e; } .outcome-1 { color: #b32d2e; } .outcome-2 { color: #6b4e00; }
.warning { background: #fcf0c8; border-left: 4px solid #dba617; padding: .2rem 1rem; }
figure.operation { background: #fff; border: 1px solid #dcdcde; border-radius: 4px; padding: .5rem 1rem; margin: .8rem 0; display: inline-block; vertical-align: top; }
figcaption { font-weight: 600; }
svg .axis { stroke: #8c8f94; }
svg .label { font-size: 10px; fill: #50575e; }
svg polyline { fill: none; stroke-width: 2; }
svg polyline.p50, svg circle.p50 { stroke: #2271b1; } svg circle.p50 { fill: #2271b1; }
svg polyline.p95, svg circle.p95 { stroke: #d63638; } svg circle.p95 { fill: #d63638; }
.key { display: inline-block; width: 1.2rem; height: .25rem; vertical-align: middle; }
.key.p50 { background: #2271b1; } .key.p95 { background: #d63638; }
`;
