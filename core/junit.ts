import { escapeMarkup as xml } from './report-text.ts';

/**
 * The one JUnit XML writer of the project (the conformance run's own junit.xml is cucumber's formatter): the
 * certification, the sandbox's client report, a load run and a capacity search each give their suites and cases,
 * and it counts, escapes and lays them out. Every text is escaped as markup and made report-safe, so no text a
 * target or a client sent can close an element or add one.
 */

/** One test case: it passed (with output or without), failed, or was skipped, saying why. */
export interface JunitCase {
  classname: string;
  name: string;
  failure?: { message: string; type?: string; text?: string };
  skipped?: string;
  /** What a passing case has to say (a warning, the value observed). */
  output?: string;
}

export interface JunitSuite {
  name: string;
  cases: readonly JunitCase[];
  timeSeconds?: number;
  properties?: Readonly<Record<string, string>>;
}

export function renderJunit(name: string, suites: readonly JunitSuite[]): string {
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="${xml(name)}">`, ...suites.map(suiteXml), '</testsuites>', ''].join(
    '\n',
  );
}

function suiteXml(suite: JunitSuite): string {
  const failures = suite.cases.filter((c) => c.failure).length;
  const skipped = suite.cases.filter((c) => !c.failure && c.skipped !== undefined).length;
  const time = suite.timeSeconds === undefined ? '' : ` time="${suite.timeSeconds.toFixed(1)}"`;
  const properties = Object.entries(suite.properties ?? {}).map(([key, value]) => `<property name="${xml(key)}" value="${xml(value)}"/>`);
  return [
    `  <testsuite name="${xml(suite.name)}" tests="${suite.cases.length}" failures="${failures}" errors="0" skipped="${skipped}"${time}>`,
    ...(properties.length > 0 ? [`    <properties>${properties.join('')}</properties>`] : []),
    ...suite.cases.map(caseXml),
    '  </testsuite>',
  ].join('\n');
}

function caseXml(c: JunitCase): string {
  const open = `    <testcase classname="${xml(c.classname)}" name="${xml(c.name)}">`;
  const inner = c.failure
    ? `<failure message="${xml(c.failure.message)}"${c.failure.type === undefined ? '' : ` type="${xml(c.failure.type)}"`}>${xml(c.failure.text ?? '')}</failure>`
    : c.skipped !== undefined
      ? `<skipped message="${xml(c.skipped)}"/>`
      : c.output !== undefined
        ? `<system-out>${xml(c.output)}</system-out>`
        : '';
  return inner === '' ? `${open}</testcase>` : `${open}\n      ${inner}\n    </testcase>`;
}
