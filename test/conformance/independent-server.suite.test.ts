/**
 * Proof against a server the project did not write (test/support/independent-server.ts): the full suite, in each
 * profile, against a MoMo server written from the spec and the live notes alone, with its own choices wherever the
 * documents leave a point open. It conforms, so the run must say so (exit 0): a failure here is the harness
 * demanding more than the spec (or, in mtn-sandbox, the live service) does. Its choices show as warnings at most.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSuite } from '../support/suite.ts';
import { independentTargetEnv, startIndependentServer } from '../support/independent-server.ts';
import type { ProfileName } from '../../core/profiles.ts';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import { loadRequirements } from '../../conformance/certification/requirements.ts';
import { cites } from '../../conformance/certification/verdicts.ts';

interface Summary {
  totals: Record<string, number>;
  scenarios: { scenario: string; verdict: string; reason?: string; warnings?: { check: string; source: { kind: string } }[] }[];
}

for (const profile of ['spec', 'mtn-sandbox'] as const satisfies readonly ProfileName[]) {
  test(`a server written by someone else, with its own choices, conforms in the ${profile} profile: exit 0, its choices at most warnings`, async () => {
    const server = await startIndependentServer(profile, 'own');
    try {
      const run = await runSuite([], independentTargetEnv(server, profile), 240_000);
      const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as Summary;
      const notPassed = summary.scenarios
        .filter((s) => s.verdict !== 'passed')
        .map((s) => `${s.scenario}: ${s.verdict}\n${s.reason ?? ''}`);
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
      // A requirement's verdict is made of the checks that cite it: each requirement a passing scenario carries must
      // be verified by a check the scenario made, or a failure there would leave the requirement unjudged.
      const catalogue = new Map(loadRequirements().map((r) => [r.id, r]));
      const report = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as CertificationReport;
      const unverified = report.scenarios
        .filter((s) => s.verdict === 'passed')
        .flatMap((s) =>
          s.requirements.filter((id) => !(s.checks ?? []).some((e) => cites(catalogue.get(id)!, e))).map((id) => `${id} in "${s.name}"`),
        );
      assert.deepEqual(unverified, [], 'requirements no check of their scenario verified');
    } finally {
      await server.stop();
    }
  });
}
