import { After, AfterAll, Before, BeforeAll, Status } from '@cucumber/cucumber';
import { Harness } from './harness.ts';
import { currentHarness, setHarness } from './hooks-state.ts';
import type { MomoWorld } from './world.ts';

// The one place the suite reads the environment: the runner (src/runner) has put the target's settings there.
BeforeAll(async function () {
  const harness = new Harness(process.env);
  await harness.start();
  setHarness(harness);
});

AfterAll(async function () {
  await currentHarness().stop();
  setHarness(undefined);
});

Before(function (this: MomoWorld) {
  this.harness.recordInto((exchange) => this.evidence.push(exchange));
});

// Every exchange of the scenario, redacted, goes into the reports as its evidence.
After(async function (this: MomoWorld, { result }) {
  this.harness.recordInto(undefined);
  if (this.evidence.length === 0) return;
  const evidence = { passed: result?.status === Status.PASSED, exchanges: this.evidence };
  await this.attach(JSON.stringify(evidence, null, 2), { mediaType: 'application/json', fileName: 'evidence.json' });
});
