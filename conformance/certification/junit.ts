import { reportSafe } from '../../core/report-text.ts';
import { groupOf } from './requirements.ts';
import type { CertificationReport, ReportedRequirement } from './report.ts';

/**
 * The certification as JUnit XML, for a CI dashboard: one test case per requirement, in one suite per group (the
 * spec's, the strict readings', beyond the spec), named by its id. A FAIL is a failure with its explanation, which
 * names the scenario and the failed check; a requirement that was not tested, not applicable or that no client can
 * provoke is skipped, saying why; WARN, WAIVED and FLAKY pass, with why in their output. Each verdict is the
 * requirement's own, made of the checks that cite it: a scenario that failed one check fails only the
 * requirements that check verifies.
 */
export function certificationJunit(report: CertificationReport): string {
  const groups = new Map<string, ReportedRequirement[]>();
  for (const r of report.requirements) groups.set(groupOf(r), [...(groups.get(groupOf(r)) ?? []), r]);
  const suites = [...groups].map(([group, requirements]) => {
    const failures = requirements.filter((r) => r.verdict === 'FAIL').length;
    const skipped = requirements.filter((r) => SKIPPED.has(r.verdict)).length;
    return [
      `  <testsuite name="${xml(`MoMo requirements: ${group}`)}" tests="${requirements.length}" failures="${failures}" skipped="${skipped}" errors="0">`,
      ...requirements.map(testCase),
      '  </testsuite>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(`MoMo API certification of ${report.target}`)}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

const SKIPPED = new Set(['NOT TESTED', 'NOT APPLICABLE', 'UNPROVOKABLE']);

function testCase(r: ReportedRequirement): string {
  const open = `    <testcase classname="${xml(`momo.${r.products.join('.') || 'all'}`)}" name="${xml(`${r.id}: ${r.text}`)}">`;
  const detail = `${r.verdict}: ${r.explanation}`;
  if (r.verdict === 'FAIL')
    return `${open}\n      <failure message="${xml(firstLine(r.explanation))}" type="${xml(r.section)}">${xml(detail)}</failure>\n    </testcase>`;
  if (SKIPPED.has(r.verdict)) return `${open}\n      <skipped message="${xml(detail)}"/>\n    </testcase>`;
  if (r.verdict === 'PASS') return `${open}</testcase>`;
  return `${open}\n      <system-out>${xml(detail)}</system-out>\n    </testcase>`;
}

const firstLine = (text: string) => text.split('\n')[0]!;

/** Text for an XML attribute or element: its markup escaped, and what a target sent made safe (reportSafe). */
function xml(text: string): string {
  return reportSafe(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
