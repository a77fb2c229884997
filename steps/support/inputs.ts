import { defineParameterType } from '@cucumber/cucumber';
import { OPERATIONS } from '../../core/catalogue/operations.ts';
import { INPUT_CASES, MISSING_HEADER_ANSWER, inputCase, specCreations } from '../../harness/checks/inputs.ts';
import { ORDINARY_CUSTOMER } from './parties.ts';
import { deposit, refundPayment, requestPayment, type CreateOptions } from './transactions.ts';
import type { MomoWorld } from './world.ts';

/**
 * The input classes of features/inputs.feature (generated from harness/checks/inputs.ts): each creation of the spec
 * sent one input wrong, without one required header, or in one of the forms the spec allows.
 */

const longestFirst = (words: Iterable<string>) => [...new Set(words)].sort((a, b) => b.length - a.length);

defineParameterType({
  name: 'creation',
  regexp: new RegExp(longestFirst(specCreations().map((c) => c.label)).join('|')),
  transformer: (label: string) => label,
});

defineParameterType({
  name: 'input',
  regexp: new RegExp(longestFirst(INPUT_CASES.map((c) => c.phrase)).join('|')),
  transformer: (phrase: string) => phrase,
});

/** Makes the creation with the input the case names: a changed body, another reference id, or a header left out. */
export async function askWithInput(world: MomoWorld, creationLabel: string, phrase: string): Promise<void> {
  const input = inputCase(creationLabel, phrase);
  world.rule = input.rule;
  const options: CreateOptions = {
    ...(input.body ? { body: input.body() } : {}),
    ...(input.referenceId ? { referenceId: typeof input.referenceId === 'function' ? input.referenceId() : input.referenceId } : {}),
    ...(input.omit === 'x-reference-id' ? { call: { referenceId: undefined } } : {}),
    ...(input.omit === 'x-target-environment' ? { call: { targetEnvironment: null } } : {}),
  };
  if (input.creation === 'requestToPay') await requestPayment(world, ORDINARY_CUSTOMER, '5', options);
  else if (input.creation === 'deposit') await deposit(world, ORDINARY_CUSTOMER, '5', options);
  else if (input.creation === 'refund') await refundPayment(world, undefined, options);
  else throw new Error(`No way to make a ${creationLabel} in steps/support/inputs.ts`);
}

/**
 * A creation without a header §4 requires is not served: one of the refusals its listing documents (definite); that
 * the refusal is 400 invalid data, rather than another of them, is our reading (§7 does not say).
 */
export function expectRefusedWithoutHeader(world: MomoWorld): void {
  const response = world.response;
  if (!response) throw new Error('No creation was asked for in this scenario.');
  const refusals = Object.keys(OPERATIONS[response.operation.id].responses)
    .map(Number)
    .filter((status) => status >= 400 && status !== 503);
  world.expect({
    status: refusals,
    ...(world.rule ? { source: world.rule } : {}),
    what: 'a creation without a required header is not served',
  });
  world.expect({ status: 400, source: MISSING_HEADER_ANSWER, what: 'a creation without a required header is refused as invalid data' });
}

/** A form of an input the spec allows is taken: the creation is accepted (202). */
export function expectAcceptedAsValid(world: MomoWorld): void {
  world.expect({ status: 202, ...(world.rule ? { source: world.rule } : {}), what: 'a form of the input the spec allows is accepted' });
}
