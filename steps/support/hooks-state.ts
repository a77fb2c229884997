import type { Harness } from './harness.ts';

let harness: Harness | undefined;

/** The worker's harness, set by the BeforeAll hook before any scenario starts. */
export function currentHarness(): Harness {
  if (!harness) throw new Error('The harness is not started: the BeforeAll hook in steps/support/hooks.ts did not run.');
  return harness;
}

export function setHarness(value: Harness | undefined): void {
  harness = value;
}
