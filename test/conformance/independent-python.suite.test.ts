/**
 * The Python MoMo server written by someone who never saw this code (sandbox-quality/independent/servers.ts) conforms,
 * and the full suite says so in both profiles: exit 0, its own choices at most warnings.
 */
import { test } from 'node:test';
import { GENERATED_LEFT_OUT, assertIndependentServerConforms } from '../support/independent-run.ts';

// The generated cases (inputs, rules of every operation) run in the spec profile here, to keep CI short; in
// mtn-sandbox they ran against every server and control (docs/mutation.md), and `npm run mutation` runs them all.
for (const profile of ['spec', 'mtn-sandbox'] as const)
  test(`the python server, written by someone else with its own choices, conforms in the ${profile} profile`, () =>
    assertIndependentServerConforms('python', profile, profile === 'spec' ? {} : { tags: GENERATED_LEFT_OUT }));
