import { escapeHtml } from '../certification/html.ts';
import { requirementStanding, type Standing } from '../certification/baseline.ts';
import { reportSafe } from '../../core/report-text.ts';
import { anyMoved, changesBetween, MOVES, type Move, type Moved, type Moves, type RunChanges } from './changes.ts';
import { CHART_STYLE, lineChart } from './chart.ts';
import type { History, HistoryRecord } from './history.ts';

/** A standing as the page says it, of a requirement or a scenario. */
const STANDING_WORD: Record<Standing, string> = {
  passing: 'passed',
  failing: 'failed',
  flaky: 'flaky',
  untested: 'not tested',
  unchecked: 'not checked',
};
/** The grid's order, and its legend's. */
const STANDINGS: readonly Standing[] = ['passing', 'failing', 'flaky', 'untested', 'unchecked'];

/**
 * The runs the page draws, the latest: every run would make a page of megabytes after some years of nightly runs
 * (the file keeps them all, and the page says how many it leaves out).
 */
const RUNS_ON_PAGE = 100;

/**
 * reports/trend/index.html: the history of runs on one page, with nothing fetched and no script. It begins with
 * what changed in the last run; then the runs, each requirement run by run (passed, failed, flaky, not tested),
 * and each operation's p50 and p95 response times across the runs, as inline SVG written into the page. A run is
 * named by its date and time in UTC. Every text that came from a target (its description, operation and
 * scenario names in a hand-edited history) is escaped.
 */
export function renderTrend(history: History, file: string): string {
  const all = [...history.records].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const runs = all.slice(-RUNS_ON_PAGE);
  const names = runNames(runs);
  const targets = [...new Set(runs.map((r) => r.target))];
  const shown = runs.length < all.length ? `; this page shows the last ${runs.length}` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>MoMo conformance trend: ${all.length} runs</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>MoMo conformance trend</h1>
<p class="meta">${all.length} run${all.length === 1 ? '' : 's'} of <code>${text(file)}</code>${shown}${runs.length > 0 ? `, from ${names[0]} to ${names.at(-1)}` : ''} · target${targets.length === 1 ? '' : 's'} ${targets.map((t) => `<b>${text(t)}</b>`).join(', ')}</p>
<p class="meta">Runs are named by the date and time they ended, in UTC.</p>
</header>
<main>
${changesSection(runs, names)}
${corruptSection(history)}
${runsSection(runs, names)}
${requirementsSection(runs, names)}
${operationsSection(runs, names)}
</main>
</body>
</html>
`;
}

function text(value: string): string {
  return escapeHtml(reportSafe(value));
}

/**
 * Each run's name: the date and time it ended, in UTC, to the minute ("2026-11-25 14:03"); to the second where
 * two runs ended in the same minute, and numbered where they ended in the same second, so no two read alike.
 */
export function runNames(runs: readonly HistoryRecord[]): string[] {
  const iso = runs.map((r) => new Date(r.at).toISOString().replace('T', ' '));
  const minutes = iso.map((t) => t.slice(0, 16));
  const seconds = iso.map((t, i) => (count(minutes, minutes[i]!) > 1 ? t.slice(0, 19) : minutes[i]!));
  return seconds.map((name, i) => (count(seconds, name) > 1 ? `${name} #${count(seconds.slice(0, i + 1), name)}` : name));
}

function count(values: readonly string[], value: string): number {
  return values.filter((v) => v === value).length;
}

/** The opening: what the last run changed since the run before it, in sentences and a short list. */
function changesSection(runs: readonly HistoryRecord[], names: readonly string[]): string {
  const heading = '<h2>What changed in the last run</h2>';
  if (runs.length === 0) return `<section id="changes">${heading}<p>The history holds no run yet.</p></section>`;
  if (runs.length === 1)
    return `<section id="changes">${heading}<p>The history holds one run, ${names[0]} (${outcomeOf(runs[0]!)}): there is no run before it to compare it with.</p></section>`;
  const changes = changesBetween(runs.at(-2)!, runs.at(-1)!);
  const { before: then, now } = changes;
  const [thenName, nowName] = names.slice(-2);
  return `<section id="changes">${heading}
<p>The last run, <b>${nowName}</b>, compared with the run before it, ${thenName}.</p>
${contextNotes(then, now)}
${verdictsNote(changes)}
${changes.scenarios ? '' : `<p class="older">${olderRecordNote(then, now, thenName!, nowName!)}</p>`}
${timesNote(changes)}
</section>`;
}

/** The outcome, and every scenario and requirement whose verdict moved; or, when none did, that nothing changed. */
function verdictsNote(changes: RunChanges): string {
  const { before: then, now, scenarios, requirements } = changes;
  const kinds = scenarios ? 'scenario and requirement' : 'requirement';
  const moved = anyMoved(requirements) || (scenarios !== undefined && anyMoved(scenarios));
  const sameOutcome = then.exitCode === now.exitCode && then.outcome === now.outcome;
  if (!moved && sameOutcome)
    return `<p class="nothing">Nothing changed: every ${kinds} kept its verdict, and the outcome is the same, ${outcomeOf(now)}.</p>`;
  const outcome = sameOutcome
    ? `<p class="outcome">The outcome is the same: ${outcomeOf(now)}.</p>`
    : `<p class="outcome">The outcome changed from ${outcomeOf(then)} to <b>${outcomeOf(now)}</b>.</p>`;
  if (!moved) return `${outcome}\n<p class="nothing">No ${kinds} changed its verdict.</p>`;
  return `${outcome}\n<ul class="moves">${[...(scenarios ? movesList(scenarios, 'scenario') : []), ...movesList(requirements, 'requirement')].join('\n')}</ul>`;
}

function outcomeOf(run: HistoryRecord): string {
  return `${text(run.outcome)} (exit ${run.exitCode})`;
}

/** What makes two runs' verdicts differ besides the target's behaviour: another target, profile or catalogue. */
function contextNotes(then: HistoryRecord, now: HistoryRecord): string {
  const notes = [
    ...(!sameTarget(then.target, now.target)
      ? [`The target changed: the run before was against <b>${text(then.target)}</b>, this one against <b>${text(now.target)}</b>.`]
      : []),
    ...(then.profile !== now.profile ? [`The profile changed from ${text(then.profile)} to ${text(now.profile)}.`] : []),
    ...(then.catalogue !== now.catalogue
      ? [
          'The operation catalogue changed between the two runs (another version of the harness): a verdict may have moved because the harness asks for other things, not because the target answers otherwise.',
        ]
      : []),
  ];
  return notes.map((n) => `<p class="warning">${n}</p>`).join('\n');
}

/** The embedded sandbox takes a free port on loopback each run: the same target, whatever port it had. */
function sameTarget(a: string, b: string): boolean {
  const withoutLoopbackPort = (target: string) => target.replace(/\bhttp:\/\/127\.0\.0\.1:\d+/g, 'http://127.0.0.1');
  return withoutLoopbackPort(a) === withoutLoopbackPort(b);
}

/** A record written before the history kept scenario verdicts says so, and what can still be compared. */
function olderRecordNote(then: HistoryRecord, now: HistoryRecord, thenName: string, nowName: string): string {
  const older = [...(then.scenarios ? [] : [`the run before (${thenName})`]), ...(now.scenarios ? [] : [`the last run (${nowName})`])];
  return `Scenarios cannot be compared: ${older.join(' and ')} ${older.length === 1 ? 'was' : 'were'} recorded by an older harness, which kept no verdict by scenario. Requirements, the outcome and response times can.`;
}

/** How each move reads, for one item and for several. */
const MOVE_PHRASE: Record<Move, [one: string, many: string]> = {
  'newly failing': ['newly fails', 'newly fail'],
  'newly flaky': ['became flaky (passed only when run again)', 'became flaky (passed only when run again)'],
  'newly not tested': ['could not be tested (the target did not answer)', 'could not be tested (the target did not answer)'],
  'newly passing': ['newly passes', 'newly pass'],
  appeared: ['appeared (it was not in the run before)', 'appeared (they were not in the run before)'],
  disappeared: ['disappeared (it was in the run before, not in this one)', 'disappeared (they were in the run before, not in this one)'],
  'newly not checked': [
    'was not checked this time (the selection or the kind of target left it out)',
    'were not checked this time (the selection or the kind of target left them out)',
  ],
};
/** A longer list is folded, so that the opening stays short. */
const LIST_OPEN_UP_TO = 8;

function movesList(moves: Moves, kind: 'scenario' | 'requirement'): string[] {
  return MOVES.filter((m) => moves[m].length > 0).map((move) => {
    const items = moves[move];
    const sentence = `${items.length} ${kind}${items.length === 1 ? '' : 's'} ${MOVE_PHRASE[move][items.length === 1 ? 0 : 1]}`;
    const list = `<ul>${items.map((item) => `<li>${kind === 'requirement' ? `<code>${text(item.name)}</code>` : text(item.name)} <small>${wasNote(item)}</small></li>`).join('')}</ul>`;
    return `<li class="move m-${cssName(move)}">${items.length > LIST_OPEN_UP_TO ? `<details><summary>${sentence}</summary>${list}</details>` : `${sentence}:${list}`}</li>`;
  });
}

/** What it was in the run before; what it is now when it was not in the run before. */
function wasNote({ before: then, now }: Moved): string {
  return then === undefined ? `(${STANDING_WORD[now!]})` : `(${STANDING_WORD[then]} before)`;
}

/** The run time, and the operations whose response times moved enough to look at. */
function timesNote({ before: then, now, operations }: RunChanges): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const percent = then.durationMs > 0 ? Math.round((100 * (now.durationMs - then.durationMs)) / then.durationMs) : 0;
  const against =
    percent === 0
      ? `about as long as the run before (${seconds(then.durationMs)})`
      : `${Math.abs(percent)}% ${percent > 0 ? 'longer' : 'shorter'} than the run before (${seconds(then.durationMs)})`;
  const duration = `<p>The run took ${seconds(now.durationMs)}, ${against}.</p>`;
  if (operations.length === 0) return `${duration}\n<p>No operation's p95 response time moved by half or more.</p>`;
  const items = operations.map(
    (o) =>
      `<li>${text(o.operation)}: p95 ${o.before.p95} ms → <b>${o.now.p95} ms</b> <small>(p50 ${o.before.p50} → ${o.now.p50} ms)</small></li>`,
  );
  return `${duration}\n<p>Response times worth a glance (p95 ${operations.length === 1 ? 'moved' : 'of each moved'} by half or more):</p><ul class="times">${items.join('')}</ul>`;
}

function corruptSection(history: History): string {
  if (history.corrupt.length === 0) return '';
  return `<section id="corrupt" class="warning"><h2>Lines that are not run records</h2><p>They are kept in the file as they are, and left out of this page.</p><ul>${history.corrupt
    .map(({ line, why }) => `<li>line ${line}: ${text(why)}</li>`)
    .join('')}</ul></section>`;
}

function runsSection(runs: readonly HistoryRecord[], names: readonly string[]): string {
  const rows = runs
    .map(
      (r, i) =>
        `<tr><td class="run">${names[i]}</td><td>${text(r.target)}</td><td>${text(r.profile)}</td><td class="outcome-${r.exitCode}">${text(r.outcome)} (${r.exitCode})</td><td class="n">${(r.durationMs / 1000).toFixed(1)} s</td></tr>`,
    )
    .join('');
  return `<section id="runs"><h2>Runs</h2><table><thead><tr><th>Run</th><th>Target</th><th>Profile</th><th>Outcome</th><th>Run time</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function requirementsSection(runs: readonly HistoryRecord[], names: readonly string[]): string {
  const ids = [...new Set(runs.flatMap((r) => Object.keys(r.requirements)))].sort();
  const head = names.map((name) => `<th class="run">${name}</th>`).join('');
  const rows = ids.map((id) => {
    const standings = runs.map((r) => requirementStanding(Object.hasOwn(r.requirements, id) ? r.requirements[id]! : 'NOT APPLICABLE'));
    const cells = standings
      .map((s, i) => `<td class="cell s-${cssName(STANDING_WORD[s])}" title="${names[i]}: ${STANDING_WORD[s]}"></td>`)
      .join('');
    const counts = STANDINGS.filter((s) => s !== 'unchecked')
      .map((s) => `<td class="n count-${cssName(STANDING_WORD[s])}">${standings.filter((x) => x === s).length}</td>`)
      .join('');
    return `<tr data-requirement="${text(id)}"><td class="id">${text(id)}</td>${counts}${cells}</tr>`;
  });
  return `<section id="requirements"><h2>Requirements, run by run</h2>
<p class="legend">${STANDINGS.map((s) => `<span class="cell s-${cssName(STANDING_WORD[s])}"></span> ${STANDING_WORD[s]}`).join(' ')}</p>
<div class="scroll"><table><thead><tr><th>Requirement</th><th>passed</th><th>failed</th><th>flaky</th><th>not tested</th>${head}</tr></thead><tbody>${rows.join('\n')}</tbody></table></div>
</section>`;
}

function operationsSection(runs: readonly HistoryRecord[], names: readonly string[]): string {
  const operations = [...new Set(runs.flatMap((r) => Object.keys(r.operations)))].sort();
  return `<section id="operations"><h2>Response times by operation</h2>
<p class="legend"><span class="key p50"></span> p50 <span class="key p95"></span> p95 of each run's responses</p>
${operations.map((operation) => operationChart(operation, runs, names)).join('\n')}
</section>`;
}

/** One operation's p50 and p95 across the runs: a line chart with a point (and its value) a run, and the values as a table. */
function operationChart(operation: string, runs: readonly HistoryRecord[], names: readonly string[]): string {
  const times = runs.map((r) => (Object.hasOwn(r.operations, operation) ? r.operations[operation] : undefined));
  const series = (key: 'p50' | 'p95') => ({
    className: key,
    values: times.map((t) => t?.[key]),
    title: (i: number) => `${names[i]}: ${key} ${times[i]![key]} ms (${times[i]!.count} responses)`,
  });
  const chart = lineChart({
    description: `${text(operation)}: p50 and p95 response times by run`,
    yTitle: 'response time (ms)',
    runs: names,
    series: [series('p95'), series('p50')],
  });
  const rows = times
    .flatMap((t, i) =>
      t
        ? [`<tr><td class="run">${names[i]}</td><td class="n">${t.p50}</td><td class="n">${t.p95}</td><td class="n">${t.count}</td></tr>`]
        : [],
    )
    .join('');
  return `<figure class="operation" data-operation="${text(operation)}">
<figcaption>${text(operation)}</figcaption>
${chart}
<details><summary>Values</summary><table><thead><tr><th>Run</th><th>p50 ms</th><th>p95 ms</th><th>responses</th></tr></thead><tbody>${rows}</tbody></table></details>
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
th.run { font-weight: 400; font-size: .75rem; writing-mode: vertical-rl; white-space: nowrap; }
td.run { white-space: nowrap; }
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
#changes { background: #fff; border: 1px solid #dcdcde; border-radius: 4px; padding: .2rem 1.2rem .6rem; margin-bottom: 1rem; }
#changes h2 { margin-top: .6rem; }
ul.moves > li { margin: .3rem 0; }
.m-newly-failing > summary, .m-newly-failing { color: #8a2424; } .m-newly-passing { color: #0a5c1e; }
.moves ul { color: #1d2327; }
figure.operation { background: #fff; border: 1px solid #dcdcde; border-radius: 4px; padding: .5rem 1rem; margin: .8rem 0; display: inline-block; vertical-align: top; }
figcaption { font-weight: 600; }
${CHART_STYLE}svg polyline.p50, svg circle.p50 { stroke: #2271b1; } svg circle.p50 { fill: #2271b1; }
svg polyline.p95, svg circle.p95 { stroke: #d63638; } svg circle.p95 { fill: #d63638; }
.key { display: inline-block; width: 1.2rem; height: .25rem; vertical-align: middle; }
.key.p50 { background: #2271b1; } .key.p95 { background: #d63638; }
`;
