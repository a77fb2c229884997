import { escapeMarkup as xml } from '../../core/report-text.ts';
import type { ClientReportDocument, ReportedClient, ReportedRule } from './report.ts';
import { describeRuleSource } from './rules.ts';

/**
 * client-report.junit.xml, for a CI dashboard: a test suite per client and a test case per rule in each. A rule
 * the client kept passes; a finding of a violation, or of a practice that puts money or security at stake, fails
 * its test case with what the client did; any other practice finding passes with it in the case's output.
 */
export function renderClientReportJunit(report: ClientReportDocument): string {
  const suites = report.clients.map((client) => {
    const cases = report.rules.map((rule) => testCase(client, rule));
    const failures = cases.filter((c) => c.failed).length;
    return [
      `  <testsuite name="${xml(`client ${client.label}`)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0">`,
      ...cases.map((c) => c.xml),
      '  </testsuite>',
    ].join('\n');
  });
  return ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites name="MoMo sandbox client report">', ...suites, '</testsuites>', ''].join(
    '\n',
  );
}

function testCase(client: ReportedClient, rule: ReportedRule): { failed: boolean; xml: string } {
  const open = `    <testcase classname="${xml(`client-report.${client.id}`)}" name="${xml(`${rule.id}: ${rule.name}`)}">`;
  const findings = client.findings.filter((f) => f.rule === rule.id);
  if (findings.length === 0) return { failed: false, xml: `${open}</testcase>` };
  const detail = findings
    .map(
      (f) =>
        `${f.count} time${f.count === 1 ? '' : 's'}: ${f.detail}\nfirst: ${f.firstExchange.method} ${f.firstExchange.target}, ${f.firstExchange.outcome}`,
    )
    .join('\n\n');
  const text = `${detail}\n\nFix: ${rule.fix}\nSource: ${describeRuleSource(rule.source)}`;
  const failed = rule.severity === 'violation' || rule.stake !== undefined;
  return failed
    ? {
        failed,
        xml: `${open}\n      <failure message="${xml(findings[0]!.detail)}" type="${xml(rule.severity)}">${xml(text)}</failure>\n    </testcase>`,
      }
    : { failed, xml: `${open}\n      <system-out>${xml(text)}</system-out>\n    </testcase>` };
}
