import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import type { Requirement } from '../../conformance/certification/requirements.ts';
import type { Waiver } from '../../conformance/certification/waivers.ts';
import { runSuite, type SuiteRun } from '../support/suite.ts';
import type { ScenarioOutcome } from '../../conformance/certification/verdicts.ts';
import { sha256, type Manifest } from '../../conformance/certification/bundle.ts';

/** A requirement of a small fixture catalogue: a collection request to pay rule unless told otherwise. */
export function requirement(id: string, more: Partial<Requirement> = {}): Requirement {
  return {
    id,
    section: '§4.2 #2',
    text: `the statement of ${id}`,
    products: ['collection'],
    operations: ['requestToPay'],
    verification: 'scenario',
    ...more,
  };
}

/** A scenario verifying the given requirements, with the ledger's verdict (or 'not run'). */
export function scenario(
  name: string,
  verdict: ScenarioOutcome['verdict'],
  requirements: string[],
  more: Partial<ScenarioOutcome> = {},
): ScenarioOutcome {
  return {
    id: `pickle-${name}`,
    feature: 'Collection',
    name,
    uri: 'features/collection.feature',
    line: 10,
    tags: ['@collection', ...requirements.map((id) => `@req:${id}`)],
    verdict,
    ...more,
  };
}

/** A waiver that holds (of the fixture requirement COL-A) until long after any run. */
export const VALID_WAIVER: Waiver = {
  requirement: 'COL-A',
  reason: 'the gateway fix ships in 2.4 (TICKET-12)',
  owner: 'payments team',
  expires: '2099-12-31',
};

/** A waivers file with the given content (an object is written as JSON), in a folder of its own. */
export function waiversFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'momo-waivers-'));
  const file = join(dir, 'waivers.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** One real run of the smoke scenarios against the embedded sandbox, with its certification folder and report. */
export async function smokeRun(): Promise<{ run: SuiteRun; dir: string; report: CertificationReport }> {
  const run = await runSuite(['--tags', '@smoke', '--parallel', '0']);
  const dir = join(run.reportsDir, 'certification');
  return { run, dir, report: JSON.parse(readFileSync(join(dir, 'certification.json'), 'utf8')) as CertificationReport };
}

/** What a test bundle's manifest says besides its files. */
export const BUNDLE_ABOUT: Omit<Manifest, 'files'> = {
  harness: { name: 'momo-conformance-harness', version: '0.1.0' },
  createdAt: '2026-03-10T12:00:00.000Z',
  target: 'the embedded reference sandbox',
  profile: { name: 'spec', behaviour: { tokenFailureStatus: 401 } },
  configuration: { profile: 'spec' },
  spec: { path: 'spec/momo-api-spec.md', sha256: sha256('# The spec\n') },
};
