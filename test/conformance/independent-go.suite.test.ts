/**
 * The Go MoMo server written by someone who never saw this code (sandbox-quality/independent/servers.ts) conforms,
 * and the full suite says so in both profiles: exit 0, its own choices at most warnings.
 */
import { test } from 'node:test';
import { assertIndependentServerConforms } from '../support/independent-run.ts';

for (const profile of ['spec', 'mtn-sandbox'] as const)
  test(`the go server, written by someone else with its own choices, conforms in the ${profile} profile`, () =>
    assertIndependentServerConforms('go', profile));
