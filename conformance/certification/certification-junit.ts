import { renderJunit, type JunitCase } from '../../core/junit.ts';
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
  const suites = [...groups].map(([group, requirements]) => ({ name: `MoMo requirements: ${group}`, cases: requirements.map(testCase) }));
  return renderJunit(`MoMo API certification of ${report.target}`, suites);
}

const SKIPPED = new Set(['NOT TESTED', 'NOT APPLICABLE', 'UNPROVOKABLE']);

function testCase(r: ReportedRequirement): JunitCase {
  const named = { classname: `momo.${r.products.join('.') || 'all'}`, name: `${r.id}: ${r.text}` };
  const detail = `${r.verdict}: ${r.explanation}`;
  if (r.verdict === 'FAIL') return { ...named, failure: { message: firstLine(r.explanation), type: r.section, text: detail } };
  if (SKIPPED.has(r.verdict)) return { ...named, skipped: detail };
  if (r.verdict === 'PASS') return named;
  return { ...named, output: detail };
}

const firstLine = (text: string) => text.split('\n')[0]!;
