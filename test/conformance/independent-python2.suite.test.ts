/**
 * The second Python MoMo server, written by a fifth author who never saw this code (sandbox-quality/independent/servers.ts),
 * conforms, and the full suite says so in both profiles: exit 0, its own choices at most warnings. Run first after the
 * checks of this issue were in, it found two classes the suite demanded wrongly in mtn-sandbox (a refused grant's empty
 * 400 body; a balance that never moves taken, after its first warning, as one that moves): docs/mutation.md.
 */
import { test } from 'node:test';
import { assertIndependentServerConforms } from '../support/independent-run.ts';

for (const profile of ['spec', 'mtn-sandbox'] as const)
  test(`the python2 server, written by someone else with its own choices, conforms in the ${profile} profile`, () =>
    assertIndependentServerConforms('python2', profile));
