/**
 * Proof against servers the project did not write (sandbox-quality/independent/servers.ts): the full suite, in a
 * profile, against a MoMo server written from the spec and the live notes alone by an author who never saw this code,
 * with its own choices wherever the documents leave a point open. It conforms, so the run must say so (exit 0): a
 * failure is the harness demanding more than the spec (or, in mtn-sandbox, the live service) does.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSuite } from './suite.ts';
import { independentTargetEnv, startIndependentServer, type IndependentServerName } from './independent-server.ts';
import type { ProfileName } from '../../core/profiles.ts';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import { loadRequirements } from '../../conformance/certification/requirements.ts';
import { cites } from '../../conformance/certification/verdicts.ts';

/** The tags that leave out the generated cases (features/inputs.feature, every-operation.feature). */
export const GENERATED_LEFT_OUT = 'not @inputs and not @every-operation';

interface Summary {
  totals: Record<string, number>;
  scenarios: { scenario: string; verdict: string; reason?: string; warnings?: { check: string; source: { kind: string } }[] }[];
}

/**
 * The full suite against an independent server in a profile (with its controls, if any): it conforms, so the run must
 * say so, exit 0, its choices at most warnings; and no requirement passes on a scenario whose checks did not verify it.
 */
export async function assertIndependentServerConforms(
  name: IndependentServerName,
  profile: ProfileName,
  options: { controls?: readonly string[]; tags?: string } = {},
): Promise<void> {
  const server = await startIndependentServer(profile, {
    server: name,
    ...(name === 'python' ? { choices: 'own' as const } : {}),
    ...(options.controls ? { controls: options.controls } : {}),
  });
  try {
    const run = await runSuite(options.tags ? ['--tags', options.tags] : [], independentTargetEnv(server, profile), 240_000);
    const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as Summary;
    const notPassed = summary.scenarios.filter((s) => s.verdict !== 'passed').map((s) => `${s.scenario}: ${s.verdict}\n${s.reason ?? ''}`);
    assert.deepEqual(notPassed, [], run.output);
    assert.equal(run.code, 0, run.output);
    assert.ok(summary.totals.passed! >= 90, `${summary.totals.passed} scenarios passed`);
    // Its choices are visible to whoever reads the run: every warning names a check and a source that is not the spec's.
    const warnings = summary.scenarios.flatMap((s) => s.warnings ?? []);
    for (const w of warnings) assert.notEqual(w.source.kind, 'spec', JSON.stringify(w));
    if (profile === 'spec')
      assert.ok(
        warnings.length > 0,
        "the independent server's own choices differ from the live service somewhere; the spec profile says where",
      );
    // A requirement's verdict is made of the checks that cite it: a requirement a passing scenario carries and no check
    // of it verified (the way that held on this target does not pass through it) is never PASS on that scenario alone.
    const catalogue = new Map(loadRequirements().map((r) => [r.id, r]));
    const report = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as CertificationReport;
    const verdictOf = new Map(report.requirements.map((r) => [r.id, r]));
    const unverified = report.scenarios
      .filter((s) => s.verdict === 'passed')
      .flatMap((s) => s.requirements.filter((id) => !(s.checks ?? []).some((e) => cites(catalogue.get(id)!, e))).map((id) => ({ id, s })));
    for (const { id, s } of unverified) {
      const verified = report.scenarios.some(
        (other) =>
          other.verdict === 'passed' && other.requirements.includes(id) && (other.checks ?? []).some((e) => cites(catalogue.get(id)!, e)),
      );
      if (!verified)
        assert.equal(verdictOf.get(id)?.verdict, 'NOT TESTED', `${id}, carried by "${s.name}" and verified by none of its checks`);
    }
  } finally {
    await server.stop();
  }
}
