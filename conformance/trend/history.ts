import { closeSync, existsSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { FileTooLargeError, readTextWithin } from '../../harness/files/bounded-read.ts';
import type { CertificationReport } from '../certification/report.ts';
import { scenarioKey } from '../certification/baseline.ts';
import type { RequirementVerdict, ScenarioOutcome } from '../certification/verdicts.ts';

/**
 * One run in the history file (`npm start -- --history <file>`, NDJSON: one record a line): the verdict of every
 * requirement a client can provoke and of every scenario, and each operation's response times. A CI job caches
 * the file from night to night; the trend page (trend/page.ts) draws it. A record is a few tens of kilobytes
 * whatever the run did: it holds verdicts and percentiles, never a reason or an exchange.
 */
export interface HistoryRecord {
  /**
   * The record's format: a later harness reads an earlier one's history. A field added since is optional (the
   * format stays 1, so an earlier harness still reads a later one's records, ignoring the field).
   */
  history: 1;
  /** When the run ended (the certification's generatedAt). */
  at: string;
  target: string;
  profile: string;
  /** The operation catalogue's fingerprint: verdicts of two fingerprints were held to different operations. */
  catalogue: string;
  durationMs: number;
  exitCode: 0 | 1 | 2;
  outcome: CertificationReport['outcome'];
  /** Requirement id → verdict (UNPROVOKABLE ones left out: no run changes them). */
  requirements: Record<string, RequirementVerdict>;
  /**
   * Scenario (by scenarioKey: its file and name) → verdict, every scenario of the suite ('not run' when the
   * selection left it out). Absent from the records of a harness before it: their scenarios cannot be compared.
   */
  scenarios?: Record<string, ScenarioOutcome['verdict']>;
  /** Operation (as the evidence names it, e.g. "request to pay (collection)") → response times in ms. */
  operations: Record<string, OperationTimes>;
}

export interface OperationTimes {
  /** How many responses the times are of. */
  count: number;
  p50: number;
  p95: number;
}

/** The record of one run: its verdicts, and the response times of every exchange of every attempt. */
export function historyRecordOf(report: CertificationReport, durationMs: number): HistoryRecord {
  const times = new Map<string, number[]>();
  for (const scenario of report.scenarios) {
    for (const exchange of [...scenario.exchanges, ...(scenario.earlierAttempts ?? []).flatMap((a) => a.exchanges)]) {
      if (exchange.response) times.set(exchange.operation, [...(times.get(exchange.operation) ?? []), exchange.response.durationMs]);
    }
  }
  return {
    history: 1,
    at: report.generatedAt,
    target: report.target,
    profile: report.profile.name,
    catalogue: report.catalogue.fingerprint,
    durationMs,
    exitCode: report.exitCode,
    outcome: report.outcome,
    requirements: Object.fromEntries(report.requirements.filter((r) => r.verdict !== 'UNPROVOKABLE').map((r) => [r.id, r.verdict])),
    scenarios: Object.fromEntries(report.scenarios.map((s) => [scenarioKey(s), s.verdict] as const).sort(([a], [b]) => a.localeCompare(b))),
    operations: Object.fromEntries(
      [...times]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([operation, ms]) => [operation, { count: ms.length, p50: percentile(ms, 50), p95: percentile(ms, 95) }]),
    ),
  };
}

/** The nearest-rank percentile of a list of numbers (not empty). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The history file cannot be written: the run says so before it starts. */
export class HistoryError extends Error {
  constructor(file: string, why: string) {
    super(`The history file ${file} cannot be used: ${why}.`);
    this.name = 'HistoryError';
  }
}

/**
 * A run's record is some tens of kilobytes (the suite's verdicts and percentiles; nightly.suite.test.ts holds it
 * under 64 KiB): this holds thousands of runs, years of nightly ones.
 */
const MAX_HISTORY_BYTES = 128 * 1024 * 1024;

/** Checks, before the run, that the record can be appended: the file is created if it is not there, never emptied. */
export function checkHistoryFile(file: string): void {
  try {
    closeSync(openSync(file, 'a'));
    // Read whole for the trend after the run: a file past the bound is refused now, before the run, never cut.
    if (statSync(file).size > MAX_HISTORY_BYTES) throw new FileTooLargeError(statSync(file).size, MAX_HISTORY_BYTES);
  } catch (error) {
    if (error instanceof FileTooLargeError)
      throw new HistoryError(file, `${error.message}: start a new history file and keep this one (nothing in it is changed)`);
    const code = (error as NodeJS.ErrnoException).code;
    throw new HistoryError(
      file,
      code === 'ENOENT'
        ? 'its folder does not exist'
        : code === 'EISDIR'
          ? 'it is a folder'
          : code === 'EACCES'
            ? 'it may not be written'
            : `${code ?? (error as Error).message}`,
    );
  }
}

/**
 * Appends the record as one line. The file is opened for appending only (O_APPEND): what is in it stays as it
 * is, whatever it holds, and two runs appending at once each write whole lines. A file whose last line lacks
 * its line feed (a run killed mid-write) gets one first, so the new record is a line of its own.
 */
export function appendHistory(file: string, record: HistoryRecord): void {
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, `${endsMidLine(file) ? '\n' : ''}${JSON.stringify(record)}\n`);
  } finally {
    closeSync(fd);
  }
}

function endsMidLine(file: string): boolean {
  const size = existsSync(file) ? statSync(file).size : 0;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, last, 0, 1, size - 1);
  } finally {
    closeSync(fd);
  }
  return last[0] !== 0x0a;
}

export interface History {
  records: HistoryRecord[];
  /** A line that is not a run record, by its number: reported, kept in the file, left out of the trend. */
  corrupt: { line: number; why: string }[];
}

/** Reads every record of the history; a line that is not one is reported by its number and otherwise left alone. */
export function readHistory(file: string): History {
  const records: HistoryRecord[] = [];
  const corrupt: History['corrupt'] = [];
  const lines = readTextWithin(file, MAX_HISTORY_BYTES).split('\n');
  lines.forEach((text, index) => {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      corrupt.push({ line: index + 1, why: 'not JSON' });
      return;
    }
    const why = whyNotARecord(value);
    if (why) corrupt.push({ line: index + 1, why });
    else records.push(value as HistoryRecord);
  });
  return { records, corrupt };
}

function whyNotARecord(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const r = value as Record<string, unknown>;
  if (r.history !== 1) return 'not a history record of this harness (no "history": 1)';
  if (typeof r.at !== 'string' || Number.isNaN(Date.parse(r.at))) return 'no date ("at")';
  if (typeof r.target !== 'string') return 'no target';
  if (!isVerdicts(r.requirements)) return 'no verdicts by requirement';
  if (r.scenarios !== undefined && !isVerdicts(r.scenarios)) return 'its verdicts by scenario are not verdicts';
  if (typeof r.operations !== 'object' || r.operations === null || !Object.values(r.operations).every(isTimes))
    return 'no response times by operation';
  return undefined;
}

function isVerdicts(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}

function isTimes(value: unknown): boolean {
  const t = value as OperationTimes;
  return (
    typeof value === 'object' &&
    value !== null &&
    [t.count, t.p50, t.p95].every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0)
  );
}

/** The warning the run prints for each corrupt line. */
export function corruptLineWarnings(file: string, history: History): string[] {
  return history.corrupt.map(
    ({ line, why }) => `HISTORY: ${file} line ${line} is not a run record (${why}); it is kept as it is, and left out of the trend.`,
  );
}
