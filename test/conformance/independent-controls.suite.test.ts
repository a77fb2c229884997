/**
 * Spec-legal controls the independent servers' authors wrote (each a choice a real provider might ship, which their
 * servers do not make by default): a sample of them, each on a point where the suite once demanded more than the spec
 * (the names of the final states, who may redeem a consent). `npm run mutation` runs every control in every profile
 * it is legal in.
 */
import { test } from 'node:test';
import { assertIndependentServerConforms } from '../support/independent-run.ts';

// The generated cases (inputs, rules of every operation) are left out here to keep CI short: every control in every
// profile it is legal in was run against them (docs/mutation.md, 40 of 40), and `npm run mutation` runs them all.
const tags = 'not @inputs and not @every-operation';

test('the go server naming a successful transaction COMPLETED conforms in the spec profile (§3: names not shown)', () =>
  assertIndependentServerConforms('go', 'spec', { controls: ['success-state-completed'], tags }));

test('the java server that lets only the asking API user redeem a consent conforms in the spec profile', () =>
  assertIndependentServerConforms('java', 'spec', { controls: ['consent-bound-to-client'], tags }));

test('the java server whose new token revokes the earlier one conforms in the spec profile (§2.6 gives a lifetime, not a rule against revocation)', () =>
  assertIndependentServerConforms('java', 'spec', { controls: ['single-live-token'], tags }));
