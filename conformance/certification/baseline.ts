import { closeSync, openSync, readSync } from 'node:fs';
import { FileTooLargeError, readTextWithin } from '../../harness/files/bounded-read.ts';
import { OPERATIONS } from '../../core/catalogue/operations.ts';
import { MAX_BYTES_IN_MEMORY, readBundle, sha256, MANIFEST_FILE, UnreadableBundleError, type Manifest } from './bundle.ts';
import type { RequirementVerdict } from './verdicts.ts';

/**
 * What became of a requirement or a scenario since the baseline run (`npm start -- --baseline <file>`):
 * new failure: it fails now and did not fail then (passed, was flaky, not tested or not run); fixed: it failed
 * then and passes now; still failing; still passing; flaky: it passed now only when run again; not tested: the
 * target could not be tested now (it did not answer); not applicable: this run did not check it (the selection
 * or the kind of target left it out); new: the baseline does not know it (a requirement or scenario added since).
 */
export const CHANGES = ['new failure', 'fixed', 'still failing', 'still passing', 'flaky', 'not tested', 'not applicable', 'new'] as const;
export type Change = (typeof CHANGES)[number];

/** Which changes fail the run (exit code 1): only new failures, or any failure as without a baseline. */
export const FAIL_ON = ['new', 'any'] as const;
export type FailOn = (typeof FAIL_ON)[number];

/**
 * The fingerprint of the operation catalogue (core/catalogue/operations.ts): the SHA-256 of its plain data. Two
 * runs compare only when their fingerprints are equal, so a run never reads as fixed or broken because the
 * operations it was held to changed.
 */
export function catalogueFingerprint(): string {
  return sha256(JSON.stringify(OPERATIONS));
}

/** What a comparison needs of the earlier run: a certification report's verdicts. */
export interface Baseline {
  /** The file it was read from, as the user named it. */
  file: string;
  generatedAt: string;
  target: string;
  requirements: { id: string; verdict: RequirementVerdict }[];
  scenarios: { uri: string; name: string; verdict: string }[];
}

/** A baseline that cannot be compared with: missing, unreadable, not a certification report, or of another catalogue. */
export class BaselineError extends Error {
  constructor(file: string, why: string) {
    super(`The baseline ${file} cannot be used: ${why}.`);
    this.name = 'BaselineError';
  }
}

const REPORT_IN_BUNDLE = 'certification/certification.json';

/**
 * Reads the baseline: a certification.json, or the evidence bundle (.tar.gz) of an earlier run, read with the
 * bundle's own guards (bundle.ts: no link, no path outside, bounded in size) and its certification.json
 * checked against the bundle's manifest.
 */
export async function loadBaseline(file: string, fingerprint = catalogueFingerprint()): Promise<Baseline> {
  const magic = Buffer.alloc(2);
  try {
    const fd = openSync(file, 'r');
    try {
      readSync(fd, magic, 0, 2, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new BaselineError(
      file,
      code === 'ENOENT'
        ? 'there is no such file'
        : code === 'EISDIR'
          ? 'it is a folder, not a file'
          : `it cannot be read (${code ?? (error as Error).message})`,
    );
  }
  // A gzip stream begins with 1f 8b: an evidence bundle; anything else is read as a certification.json.
  let text: string;
  try {
    text = magic[0] === 0x1f && magic[1] === 0x8b ? await reportInBundle(file) : readTextWithin(file, MAX_BYTES_IN_MEMORY);
  } catch (error) {
    if (error instanceof FileTooLargeError)
      throw new BaselineError(file, `${error.message}; give the certification.json or the certification-*.tar.gz of an earlier run`);
    throw error;
  }
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch {
    throw new BaselineError(
      file,
      'it is neither JSON nor a gzipped evidence bundle; give the certification.json or the certification-*.tar.gz of an earlier run',
    );
  }
  return baselineOf(file, report, fingerprint);
}

async function reportInBundle(file: string): Promise<string> {
  let files: Map<string, Buffer>;
  try {
    files = await readBundle(file);
  } catch (error) {
    if (error instanceof UnreadableBundleError) throw new BaselineError(file, `it is not a readable evidence bundle (${error.message})`);
    throw error;
  }
  const report = files.get(REPORT_IN_BUNDLE);
  if (!report) throw new BaselineError(file, `the bundle holds no ${REPORT_IN_BUNDLE}`);
  let manifest: Manifest | undefined;
  try {
    manifest = JSON.parse(files.get(MANIFEST_FILE)?.toString('utf8') ?? 'null') as Manifest | undefined;
  } catch {
    manifest = undefined;
  }
  const listed = manifest?.files?.find((f) => f.path === REPORT_IN_BUNDLE);
  if (!listed || listed.sha256 !== sha256(report))
    throw new BaselineError(file, `its ${REPORT_IN_BUNDLE} is not the one its manifest lists (npm run verify -- ${file} says more)`);
  return report.toString('utf8');
}

function baselineOf(file: string, report: unknown, fingerprint: string): Baseline {
  const notReport = (what: string) =>
    new BaselineError(file, `it is not a certification report (${what}); give the certification.json or the bundle of an earlier run`);
  if (!isObject(report)) throw notReport('not a JSON object');
  const { requirements, scenarios, catalogue, generatedAt, target } = report;
  if (!Array.isArray(requirements) || !requirements.every((r) => isObject(r) && typeof r.id === 'string' && typeof r.verdict === 'string'))
    throw notReport('no list of requirements with their verdicts');
  if (
    !Array.isArray(scenarios) ||
    !scenarios.every((s) => isObject(s) && typeof s.uri === 'string' && typeof s.name === 'string' && typeof s.verdict === 'string')
  )
    throw notReport('no list of scenarios with their verdicts');
  if (typeof generatedAt !== 'string' || typeof target !== 'string') throw notReport('no date or target');
  const theirs = isObject(catalogue) && typeof catalogue.fingerprint === 'string' ? catalogue.fingerprint : undefined;
  if (theirs === undefined)
    throw new BaselineError(
      file,
      'it names no catalogue version (it was written by a harness older than the catalogue fingerprint), so its verdicts cannot be compared; run the earlier version again, or start a new baseline from this run',
    );
  if (theirs !== fingerprint)
    throw new BaselineError(
      file,
      `it was made against another version of the operation catalogue (fingerprint ${theirs.slice(0, 12)}…, this harness's is ${fingerprint.slice(0, 12)}…), so its verdicts cannot be compared; start a new baseline from this run`,
    );
  return {
    file,
    generatedAt,
    target,
    requirements: (requirements as { id: string; verdict: RequirementVerdict }[]).map(({ id, verdict }) => ({ id, verdict })),
    scenarios: (scenarios as { uri: string; name: string; verdict: string }[]).map(({ uri, name, verdict }) => ({ uri, name, verdict })),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A verdict, of a requirement or of a scenario, as a comparison reads it (here, and on the trend page). */
export type Standing = 'failing' | 'passing' | 'flaky' | 'untested' | 'unchecked';

const REQUIREMENT_STANDING: Record<RequirementVerdict, Standing> = {
  PASS: 'passing',
  WARN: 'passing',
  WAIVED: 'passing',
  FAIL: 'failing',
  FLAKY: 'flaky',
  'NOT TESTED': 'untested',
  'NOT APPLICABLE': 'unchecked',
  UNPROVOKABLE: 'unchecked',
};
const SCENARIO_STANDING: Record<string, Standing> = {
  passed: 'passing',
  failed: 'failing',
  flaky: 'flaky',
  'not tested': 'untested',
  skipped: 'unchecked',
  'not run': 'unchecked',
};

/** A verdict the harness does not know (a hand-edited report or history) reads as not checked. */
export function requirementStanding(verdict: string): Standing {
  return REQUIREMENT_STANDING[verdict as RequirementVerdict] ?? 'unchecked';
}

export function scenarioStanding(verdict: string): Standing {
  return SCENARIO_STANDING[verdict] ?? 'unchecked';
}

function changeOf(now: Standing, then: Standing | undefined): Change {
  if (then === undefined) return 'new';
  if (now === 'failing') return then === 'failing' ? 'still failing' : 'new failure';
  if (now === 'passing') return then === 'failing' ? 'fixed' : 'still passing';
  return ({ flaky: 'flaky', untested: 'not tested', unchecked: 'not applicable' } as const)[now];
}

/** How a scenario is known across runs: its pickle id is new each run, its file and name are not. */
export function scenarioKey(scenario: { uri: string; name: string }): string {
  return `${scenario.uri} › ${scenario.name}`;
}

export type ChangeCounts = Record<Change, number>;

export interface Comparison {
  requirements: Map<string, Change>;
  /** By scenarioKey. */
  scenarios: Map<string, Change>;
  counts: { requirements: ChangeCounts; scenarios: ChangeCounts };
}

/** Every requirement and scenario of this run put in one class of change since the baseline. */
export function compareWithBaseline(
  baseline: Baseline,
  now: {
    requirements: readonly { id: string; verdict: RequirementVerdict }[];
    scenarios: readonly { uri: string; name: string; verdict: string }[];
  },
): Comparison {
  const requirementThen = new Map(baseline.requirements.map((r) => [r.id, requirementStanding(r.verdict)]));
  const scenarioThen = new Map(baseline.scenarios.map((s) => [scenarioKey(s), scenarioStanding(s.verdict)]));
  const requirements = new Map(now.requirements.map((r) => [r.id, changeOf(requirementStanding(r.verdict), requirementThen.get(r.id))]));
  const scenarios = new Map(
    now.scenarios.map((s) => [scenarioKey(s), changeOf(scenarioStanding(s.verdict), scenarioThen.get(scenarioKey(s)))]),
  );
  return { requirements, scenarios, counts: { requirements: countOf(requirements), scenarios: countOf(scenarios) } };
}

function countOf(changes: Map<string, Change>): ChangeCounts {
  const counts = Object.fromEntries(CHANGES.map((c) => [c, 0])) as ChangeCounts;
  for (const change of changes.values()) counts[change] += 1;
  return counts;
}

/**
 * The exit code with a baseline: --fail-on any keeps the run's own; --fail-on new lets a run whose failures all
 * failed in the baseline too pass that by, while a new failure, or a waiver that fails the run, still fails it. What
 * is left is the rest of the run's own verdict: a run that could not test every scenario (`untested`) is exit 2, as
 * it would be without the old failures; a night that could not test is never green.
 */
export function exitCodeWithBaseline(
  exitCode: 0 | 1 | 2,
  comparison: Comparison,
  failOn: FailOn,
  problems: readonly string[],
  untested = false,
): 0 | 1 | 2 {
  if (failOn === 'any' || exitCode !== 1) return exitCode;
  const newFailures = comparison.counts.scenarios['new failure'] + comparison.counts.requirements['new failure'];
  if (newFailures > 0 || problems.length > 0) return 1;
  return untested ? 2 : 0;
}
