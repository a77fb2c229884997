/**
 * features/inputs.feature is generated from the input classes of the spec's creations (harness/checks/inputs.ts):
 * it must be what they give now, and they must reach every creation that has each input.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { INPUT_CASES, inputCase, specCreations } from '../../harness/checks/inputs.ts';
import { OPERATIONS } from '../../core/catalogue/operations.ts';

test('features/inputs.feature is what the input classes give (npm run generate:features)', () => {
  const script = fileURLToPath(new URL('../../scripts/generate-features.ts', import.meta.url));
  const check = spawnSync(process.execPath, ['--import', 'tsx', script, '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
});

test('the creations are the spec listing’s: request to pay, refund and deposit, each with what its body has', () => {
  const creations = specCreations();
  assert.deepEqual(creations.map((c) => c.id).sort(), ['deposit', 'refund', 'requestToPay']);
  const byId = Object.fromEntries(creations.map((c) => [c.id, c]));
  assert.equal(byId.requestToPay!.party, 'payer');
  assert.equal(byId.deposit!.party, 'payee');
  assert.equal(byId.refund!.party, undefined, 'a refund names no party: it goes to the payer of what it refunds');
  assert.deepEqual(byId.refund!.uuidFields, ['referenceIdToRefund']);
  for (const c of creations) {
    assert.deepEqual(c.requiredHeaders, ['x-reference-id', 'x-target-environment'], c.id);
    assert.deepEqual(c.texts, ['payerMessage', 'payeeNote'], c.id);
  }
});

test('every class reaches every creation that has its input', () => {
  for (const c of specCreations()) {
    const cases = INPUT_CASES.filter((i) => i.creation === c.id);
    const phrases = cases.map((i) => i.phrase);
    for (const header of ['a reference id', 'a target environment'])
      assert.ok(
        cases.some((i) => i.kind === 'missing-header' && i.phrase === header),
        `${c.id} without ${header}`,
      );
    assert.ok(phrases.includes('an amount given as a number, not a string'), `${c.id}: amount as a number`);
    assert.ok(phrases.includes('a reference id that is not a UUID'), `${c.id}: reference id`);
    assert.ok(phrases.includes('a payee note longer than 160 characters'), `${c.id}: text bound`);
    if (c.party) {
      for (const kind of [
        'number that is not a phone number',
        'e-mail address that is not an e-mail address',
        'party code that is not a UUID',
      ])
        assert.ok(phrases.includes(`a ${c.party} ${kind}`), `${c.id}: ${kind}`);
      for (const form of ['identified by an e-mail address', 'identified by a party code', 'whose number has all 15 digits E.164 allows'])
        assert.ok(
          cases.some((i) => i.kind === 'valid' && i.phrase === `a ${c.party} ${form}`),
          `${c.id}: ${form} accepted`,
        );
    }
  }
});

test('each case weighs what its source allows: the spec’s definite, the live text bound observed, readings a warning or only with --strict', () => {
  for (const i of INPUT_CASES) {
    if (i.strict) assert.equal(i.rule.kind, 'reading', i.phrase);
    else if (/longer than 160|exactly 160|accented letters/.test(i.phrase)) assert.equal(i.rule.kind, 'observed', i.phrase);
    // Readings run by default, so that a target that departs is warned: a party kind in lower case, an https callback,
    // an e-mail with a sub-address, a reference id in another dress than RFC 9562's string form.
    else if (/written in lower case|callback address over https|sub-address|without its hyphens|in braces/.test(i.phrase))
      assert.equal(i.rule.kind, 'reading', i.phrase);
    else assert.equal(i.rule.kind, 'spec', `${i.creation}: ${i.phrase}`);
  }
});

test('a valid form is new at every call: two asks never send the same e-mail address or party code', () => {
  const valid = INPUT_CASES.filter((i) => i.kind === 'valid' && /e-mail address|party code|15 digits/.test(i.phrase));
  assert.ok(valid.length >= 6, 'three valid forms of each party');
  for (const i of valid) assert.notDeepEqual(i.body!('EUR'), i.body!('EUR'), i.phrase);
});

test('a case that is not there is named with what there is, in the words to fix the feature', () => {
  assert.throws(
    () => inputCase('deposit', 'a payer number that is not a phone number'),
    /No input case .* for a deposit; .*a payee number/,
  );
  assert.throws(
    () => inputCase('transfer', 'an amount of zero'),
    /"transfer" is not a creation of the spec: request to pay, refund, deposit/,
  );
  assert.ok(Object.keys(OPERATIONS.deposit.responses).includes('400'), 'a deposit documents 400');
});
