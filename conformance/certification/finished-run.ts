import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import type { HarnessConfig } from '../../harness/config.ts';
import { behaviourOf } from '../../core/profiles.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import type { RunSummary } from '../results/verdict-stream.ts';
import { filesUnder } from '../../harness/secrets/leak-scan.ts';
import { sha256, writeBundle, type BundleEntry } from './bundle.ts';
import type { EvidenceCollector } from './evidence.ts';
import type { KeyObject } from 'node:crypto';
import { keyIdOf, signStatement, statementOf, type Subject, type TestResult } from './signing.ts';
import { writeHarFiles } from './har-files.ts';
import { reproductionsOf, writeReproductions, type ReproductionTarget } from './reproductions.ts';
import { renderHtml } from './html.ts';
import { certificationJunit } from './certification-junit.ts';
import { buildReport, closingLines, shortPath, type CertificationReport, type ReportInputs } from './report.ts';
import { loadRequirements, type Requirement } from './requirements.ts';
import { loadWaivers, waiversFileOf, type Waiver } from './waivers.ts';

/**
 * The spec the catalogue's requirements are read from: a copy kept beside the catalogue, so that a clone of the
 * project alone certifies against (and bundles) the text its requirements cite. test/certification checks the
 * copy against the shared original where there is one.
 */
export const SPEC_FILE = join(PACKAGE_ROOT, 'requirements/momo-api-spec.md');
const PACKAGE_FILE = join(PACKAGE_ROOT, 'package.json');

/** What a finished conformance run hands to the certification. */
export interface CertificationInputs {
  /** Where the certification goes (reports/certification). */
  dir: string;
  /** Where the run wrote its conformance reports: all of them go into the bundle. */
  conformanceDir: string;
  config: HarnessConfig;
  summary: RunSummary;
  evidence: EvidenceCollector;
  requirements: readonly Requirement[];
  waivers: readonly Waiver[];
  requested: string | undefined;
  expression: string;
  /** With --rerun-failed: the summary.json whose failed scenarios were run again. */
  rerunOf?: string;
  /** The earlier run to compare with (--baseline) and what then fails the run (--fail-on). */
  baseline?: ReportInputs['baseline'];
  /** The moment of the certification; tests fix it. */
  now?: Date;
  specFile?: string;
  /** The Ed25519 private key (run --sign-key) that signs the bundle's attestation; unsigned without it. */
  signingKey?: KeyObject;
  /** Where the run found its target, which the reproduction scripts default to. */
  target: ReproductionTarget;
}

export interface CertificationOutput {
  report: CertificationReport;
  indexHtml: string;
  bundle: string;
  /** What `npm start` prints at its end. */
  lines: string[];
}

/**
 * Writes reports/certification: index.html, certification.json, junit.xml (a test case per requirement) and the bundle of every artifact of the run
 * (the conformance reports, the certification, a copy of the spec) with its manifest of SHA-256 hashes.
 */
export async function writeCertification(inputs: CertificationInputs): Promise<CertificationOutput> {
  const now = inputs.now ?? new Date();
  const specFile = inputs.specFile ?? SPEC_FILE;
  const spec = existsSync(specFile) ? { file: basename(specFile), sha256: sha256(readFileSync(specFile)) } : null;
  const harness = harnessPackage();
  const scenarios = inputs.evidence.scenarios(inputs.summary.scenarios);
  const reproductions = reproductionsOf(scenarios, inputs.target);
  const report = buildReport({
    harness,
    generatedAt: now,
    spec,
    summary: inputs.summary,
    requirements: inputs.requirements,
    scenarios,
    reproductions,
    waivers: inputs.waivers,
    run: {
      profile: inputs.config.profile,
      ...(inputs.requested ? { requested: inputs.requested } : {}),
      expression: inputs.expression,
      ...(inputs.rerunOf ? { rerunOf: inputs.rerunOf } : {}),
    },
    ...(inputs.baseline ? { baseline: inputs.baseline } : {}),
  });
  const dir = resolve(inputs.dir);
  const indexHtml = writePages(dir, report, inputs.conformanceDir);
  // Each scenario's exchanges as HAR 1.2, beside the conformance reports: the bundle takes them in with those.
  writeHarFiles(inputs.conformanceDir, report.scenarios, harness, now);
  writeReproductions(inputs.conformanceDir, reproductions.values());
  const bundle = join(dir, `certification-${now.toISOString().replace(/[:.]/g, '-')}.tar.gz`);
  await writeEvidenceBundle(bundle, { dir, specFile, spec, harness, now, report }, inputs);
  return { report, indexHtml, bundle, lines: certificationLines(report, { indexHtml, bundle }, inputs) };
}

/** index.html, certification.json and junit.xml, in a folder cleared of an earlier run's; the page's path. */
function writePages(dir: string, report: CertificationReport, conformanceDir: string): string {
  mkdirSync(dir, { recursive: true });
  // The folder is one run's certification: an earlier run's files (its bundle above all) would mislead.
  for (const name of readdirSync(dir))
    if (name === 'index.html' || name === 'certification.json' || name === 'junit.xml' || /^certification-.*\.tar\.gz$/.test(name))
      rmSync(join(dir, name));
  const indexHtml = join(dir, 'index.html');
  writeFileSync(join(dir, 'certification.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, 'junit.xml'), certificationJunit(report));
  writeFileSync(indexHtml, renderHtml(report, { conformanceHref: relative(dir, resolve(conformanceDir)).split(sep).join('/') }));
  return indexHtml;
}

/** The bundle of every artifact of the run (the conformance reports, the certification, the spec), signed when asked. */
async function writeEvidenceBundle(
  bundle: string,
  {
    dir,
    specFile,
    spec,
    harness,
    now,
    report,
  }: {
    dir: string;
    specFile: string;
    spec: { file: string; sha256: string } | null;
    harness: ReturnType<typeof harnessPackage>;
    now: Date;
    report: CertificationReport;
  },
  inputs: CertificationInputs,
): Promise<void> {
  const entries: BundleEntry[] = [
    ...entriesUnder(inputs.conformanceDir, 'conformance', dir),
    ...entriesUnder(dir, 'certification'),
    ...(spec ? [{ path: `spec/${spec.file}`, source: specFile }] : []),
  ];
  await writeBundle(
    bundle,
    entries,
    {
      harness,
      createdAt: now.toISOString(),
      target: inputs.summary.target,
      profile: { name: inputs.config.profile, behaviour: behaviourOf(inputs.config.profile) },
      configuration: withoutSecrets(inputs.config),
      spec: spec ? { path: `spec/${spec.file}`, sha256: spec.sha256 } : null,
    },
    inputs.signingKey && ((subjects) => signStatement(statementOf(subjects, testResultOf(report, subjects)), inputs.signingKey!)),
  );
}

/** What the run says of its certification: the verdict when waivers or a baseline changed it, the bundle, its signature. */
function certificationLines(
  report: CertificationReport,
  { indexHtml, bundle }: { indexHtml: string; bundle: string },
  inputs: CertificationInputs,
): string[] {
  const lines = closingLines(report, indexHtml, inputs.conformanceDir);
  if (report.exitCode !== inputs.summary.exitCode) {
    const verdict = {
      conforms: 'the target conforms',
      'does not conform': 'the target does NOT conform',
      'could not test': 'the run could NOT test the target fully',
    }[report.outcome];
    lines.push(
      `Certification verdict: ${verdict} (exit code ${report.exitCode}), with the waivers${report.baseline ? ` and --fail-on ${report.baseline.failOn}` : ''} counted.`,
    );
  }
  lines.push(
    `Evidence bundle: ${bundle} (SHA-256 ${sha256(readFileSync(bundle))}); check it with momo-harness verify ${shortPath(bundle)}`,
  );
  if (inputs.signingKey)
    lines.push(
      `Signed by key ${keyIdOf(inputs.signingKey)}: a reviewer checks it with momo-harness verify ${shortPath(bundle)} --key <your public key file>`,
    );
  return lines;
}

/**
 * The test-result predicate of the run: its requirements by verdict (WARN and WAIVED are warned), PASSED when
 * it conforms, WARNED when it conforms only with warnings or waivers, FAILED otherwise (a run that could not
 * test is never a pass); its configuration is the spec the requirements were read from.
 */
function testResultOf(report: CertificationReport, subjects: Subject[]): TestResult {
  const ids = (...verdicts: string[]) => report.requirements.filter((r) => verdicts.includes(r.verdict)).map((r) => r.id);
  const warnedTests = ids('WARN', 'WAIVED');
  return {
    result: report.exitCode !== 0 ? 'FAILED' : warnedTests.length > 0 ? 'WARNED' : 'PASSED',
    configuration: subjects.filter((s) => s.name.startsWith('spec/')),
    passedTests: ids('PASS'),
    warnedTests,
    failedTests: ids('FAIL'),
  };
}

/** The files under a folder as bundle entries under `prefix/`, less a folder nested in it (`except`) and earlier bundles. */
function entriesUnder(dir: string, prefix: string, except?: string): BundleEntry[] {
  return filesUnder(resolve(dir))
    .filter((file) => !(except && (file + sep).startsWith(resolve(except) + sep)) && !file.endsWith('.tar.gz'))
    .map((file) => ({ path: `${prefix}/${relative(resolve(dir), file).split(sep).join('/')}`, source: file }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

function harnessPackage(): { name: string; version: string } {
  const { name, version } = JSON.parse(readFileSync(PACKAGE_FILE, 'utf8')) as { name: string; version: string };
  return { name, version };
}

/**
 * The configuration as the manifest records it: subscription keys and API keys replaced by [REDACTED] (or
 * null when not set), and any credentials written into a URL removed.
 */
export function withoutSecrets(config: HarnessConfig): Record<string, unknown> {
  const redacted = (value: string | undefined) => (value === undefined ? null : '[REDACTED]');
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(config)) {
    out[name] = typeof value === 'string' && /^https?:\/\//.test(value) ? withoutCredentials(value) : (value ?? null);
  }
  out.subscriptionKeys = Object.fromEntries(Object.entries(config.subscriptionKeys).map(([product, key]) => [product, redacted(key)]));
  out.apiUsers = Object.fromEntries(
    Object.entries(config.apiUsers).map(([product, user]) => [product, user ? { userId: user.userId, apiKey: '[REDACTED]' } : null]),
  );
  return out;
}

function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.toString().replace(/\/$/, '');
}

/**
 * The requirement catalogue and the waivers of a run, read before the target is touched: a mistake in
 * either is a configuration error (CatalogueError, WaiverError), not a finding after a long run.
 */
export function loadCatalogueAndWaivers(
  cwd: string,
  waiversSetting: string | undefined,
): { requirements: Requirement[]; waivers: Waiver[] } {
  const requirements = loadRequirements();
  const waiversFile = waiversFileOf(cwd, waiversSetting);
  return { requirements, waivers: waiversFile ? loadWaivers(waiversFile, new Set(requirements.map((r) => r.id))) : [] };
}
