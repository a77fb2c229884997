import { reportSafe } from '../../core/report-text.ts';
import { failuresOf, type CertificationReport, type ReportedExchange, type ReportedRequirement, type ReportedScenario } from './report.ts';
import { REQUIREMENT_VERDICTS, type RequirementVerdict } from './verdicts.ts';
import { groupOf } from './requirements.ts';
import { CHANGES, type Change } from './baseline.ts';
import { describeSource } from '../../core/sources.ts';
import { sharedCauses } from '../results/verdict-stream.ts';
import type { Finding, Warning } from '../../harness/checks/index.ts';

/**
 * index.html of reports/certification: one self-contained page (inline style, no script, nothing fetched)
 * that a reviewer reads from top to bottom: the failures, each with its difference and reproduction, the outcome, coverage by product and by operation, the table of
 * requirements, then each requirement with the scenarios behind its verdict and their redacted exchanges.
 * A scenario's exchanges are shown once, under the first requirement it verifies (the others link there), so
 * the page is as large as the evidence, not as large as the evidence times the requirements of each scenario.
 */
export function renderHtml(report: CertificationReport, { conformanceHref = '../conformance' }: { conformanceHref?: string } = {}): string {
  const scenarioOf = new Map(report.scenarios.map((s) => [s.id, s]));
  const shownUnder = new Map<string, string>();
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>MoMo API certification: ${escapeHtml(report.target)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>MoMo API certification</h1>
<p class="meta">Target <b>${escapeHtml(report.target)}</b> · profile <b>${escapeHtml(report.profile.name)}</b> · ${escapeHtml(report.generatedAt)} · ${escapeHtml(report.harness.name)} ${escapeHtml(report.harness.version)}${report.spec ? ` · spec ${escapeHtml(report.spec.file)} <code title="SHA-256">${report.spec.sha256.slice(0, 12)}…</code>` : ''}</p>
<p class="meta">Scenarios: ${report.selection.expression ? `<code>${escapeHtml(report.selection.expression)}</code>` : 'all'}</p>
</header>
<main>
${causesSection(report)}
${failuresSection(report, conformanceHref)}
${summarySection(report)}
${availabilitySection(report)}
${warningsSection(report)}
${baselineSection(report)}
${coverageSection(report)}
${ruleCoverageSection(report)}
${requirementTable(report.requirements, report.baseline !== undefined)}
<section id="evidence">
<h2>Requirements and their evidence</h2>
<p>Each requirement with the scenarios behind its verdict. Open a scenario to read every request it sent and every response, with subscription keys, API keys, credentials and tokens redacted.</p>
${report.requirements.map((r) => requirementSection(r, scenarioOf, shownUnder)).join('\n')}
</section>
${legend()}
</main>
</body>
</html>
`;
}

/**
 * What the page begins with when one departure failed several scenarios: each such cause once, with how many scenarios
 * failed on it and the requirements they touched, so that a reader fixes one thing rather than reading it forty times.
 */
function causesSection(report: CertificationReport): string {
  const shared = sharedCauses(report.scenarios);
  if (shared.length === 0) return '';
  const rows = shared
    .map(
      ({ cause, scenarios, requirements }) =>
        `<tr><td><code>${escapeHtml(cause)}</code></td><td class="n">${scenarios.length}</td><td>${requirements.map((id) => `<a href="#${anchor(id)}">${escapeHtml(id)}</a>`).join(', ')}</td></tr>`,
    )
    .join('\n');
  return `<section id="causes">
<h2>Causes shared by several failures</h2>
<p>Each departure that failed more than one scenario, once: the check and what the target answered. The failures below follow from them.</p>
<table><thead><tr><th>Check: what came</th><th>Scenarios</th><th>Requirements touched</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</section>`;
}

/**
 * The weather the careful client met: for each operation, the calls it had to make again (a 5xx the spec lists, a
 * 502–504, no answer, a refused token) and how they ended. None of it changes a verdict; a provider reads it as
 * availability, not conformance.
 */
function availabilitySection(report: CertificationReport): string {
  const rows = (report.availability ?? []).filter((a) => a.retried > 0);
  if (rows.length === 0) return '';
  const tally = (counts: Record<string, number | undefined>) =>
    Object.entries(counts)
      .map(([what, n]) => `${escapeHtml(what)} ×${n}`)
      .join(', ');
  return `<section id="availability">
<h2>Availability</h2>
<p>Calls the harness made again, as a careful client does: reads, calls under the same reference id, and a token refused before its expiry renewed once. They change no verdict.</p>
<table><thead><tr><th>Operation</th><th>Calls</th><th>Made again</th><th>Met</th><th>Ended</th></tr></thead>
<tbody>
${rows.map((a) => `<tr><td>${escapeHtml(a.operation)}</td><td class="n">${a.calls}</td><td class="n">${a.retried}</td><td>${tally(a.met)}</td><td>${tally(a.outcomes)}</td></tr>`).join('\n')}
</tbody></table>
</section>`;
}

/**
 * What the page begins with: each failed requirement, the scenario that failed it, the check with its source and
 * the field's difference, and the script that replays it (written beside the conformance reports, at
 * `conformanceHref` from this page, and shown here too).
 */
function failuresSection(report: CertificationReport, conformanceHref: string): string {
  const failures = failuresOf(report);
  if (failures.length === 0) return '';
  const requirements = new Set(failures.map((f) => f.requirement.id)).size;
  const rows = failures
    .map(({ requirement, scenario, findings }) => {
      const where = `${scenario.uri}${scenario.line ? `:${scenario.line}` : ''}`;
      const reproduction = scenario.reproduction
        ? `<a href="${escapeHtml(`${conformanceHref}/${scenario.reproduction.file}`)}"><code>${escapeHtml(scenario.reproduction.file)}</code></a><details><summary>the script</summary><pre class="curl">${escapeHtml(scenario.reproduction.script)}</pre></details>`
        : 'none: the evidence holds no call to replay';
      return `<tr><td class="id"><a href="#${anchor(requirement.id)}">${escapeHtml(requirement.id)}</a><br><small>${escapeHtml(requirement.section)}</small></td><td>${escapeHtml(scenario.feature)} › ${escapeHtml(scenario.name)}<br><small>${escapeHtml(where)}</small></td><td>${findingsTable(findings)}</td><td>${reproduction}</td></tr>`;
    })
    .join('\n');
  return `<section id="failures">
<h2>Failures: ${requirements} requirement${requirements === 1 ? '' : 's'}</h2>
<p>Each failed requirement with the scenario that failed it, the check that failed with its source, what differed, and a script that replays the failure by itself with the MOMO_* variables of .env.example (<code>sh reproduce/….sh</code> in the conformance reports).</p>
<table class="failures"><thead><tr><th>Requirement</th><th>Scenario</th><th>Check: expected and received</th><th>Reproduction</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</section>`;
}

/** A failure's findings as the field, what was expected and what came: the block every failure has. */
function findingsTable(findings: readonly Finding[]): string {
  if (findings.length === 0) return '<p>The failure names no check: read its message under the scenario.</p>';
  const rows = findings
    .map(
      (f) =>
        `<tr><td><code>${escapeHtml(f.check)}</code><br><small>${escapeHtml(describeSource(f.source))}</small></td><td>${f.field !== undefined ? `<code>${escapeHtml(f.field)}</code>` : ''}</td><td><code>${escapeHtml(f.expected)}</code></td><td><code>${escapeHtml(f.received)}</code></td></tr>`,
    )
    .join('');
  return `<table class="findings"><thead><tr><th>Check</th><th>Field</th><th>Expected</th><th>Received</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function summarySection(report: CertificationReport): string {
  const { total, operations, operationsCovered } = report.coverage;
  const counts = REQUIREMENT_VERDICTS.filter((v) => v !== 'UNPROVOKABLE' && total.verdicts[v] > 0)
    .map((v) => `<li>${badge(v)} ${total.verdicts[v]}</li>`)
    .join('');
  const problems =
    report.problems.length === 0
      ? ''
      : `<div class="problems"><h3>Waivers that fail the run</h3><ul>${report.problems.map((p) => `<li>${escapeHtml(p)}</li>`).join('')}</ul></div>`;
  const deviations =
    report.profile.deviations.length === 0
      ? '<p>The <b>spec</b> profile holds the target to the spec as written: no deviation is accepted.</p>'
      : `<details class="deviations"><summary>The ${escapeHtml(report.profile.name)} profile accepts ${report.profile.deviations.length} documented deviations from the spec (a requirement passing only because of one is WARN)</summary><ul>${report.profile.deviations.map((d) => `<li><b>${escapeHtml(d.name)}</b>: ${escapeHtml(d.explanation)}</li>`).join('')}</ul></details>`;
  const waivers =
    report.waivers.length === 0
      ? ''
      : `<h3>Waivers</h3><table><thead><tr><th>Requirement</th><th>Status</th><th>Owner</th><th>Expires</th><th>Reason</th></tr></thead><tbody>${report.waivers
          .map(
            (w) =>
              `<tr><td><a href="#${anchor(w.requirement)}">${escapeHtml(w.requirement)}</a></td><td>${escapeHtml(w.status)}</td><td>${escapeHtml(w.owner)}</td><td>${escapeHtml(w.expires)}</td><td>${escapeHtml(w.reason)}</td></tr>`,
          )
          .join('')}</tbody></table>`;
  return `<section id="summary">
<h2>Summary</h2>${evidenceNote(report)}
<p class="outcome outcome-${report.exitCode}">The target ${report.outcome === 'could not test' ? 'could not be tested fully' : escapeHtml(report.outcome)} (exit code ${report.exitCode}).</p>
<div class="figures">
<div class="figure"><span class="number">${total.covered} / ${total.requirements}</span> requirements covered</div>
<div class="figure"><span class="number">${total.verdicts.PASS} / ${total.requirements}</span> requirements passed</div>
<div class="figure"><span class="number">${operationsCovered} / ${operations.length}</span> operations covered</div>
<div class="figure"><span class="number">${total.unprovokable}</span> requirements no client can provoke</div>
</div>
<ul class="counts">${counts}</ul>
${problems}
${deviations}
${waivers}
</section>`;
}

function coverageSection(report: CertificationReport): string {
  const columns = REQUIREMENT_VERDICTS.filter((v) => v !== 'UNPROVOKABLE');
  const products = report.coverage.products
    .map(
      (p) =>
        `<tr><td>${escapeHtml(p.product)}</td><td>${p.covered} / ${p.requirements}</td>${columns.map((v) => `<td class="n">${p.verdicts[v] || ''}</td>`).join('')}</tr>`,
    )
    .join('');
  const operations = report.coverage.operations
    .map(
      (o) =>
        `<tr class="${o.covered > 0 ? 'covered' : 'uncovered'}"><td>${escapeHtml(o.section)}</td><td>${escapeHtml(o.name)}</td><td>${o.covered} / ${o.requirements.length}</td><td>${o.covered > 0 ? 'covered' : 'not covered'}</td></tr>`,
    )
    .join('');
  const apart = report.coverage.apart
    .map(
      (g) =>
        `<tr><td>${escapeHtml(g.group)}</td><td>${g.covered} / ${g.requirements}</td>${columns.map((v) => `<td class="n">${g.verdicts[v] || ''}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<section id="coverage">
<h2>Coverage</h2>
<p>The figures count the requirements of the spec. The strict readings (held only with --strict) and the live service's operations beyond the spec (held only when the run selects @beyond-spec, or against the reference sandbox) are counted apart:</p>
<table><thead><tr><th>Counted apart</th><th>Covered</th>${columns.map((v) => `<th>${badge(v)}</th>`).join('')}</tr></thead><tbody>${apart}</tbody></table>
<h3>By product</h3>
<table><thead><tr><th>Product</th><th>Covered</th>${columns.map((v) => `<th>${badge(v)}</th>`).join('')}</tr></thead><tbody>${products}</tbody></table>
<h3>By operation: ${report.coverage.operationsCovered} of ${report.coverage.operations.length} covered</h3>
<table><thead><tr><th>Section</th><th>Operation</th><th>Requirements checked</th><th></th></tr></thead><tbody>${operations}</tbody></table>
</section>`;
}

/** Rule × operation: each rule of a class of operations, against each of the spec's, with what the run found there. */
function ruleCoverageSection(report: CertificationReport): string {
  const { operations, rules, counts } = report.ruleCoverage;
  const cellHtml = (cell: CertificationReport['ruleCoverage']['rules'][number]['cells'][string]) =>
    cell.kind === 'checked'
      ? `<td title="${escapeHtml((cell.requirements ?? []).join(', '))}">${badge((cell.verdict ?? 'NOT TESTED') as RequirementVerdict)}</td>`
      : `<td class="n" title="${escapeHtml(cell.why ?? '')}">${cell.kind === 'not applicable' ? '·' : escapeHtml(cell.kind)}</td>`;
  const rows = rules
    .map(
      (r) =>
        `<tr><td>${escapeHtml(r.rule)} <small>${escapeHtml(r.clause)}</small></td>${operations.map((o) => cellHtml(r.cells[o]!)).join('')}</tr>`,
    )
    .join('');
  return `<section id="rule-coverage">
<h3>Rules × operations</h3>
<p>Each rule that holds of a class of operations, against each operation the spec lists: the verdict of the requirements that check it there in this run, or · where the catalogue shows it does not apply (hover for why). ${counts.checked} cells checked, ${counts['not applicable']} not applicable, ${counts['not provokable']} not provokable.</p>
<div class="wide"><table><thead><tr><th>Rule</th>${operations.map((o) => `<th><small>${escapeHtml(o)}</small></th>`).join('')}</tr></thead><tbody>${rows}</tbody></table></div>
</section>`;
}

/** With --baseline: the earlier run, and the requirements and scenarios in each class of change since. */
function baselineSection(report: CertificationReport): string {
  const { baseline } = report;
  if (!baseline) return '';
  const rows = CHANGES.map(
    (c) =>
      `<tr><td>${changeBadge(c)}</td><td class="n">${baseline.counts.requirements[c]}</td><td class="n">${baseline.counts.scenarios[c]}</td></tr>`,
  ).join('');
  const moved = (['new failure', 'fixed', 'flaky'] as const).flatMap((c) =>
    report.scenarios
      .filter((s) => s.change === c)
      .map(
        (s) =>
          `<li>${changeBadge(c)} ${escapeHtml(s.feature)} › ${escapeHtml(s.name)} <small>${escapeHtml(`${s.uri}${s.line ? `:${s.line}` : ''}`)}</small></li>`,
      ),
  );
  return `<section id="baseline">
<h2>Since the baseline</h2>
<p>Compared with <code>${escapeHtml(baseline.file)}</code>: the run of ${escapeHtml(baseline.generatedAt)} against <b>${escapeHtml(baseline.target)}</b>. ${baseline.failOn === 'new' ? 'Only a new failure fails this run (--fail-on new).' : 'Any failure fails this run (--fail-on any).'}</p>
<table><thead><tr><th>Since the baseline</th><th>Requirements</th><th>Scenarios</th></tr></thead><tbody>${rows}</tbody></table>
${moved.length > 0 ? `<ul class="moved">${moved.join('')}</ul>` : '<p>No scenario failed anew, was fixed or was flaky.</p>'}
</section>`;
}

function changeBadge(change: Change): string {
  return `<span class="change c-${cssName(change)}">${escapeHtml(change)}</span>`;
}

function requirementTable(requirements: readonly ReportedRequirement[], withChange: boolean): string {
  const rows = requirements
    .map(
      (r) =>
        `<tr class="verdict-row-${cssName(r.verdict)}"><td class="id"><a href="#${anchor(r.id)}">${escapeHtml(r.id)}</a>${groupNote(r)}</td><td>${escapeHtml(r.section)}</td><td>${escapeHtml(r.text)}</td><td>${badge(r.verdict)}</td>${withChange ? `<td>${r.change ? changeBadge(r.change) : ''}</td>` : ''}<td class="n">${r.scenarios.length}</td></tr>`,
    )
    .join('\n');
  return `<section id="requirements">
<h2>Requirements</h2>
<table><thead><tr><th>Id</th><th>Section</th><th>Requirement</th><th>Verdict</th>${withChange ? '<th>Since the baseline</th>' : ''}<th>Scenarios</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</section>`;
}

/** A requirement counted apart from the spec's says so beside its id. */
function groupNote(requirement: ReportedRequirement): string {
  const group = groupOf(requirement);
  return group === 'spec' ? '' : ` <small class="group">${escapeHtml(group)}</small>`;
}

/** What the evidence leaves out, when it leaves something out: exchanges past the run's budget, bodies cut. */
function evidenceNote(report: CertificationReport): string {
  const exchanges = report.scenarios.flatMap((s) => s.exchanges);
  const omitted = exchanges.filter((e) => e.omitted !== undefined).length;
  const cut = exchanges.filter((e) => e.response?.bodyCut !== undefined || e.request.bodyCut !== undefined).length;
  const exceeded = exchanges.filter((e) => e.response?.bodyCut?.exceededLimit !== undefined).length;
  const notes = [
    ...(omitted > 0
      ? [
          `${omitted} of ${exchanges.length} exchanges are not recorded: the run's evidence budget (MOMO_EVIDENCE_BUDGET_BYTES) was spent, so each shows only its call and its outcome.`,
        ]
      : []),
    ...(cut > 0
      ? [
          `${cut} exchange${cut === 1 ? ' has' : 's have'} a body cut in the evidence, each saying where and how long it was${exceeded > 0 ? `; ${exceeded} of them exceeded what the harness reads (MOMO_MAX_RESPONSE_BYTES)` : ''}.`,
        ]
      : []),
  ];
  return notes.length === 0 ? '' : `\n<div class="evidence-note">${notes.map((n) => `<p>${escapeHtml(n)}</p>`).join('')}</div>`;
}

function requirementSection(
  requirement: ReportedRequirement,
  scenarioOf: Map<string, ReportedScenario>,
  shownUnder: Map<string, string>,
): string {
  const scenarios = requirement.scenarios.map((id) => scenarioOf.get(id)).filter((s): s is ReportedScenario => s !== undefined);
  return `<article class="requirement" id="${anchor(requirement.id)}">
<h3>${badge(requirement.verdict)} ${escapeHtml(requirement.id)} <small>${escapeHtml(requirement.section)}</small></h3>
<p>${escapeHtml(requirement.text)}</p>
${requirement.source ? `<p class="source">Source: ${escapeHtml(requirement.source)}</p>` : ''}
<p class="explanation">${escapeHtml(requirement.explanation)}</p>
${scenarios.map((s) => scenarioDetails(s, requirement.id, shownUnder, requirement.scenarioVerdicts?.[s.id])).join('\n')}
</article>`;
}

/** A scenario, unfolding into its exchanges where they are first shown, or into a link to there. */
function scenarioDetails(
  scenario: ReportedScenario,
  requirementId: string,
  shownUnder: Map<string, string>,
  forRequirement?: string,
): string {
  const where = `${scenario.uri}${scenario.line ? `:${scenario.line}` : ''}`;
  const shownAt = shownUnder.get(scenario.id);
  if (shownAt === undefined && scenario.exchanges.length > 0) shownUnder.set(scenario.id, requirementId);
  const exchanges =
    scenario.exchanges.length === 0
      ? '<p>No exchange with the target was recorded.</p>'
      : shownAt !== undefined
        ? `<p class="shown-under">Its exchanges are shown under <a href="#${anchor(shownAt)}">${escapeHtml(shownAt)}</a>.</p>`
        : scenario.exchanges.map(exchangeBlock).join('\n');
  // Every attempt of a scenario that was run again, each with its verdict and its exchanges, then the last one.
  const earlier =
    shownAt !== undefined
      ? ''
      : (scenario.earlierAttempts ?? [])
          .map(
            (a, i) =>
              `<div class="attempt"><h4>Attempt ${i + 1}: ${escapeHtml(a.verdict)}</h4>${a.reason ? `<pre class="reason">${escapeHtml(a.reason)}</pre>` : ''}${a.exchanges.map(exchangeBlock).join('\n')}</div>`,
          )
          .join('\n');
  const last = earlier
    ? `<h4>Attempt ${(scenario.earlierAttempts?.length ?? 0) + 1}: ${scenario.verdict === 'flaky' ? 'passed' : escapeHtml(scenario.verdict)}</h4>`
    : '';
  return `<details class="scenario">
<summary><span class="scenario-verdict sv-${cssName(scenario.verdict)}">${escapeHtml(scenario.verdict)}</span>${forRequirement !== undefined && forRequirement !== scenario.verdict ? ` <span class="for-requirement">${escapeHtml(forRequirement === 'not reached' ? 'not reached for this requirement' : `${forRequirement} for this requirement`)}</span>` : ''}${scenario.change ? ` ${changeBadge(scenario.change)}` : ''} ${escapeHtml(scenario.feature)} › ${escapeHtml(scenario.name)} <small>${escapeHtml(where)} · ${scenario.exchanges.length} exchange${scenario.exchanges.length === 1 ? '' : 's'}</small></summary>
${scenario.failure ? findingsTable(scenario.failure.findings) : ''}
${scenario.reason ? `<pre class="reason">${escapeHtml(scenario.reason)}</pre>` : ''}
${scenario.warnings && scenario.warnings.length > 0 ? `<ul class="warnings">${scenario.warnings.map((w) => `<li>${warningText(w)}</li>`).join('')}</ul>` : ''}
${earlier}${last}
${exchanges}
</details>`;
}

/**
 * The warnings of the run, apart from its verdicts: each distinct finding once, with the scenarios that found it.
 * A reading, or in the spec profile an observation of the live service: worth knowing, never counted against the target.
 */
function warningsSection(report: CertificationReport): string {
  const byFinding = new Map<string, { warning: Warning; scenarios: ReportedScenario[] }>();
  for (const scenario of report.scenarios) {
    for (const w of scenario.warnings ?? []) {
      const key = JSON.stringify([w.check, w.context.split(' — ')[0], w.field, w.expected, w.received]);
      const entry = byFinding.get(key) ?? { warning: w, scenarios: [] };
      entry.scenarios.push(scenario);
      byFinding.set(key, entry);
    }
  }
  if (byFinding.size === 0) return '';
  const rows = [...byFinding.values()]
    .sort((a, b) => a.warning.check.localeCompare(b.warning.check))
    .map(
      ({ warning: w, scenarios }) => `<tr>
<td><code>${escapeHtml(w.check)}</code><br><small>${escapeHtml(describeSource(w.source))}</small></td>
<td>${escapeHtml(w.context)}</td>
<td>${w.field !== undefined ? `<code>${escapeHtml(w.field)}</code>: ` : ''}expected ${escapeHtml(w.expected)}, got ${escapeHtml(w.received)}<br><small>${escapeHtml(w.weight)}</small></td>
<td>${scenarios.map((s) => escapeHtml(s.name)).join('<br>')}</td>
</tr>`,
    )
    .join('\n');
  return `<section id="warnings">
<h2>Warnings (${byFinding.size})</h2>
<p>What the checks found that this run does not count against the target: our readings of points the spec leaves open, and, in the spec profile, where the target differs from the live MTN sandbox. They change no verdict; <code>--strict</code> makes the readings failures.</p>
<table><thead><tr><th>Check and source</th><th>Where</th><th>Difference</th><th>Scenarios</th></tr></thead><tbody>
${rows}
</tbody></table>
</section>`;
}

function warningText(w: Warning): string {
  return `Warning, <code>${escapeHtml(w.check)}</code> (${escapeHtml(describeSource(w.source))}): ${w.field !== undefined ? `<code>${escapeHtml(w.field)}</code>: ` : ''}expected ${escapeHtml(w.expected)}, got ${escapeHtml(w.received)}. <small>${escapeHtml(w.weight)}</small>`;
}

function exchangeBlock(exchange: ReportedExchange): string {
  const { request, response } = exchange;
  if (exchange.omitted !== undefined) {
    return `<div class="exchange omitted">
<p class="exchange-line"><b>${escapeHtml(exchange.operation)}</b> → ${escapeHtml(`${request.method} ${request.url}`)}</p>
<p class="omitted-note">${escapeHtml(exchange.omitted)}</p>
</div>`;
  }
  const outcome = response ? `${response.status} · ${response.durationMs} ms` : `no response: ${exchange.transportError ?? 'unknown'}`;
  const requestText = [
    `${request.method} ${request.url}`,
    ...headerLines(request.headers),
    ...(request.body !== undefined ? ['', pretty(request.body)] : []),
  ].join('\n');
  const responseText = response
    ? [`HTTP ${response.status}`, ...headerLines(response.headers), ...(response.body !== '' ? ['', pretty(response.body)] : [])].join('\n')
    : '';
  return `<div class="exchange">
<p class="exchange-line"><b>${escapeHtml(exchange.operation)}</b> → ${escapeHtml(outcome)}</p>
<div class="pair"><pre class="request">${escapeHtml(requestText)}</pre>${response ? `<pre class="response">${escapeHtml(responseText)}</pre>` : ''}</div>
${exchange.curl !== undefined ? `<details class="reproduce"><summary>Reproduce with curl (the MOMO_* variables of .env.example set)</summary><pre class="curl">${escapeHtml(exchange.curl)}</pre></details>` : ''}
</div>`;
}

function legend(): string {
  const meaning: Record<RequirementVerdict, string> = {
    PASS: 'its scenarios ran and the target did what the spec says.',
    FAIL: 'a scenario showed the target departing from it.',
    FLAKY:
      'none of its scenarios failed in the end, but one failed and passed only when run again (MOMO_RETRIES); never PASS, and it does not fail the run.',
    WARN: 'it passed only because the active profile accepts a named, documented deviation from the spec.',
    WAIVED: 'it failed, and a waiver that has not expired accepts the failure.',
    'NOT TESTED': 'the target could not be tested (it did not answer, or answered that it could not).',
    'NOT APPLICABLE':
      'none of its scenarios was part of this run: the tag selection or the kind of target left them out, or they skipped themselves.',
    UNPROVOKABLE: 'no client can make a target show it; the reason is given.',
  };
  return `<section id="legend"><h2>Verdicts</h2><dl>${REQUIREMENT_VERDICTS.map((v) => `<dt>${badge(v)}</dt><dd>${meaning[v]}</dd>`).join('')}</dl></section>`;
}

function headerLines(headers: Record<string, string>): string[] {
  return Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
}

/** JSON bodies indented for reading (still safe: parsing undoes the evidence's escapes); anything else as it came. */
function pretty(body: string): string {
  try {
    return reportSafe(JSON.stringify(JSON.parse(body), null, 2));
  } catch {
    return body;
  }
}

function badge(verdict: RequirementVerdict): string {
  return `<span class="badge v-${cssName(verdict)}">${verdict}</span>`;
}

/** The fragment of a requirement's section: its id is already upper-case words and hyphens. */
function anchor(id: string): string {
  return `req-${cssName(id)}`;
}

function cssName(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

const STYLE = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2327; background: #f6f7f7; }
header { background: #1d2327; color: #fff; padding: 1rem 2rem; }
header h1 { margin: 0 0 .3rem; font-size: 1.6rem; }
header .meta { margin: .15rem 0; color: #c3c4c7; }
header code { color: #fff; }
main { padding: 1rem 2rem 3rem; max-width: 1400px; }
.wide { overflow-x: auto; }
section { margin-bottom: 2rem; }
h2 { border-bottom: 2px solid #dcdcde; padding-bottom: .2rem; }
table { border-collapse: collapse; background: #fff; margin: .5rem 0 1rem; }
th, td { border: 1px solid #dcdcde; padding: .3rem .55rem; text-align: left; vertical-align: top; }
th { background: #f0f0f1; }
td.n { text-align: right; }
td.id { white-space: nowrap; }
#failures { background: #fff; border-left: 4px solid #b32d2e; padding: .2rem 1rem .6rem; overflow-x: auto; }
table.findings { margin: 0; font-size: .9rem; }
table.findings td:nth-child(2) code { white-space: nowrap; }
table.findings td:nth-child(3) code, table.findings td:nth-child(4) code { overflow-wrap: anywhere; }
#failures td:last-child a { overflow-wrap: anywhere; }
tr.uncovered td { color: #8c8f94; }
.outcome { font-size: 1.3rem; font-weight: 600; padding: .6rem 1rem; border-radius: 4px; display: inline-block; }
.outcome-0 { background: #d1f0d8; color: #0a5c1e; }
.outcome-1 { background: #fbd9d7; color: #8a1f11; }
.outcome-2 { background: #fcf0c8; color: #6b4e00; }
.figures { display: flex; flex-wrap: wrap; gap: 1rem; margin: 1rem 0; }
.figure { background: #fff; border: 1px solid #dcdcde; border-radius: 4px; padding: .6rem 1rem; min-width: 12rem; }
.figure .number { display: block; font-size: 1.6rem; font-weight: 700; }
ul.counts { list-style: none; padding: 0; display: flex; gap: 1rem; flex-wrap: wrap; }
.problems { background: #fbd9d7; border-left: 4px solid #b32d2e; padding: .4rem 1rem; }
.badge { display: inline-block; border-radius: 3px; padding: 0 .4rem; font-size: .8rem; font-weight: 700; white-space: nowrap; }
.v-pass { background: #d1f0d8; color: #0a5c1e; }
.v-fail { background: #b32d2e; color: #fff; }
.v-flaky { background: #f0b849; color: #3d2e00; }
.change { display: inline-block; border-radius: 3px; padding: 0 .4rem; font-size: .8rem; border: 1px solid #8c8f94; white-space: nowrap; }
.c-new-failure { background: #b32d2e; color: #fff; border-color: #b32d2e; }
.c-fixed { background: #d1f0d8; color: #0a5c1e; }
.c-still-failing { background: #fbd9d7; color: #8a1f11; }
.c-flaky { background: #f0b849; color: #3d2e00; }
.v-warn { background: #f5c542; color: #3d2e00; }
.v-waived { background: #c9b3f0; color: #2f1766; }
.v-not-tested { background: #fcf0c8; color: #6b4e00; }
.v-not-applicable { background: #e0e0e0; color: #3c434a; }
.v-unprovokable { background: #cfe3f5; color: #0b3d66; }
article.requirement { background: #fff; border: 1px solid #dcdcde; border-radius: 4px; padding: .2rem 1rem .6rem; margin: .8rem 0; }
article.requirement h3 { margin: .6rem 0 .2rem; }
article.requirement:target { outline: 3px solid #2271b1; }
.explanation { color: #50575e; }
details.scenario { border-top: 1px solid #f0f0f1; padding: .3rem 0; }
details.scenario summary { cursor: pointer; }
.scenario-verdict { font-weight: 700; }
.sv-failed { color: #b32d2e; } .sv-flaky { color: #9a6700; } .sv-passed { color: #0a5c1e; } .sv-not-tested { color: #6b4e00; } .sv-skipped, .sv-not-run { color: #8c8f94; }
.exchange { margin: .6rem 0 .6rem 1rem; }
.exchange-line { margin: .2rem 0; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: .5rem; align-items: start; }
pre { background: #f6f7f7; border: 1px solid #dcdcde; padding: .5rem; margin: 0; overflow-x: auto; white-space: pre-wrap; word-break: break-all; font-size: .8rem; }
pre.reason { background: #fbd9d7; }
ul.warnings { background: #fff4d6; padding: 0.5em 0.5em 0.5em 2em; }
.for-requirement { font-size: 0.85em; color: #555; border: 1px solid #bbb; border-radius: 3px; padding: 0 0.3em; }
.evidence-note { background: #fcf0c8; border-left: 4px solid #dba617; padding: .2rem 1rem; }
.omitted-note, .shown-under { color: #50575e; font-style: italic; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
dd { margin: 0; }
`;
