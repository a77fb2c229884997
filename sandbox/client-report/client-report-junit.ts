import { renderJunit, type JunitCase } from '../../core/junit.ts';
import type { ClientReportDocument, ReportedClient, ReportedRule } from './report.ts';
import { describeRuleSource } from './rules.ts';

/**
 * client-report.junit.xml, for a CI dashboard: a test suite per client and a test case per rule in each. A rule
 * the client kept passes; a finding of a violation, or of a practice that puts money or security at stake, fails
 * its test case with what the client did; any other practice finding passes with it in the case's output.
 */
export function renderClientReportJunit(report: ClientReportDocument): string {
  const suites = report.clients.map((client) => ({
    name: `client ${client.label}`,
    cases: report.rules.map((rule) => testCase(client, rule)),
  }));
  return renderJunit('MoMo sandbox client report', suites);
}

function testCase(client: ReportedClient, rule: ReportedRule): JunitCase {
  const named = { classname: `client-report.${client.id}`, name: `${rule.id}: ${rule.name}` };
  const findings = client.findings.filter((f) => f.rule === rule.id);
  if (findings.length === 0) return named;
  const detail = findings
    .map(
      (f) =>
        `${f.count} time${f.count === 1 ? '' : 's'}: ${f.detail}\nfirst: ${f.firstExchange.method} ${f.firstExchange.target}, ${f.firstExchange.outcome}`,
    )
    .join('\n\n');
  const text = `${detail}\n\nFix: ${rule.fix}\nSource: ${describeRuleSource(rule.source)}`;
  const failed = rule.severity === 'violation' || rule.stake !== undefined;
  return failed ? { ...named, failure: { message: findings[0]!.detail, type: rule.severity, text } } : { ...named, output: text };
}
