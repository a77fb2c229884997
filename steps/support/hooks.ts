import { After, AfterAll, AfterStep, Before, BeforeAll, Status, setDefaultTimeout } from '@cucumber/cucumber';
import { loadConfig } from '../../harness/config.ts';
import { TargetUnreachableError } from '../../harness/client/transport-errors.ts';
import { ConformanceFailure, type FailureEvidence } from '../../harness/judging/judge.ts';
import type { Exchange } from '../../harness/client/momo-client.ts';
import { EVALUATIONS_MEDIA_TYPE, WARNINGS_MEDIA_TYPE } from '../../harness/checks/index.ts';
import type { PreflightRefusals } from '../../harness/client/setting-refused.ts';
import { AVAILABILITY_MEDIA_TYPE } from '../../harness/client/careful.ts';
import { Harness } from './harness.ts';
import { currentHarness, setHarness } from './hooks-state.ts';
import type { MomoWorld } from './world.ts';

// The one place the suite reads the environment: the runner (conformance/runner) has put the target's settings there.
const config = loadConfig(process.env);

// A step may wait for the slowest outcome and then make a call, which the careful client may make again for as long
// as its retry budget: its own deadlines end it, not cucumber's 5 s.
setDefaultTimeout(config.slowOutcomeTimeoutMs + config.connectTimeoutMs + config.requestTimeoutMs + config.callRetryBudgetMs + 5_000);

// World parameters the runner (conformance/runner) gives every worker: how many share the run, and so its evidence
// budget; and the settings its preflight found refused, whose scenarios end as not tested.
BeforeAll(async function () {
  const { workers, refusals } = this.parameters as { workers?: number; refusals?: PreflightRefusals };
  const harness = new Harness(config, { workers, refusals });
  await harness.start();
  setHarness(harness);
});

AfterAll(async () => {
  await currentHarness().stop();
  setHarness(undefined);
});

Before(function (this: MomoWorld) {
  this.harness.recordInto((exchange) => this.evidence.push(exchange));
});

// The runner found the target unreachable before the run began (world parameter targetUnreachable): each
// scenario ends here as not tested, with the cause, so that every report still lists every scenario.
Before(function (this: MomoWorld) {
  const cause = (this.parameters as { targetUnreachable?: string }).targetUnreachable;
  if (cause) throw new TargetUnreachableError(cause);
});

// The error of the failing step, kept as it is thrown: cucumber hands the After hook the error of the scenario's
// last step, which after a failure is a skipped step's (none). docs/upstream-reports.md has the report.
AfterStep(function (this: MomoWorld, { error }) {
  if (error !== undefined && this.failedStepError === undefined) this.failedStepError = error;
});

// Every exchange of the scenario, redacted, goes into the reports as its evidence, and every warning (a finding
// this run weighs as a warning: a reading, or an observation in the spec profile) goes with it; and every answer's
// body is held to its schema, including answers no step judged (a status read while polling, a token fetched).
After(async function (this: MomoWorld, { result }) {
  const error = this.failedStepError;
  const bodyFailures = this.harness.takeBodyFailures();
  // Taken before the warnings: each call made again is a warning too, naming the weather it met.
  const availability = this.harness.takeAvailability();
  const warnings = this.harness.takeWarnings();
  const evaluations = this.harness.takeEvaluations();
  this.harness.recordInto(undefined);
  if (warnings.length > 0)
    await this.attach(JSON.stringify(warnings, null, 2), { mediaType: WARNINGS_MEDIA_TYPE, fileName: 'warnings.json' });
  // The checks the scenario made, and how each came out: a requirement's verdict is made of those that cite it.
  if (evaluations.length > 0)
    await this.attach(JSON.stringify(evaluations), { mediaType: EVALUATIONS_MEDIA_TYPE, fileName: 'checks.json' });
  // What the scenario saw of the target's availability: its calls, and those the careful client made again.
  if (Object.keys(availability.calls).length > 0)
    await this.attach(JSON.stringify(availability), { mediaType: AVAILABILITY_MEDIA_TYPE, fileName: 'availability.json' });
  if (this.evidence.length === 0) return;
  // The failure, if any: what its checks found, and which exchange's answer it is about (its reproduction ends there).
  // A definite departure of an answer no step judged fails the scenario whatever else ended it: not tested for a
  // premise that did not hold, or for a target that stopped answering, it still sent a record that departs.
  const failedBody = bodyFailures.length > 0 && !(error instanceof ConformanceFailure);
  const failure = error instanceof ConformanceFailure ? error : failedBody ? bodyFailures[0] : undefined;
  const evidence = {
    passed: result?.status === Status.PASSED && !failedBody,
    exchanges: this.evidence,
    ...(failure ? { failure: failureEvidence(failedBody ? bodyFailures : [failure], this.evidence) } : {}),
  };
  await this.attach(JSON.stringify(evidence, null, 2), { mediaType: 'application/json', fileName: 'evidence.json' });
  if (failedBody)
    throw new ConformanceFailure(
      bodyFailures.map((f) => f.message).join('\n\n'),
      undefined,
      bodyFailures.flatMap((f) => f.findings),
    );
});

/** A failure as the evidence holds it: its findings, and the index of the exchange it is about, when it is about one. */
function failureEvidence(failures: readonly ConformanceFailure[], exchanges: readonly Exchange[]): FailureEvidence {
  const about = failures[0]!.exchange;
  // The evidence budget may have kept the exchange as an omitted copy: the same call, started at the same moment.
  const at =
    about === undefined
      ? -1
      : exchanges.findIndex((e) => e === about || (e.startedAt === about.startedAt && e.operation === about.operation));
  return { findings: failures.flatMap((f) => f.findings), ...(at >= 0 ? { exchange: at } : {}) };
}
