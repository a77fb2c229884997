import { FileTooLargeError, readTextWithin } from '../../harness/files/bounded-read.ts';
import type { RunSummary } from '../results/verdict-stream.ts';

/** A summary.json that names nothing to rerun, or is not one: the rerun stops before it starts. */
export class RerunError extends Error {
  constructor(file: string, why: string) {
    super(`--rerun-failed ${file}: ${why}.`);
    this.name = 'RerunError';
  }
}

/**
 * The scenarios to run again (`npm start -- --rerun-failed <summary.json>`): the failed and the flaky ones of
 * that run, as feature paths with the scenario's line (`features/x.feature:12`), which is how cucumber selects
 * one scenario, or one row of an outline.
 */
/** Far above any run's summary.json (a verdict and a reason per scenario). */
const MAX_SUMMARY_BYTES = 64 * 1024 * 1024;

export function scenariosToRerun(file: string): string[] {
  let text: string;
  try {
    text = readTextWithin(file, MAX_SUMMARY_BYTES);
  } catch (error) {
    if (error instanceof FileTooLargeError)
      throw new RerunError(file, `${error.message}; give the summary.json of a run (reports/conformance/summary.json)`);
    const code = (error as NodeJS.ErrnoException).code;
    throw new RerunError(
      file,
      code === 'ENOENT'
        ? 'there is no such file'
        : code === 'EISDIR'
          ? 'it is a folder; give the summary.json of a run (reports/conformance/summary.json)'
          : `it cannot be read (${code})`,
    );
  }
  let summary: Partial<RunSummary>;
  try {
    summary = JSON.parse(text) as Partial<RunSummary>;
  } catch {
    throw new RerunError(file, 'it is not JSON; give the summary.json of a run (reports/conformance/summary.json)');
  }
  const scenarios = summary?.scenarios;
  if (
    !Array.isArray(scenarios) ||
    !scenarios.every(
      (s) => typeof s?.uri === 'string' && typeof s.verdict === 'string' && (s.line === undefined || Number.isInteger(s.line)),
    )
  ) {
    throw new RerunError(file, 'it is not the summary.json of a run (no list of scenarios with their file, line and verdict)');
  }
  const chosen = scenarios.filter((s) => s.verdict === 'failed' || s.verdict === 'flaky');
  if (chosen.length === 0)
    throw new RerunError(file, `that run had no failed or flaky scenario (${scenarios.length} scenarios), so there is nothing to rerun`);
  const unsafe = chosen.find((s) => !/^features\/[\w./-]+\.feature$/.test(s.uri) || s.uri.includes('..') || s.line === undefined);
  if (unsafe)
    throw new RerunError(
      file,
      `the scenario "${unsafe.uri}${unsafe.line ? `:${unsafe.line}` : ''}" is not a scenario of features/ with its line`,
    );
  return [...new Set(chosen.map((s) => `${s.uri}:${s.line}`))];
}
