import { escapeMarkup as text } from '../../core/report-text.ts';
import type { ReportedExchange } from './redaction.ts';
import type { ClientReportDocument, ReportedClient, ReportedFinding } from './report.ts';
import { describeRuleSource } from './rules.ts';

/**
 * client-report.html: one self-contained page (inline style, no script, nothing fetched) that leads with what
 * costs money or opens a door, then each client's findings with the first exchange that showed each, how it
 * coped with chaos, and every rule with its source. Every text a client or the chaos plugin wrote is escaped.
 */
export function renderClientReportHtml(report: ClientReportDocument): string {
  const anchors = new Map(report.clients.map((client, i) => [client.id, `client-${i + 1}`]));
  const atStake = report.clients.flatMap((client) => client.findings.filter((f) => f.stake).map((finding) => ({ client, finding })));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Client report: the MoMo reference sandbox</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>Client report</h1>
<p class="meta">What each client did against the reference sandbox (profile <b>${text(report.sandbox.profile)}</b>${report.sandbox.strict ? ', strict' : ''}), judged by the rules below · written ${text(report.generatedAt)}</p>
</header>
<section id="at-stake">
<h2>Money and security first</h2>
${
  atStake.length === 0
    ? '<p class="none">No client did anything that puts money or security at stake.</p>'
    : `<table><thead><tr><th>client</th><th>rule</th><th>times</th><th>what it did, the first time</th><th>fix</th></tr></thead><tbody>${atStake
        .map(
          ({ client, finding }) =>
            `<tr class="stake-${text(finding.stake!)}"><td><a href="#${anchors.get(client.id)}">${text(client.label)}</a></td><td>${ruleCell(finding)}</td><td class="n">${finding.count}</td><td>${text(finding.detail)}</td><td>${text(finding.fix)}</td></tr>`,
        )
        .join('')}</tbody></table>`
}
</section>
<section id="clients">
<h2>Clients</h2>
${
  report.clients.length === 0
    ? '<p class="none">No client has called the sandbox yet.</p>'
    : `<table><thead><tr><th>client</th><th>requests</th><th>callbacks</th><th>violations</th><th>practices</th></tr></thead><tbody>${report.clients
        .map(
          (client) =>
            `<tr><td><a href="#${anchors.get(client.id)}">${text(client.label)}</a></td><td class="n">${client.requests}</td><td class="n">${client.callbacks}</td><td class="n">${count(client, 'violation')}</td><td class="n">${count(client, 'practice')}</td></tr>`,
        )
        .join('')}</tbody></table>`
}
${report.omittedEvents > 0 ? `<p class="omitted">${report.omittedEvents} requests and callbacks of further clients were counted and not judged: the report keeps a bounded number of clients.</p>` : ''}
</section>
${report.clients.map((client) => clientSection(client, anchors.get(client.id)!)).join('\n')}
<section id="rules">
<h2>The rules</h2>
<table><thead><tr><th>rule</th><th>severity</th><th>source</th><th>fix</th></tr></thead><tbody>${report.rules
    .map(
      (rule) =>
        `<tr><td><code>${text(rule.id)}</code><br>${text(rule.name)}</td><td>${text(rule.severity)}${rule.stake ? `, ${text(rule.stake)} at stake` : ''}</td><td>${text(describeRuleSource(rule.source))}</td><td>${text(rule.fix)}</td></tr>`,
    )
    .join('')}</tbody></table>
</section>
</body>
</html>
`;
}

const count = (client: ReportedClient, severity: string) =>
  client.findings.filter((f) => f.severity === severity).reduce((sum, f) => sum + f.count, 0);

function ruleCell(finding: ReportedFinding): string {
  return `<code>${text(finding.rule)}</code><br><small>${text(finding.name)}</small>`;
}

function clientSection(client: ReportedClient, anchor: string): string {
  const omitted = [
    client.omitted.findings > 0 ? `${client.omitted.findings} further findings were counted and not kept` : '',
    client.omitted.chaosConditions > 0 ? `${client.omitted.chaosConditions} further chaos conditions were not kept` : '',
  ].filter(Boolean);
  return `<section id="${anchor}" class="client">
<h2>${text(client.label)}</h2>
<p class="meta">${client.requests} requests, ${client.callbacks} callbacks, first seen ${text(client.firstSeen)}</p>
${client.findings.length === 0 ? '<p class="none">No finding: this client kept every rule.</p>' : client.findings.map(findingBlock).join('\n')}
${client.chaos.length === 0 ? '' : chaosTable(client)}
${omitted.length > 0 ? `<p class="omitted">${text(omitted.join('; '))}.</p>` : ''}
</section>`;
}

function findingBlock(finding: ReportedFinding): string {
  return `<div class="finding ${finding.stake ? `stake-${text(finding.stake)}` : text(finding.severity)}">
<h3>${ruleCell(finding)} <span class="badge">${text(finding.severity)}${finding.stake ? `, ${text(finding.stake)} at stake` : ''}</span> <span class="times">${finding.count} time${finding.count === 1 ? '' : 's'}</span></h3>
<p>${text(finding.detail)}</p>
<p class="fix"><b>Fix:</b> ${text(finding.fix)}</p>
<p class="source">Source: ${text(describeRuleSource(finding.source))}</p>
<details><summary>The first exchange, ${text(finding.firstSeen)}</summary><pre>${text(exchangeText(finding.firstExchange))}</pre></details>
</div>`;
}

/** An exchange as lines: the request with its headers and body, then what came of it and the answer's body. */
export function exchangeText(exchange: ReportedExchange): string {
  const lines = [
    `${exchange.direction === 'callback' ? 'callback → ' : '→ '}${exchange.method} ${exchange.target}`,
    ...Object.entries(exchange.requestHeaders ?? {}).map(([name, value]) => `  ${name}: ${value}`),
    ...(exchange.requestBody !== undefined ? [`  ${exchange.requestBody}`] : []),
    `← ${exchange.outcome}`,
    ...(exchange.responseBody !== undefined ? [`  ${exchange.responseBody}`] : []),
  ];
  return lines.join('\n');
}

function chaosTable(client: ReportedClient): string {
  return `<h3>How it coped with chaos</h3>
<table><thead><tr><th>condition</th><th>applied</th><th>what the client did next</th><th>the first time</th></tr></thead><tbody>${client.chaos
    .map(
      (c) =>
        `<tr><td><code>${text(c.condition)}</code></td><td class="n">${c.applied}</td><td>${c.coping.map((o) => `${text(o.outcome)}: ${o.count}`).join('<br>')}</td><td>${text(`${c.first.detail}${c.first.operation ? ` (${c.first.operation}${c.first.referenceId ? ` ${c.first.referenceId}` : ''})` : ''}, then ${c.first.coping}`)}</td></tr>`,
    )
    .join('')}</tbody></table>`;
}

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.5rem;color:#1d1d1f}
h1{margin:.2rem 0}h2{margin-top:2rem;border-bottom:1px solid #ddd}h3{font-size:1rem;margin:.2rem 0}
.meta{color:#555}.none{color:#2e7d32}.omitted{color:#8a5a00}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f6}td.n{text-align:right}
.finding{border-left:5px solid #999;padding:.3rem .8rem;margin:.8rem 0;background:#fafafa}
.finding.violation{border-color:#c62828}.finding.practice{border-color:#ef6c00}
.stake-money{border-color:#6a1b9a;background:#f6effa}.stake-security{border-color:#b71c1c;background:#fdf0f0}
.badge{font-weight:normal;font-size:.85rem;background:#eee;border-radius:3px;padding:0 .3rem}.times{font-weight:normal;color:#555}
.fix{margin:.2rem 0}.source{color:#555;font-size:.9rem;margin:.2rem 0}
pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f6;padding:.5rem;font-size:.85rem}
`;
