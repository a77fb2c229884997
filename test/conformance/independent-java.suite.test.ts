/**
 * The Java MoMo server written by someone who never saw this code (sandbox-quality/independent/servers.ts) conforms,
 * and the full suite says so in both profiles: exit 0, its own choices at most warnings.
 */
import { test } from 'node:test';
import { GENERATED_LEFT_OUT, assertIndependentServerConforms } from '../support/independent-run.ts';

// The generated cases (inputs, rules of every operation) are left out here, to keep CI short: the python, python2 and
// go servers run them in the spec profile in `npm test`; every server and control ran them in both profiles
// (docs/mutation.md), and `npm run mutation` runs them all.
for (const profile of ['spec', 'mtn-sandbox'] as const)
  test(`the java server, written by someone else with its own choices, conforms in the ${profile} profile`, () =>
    assertIndependentServerConforms('java', profile, { tags: GENERATED_LEFT_OUT }));
