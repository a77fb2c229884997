import { Then, When } from '@cucumber/cucumber';
import { askWithInput, expectAcceptedAsValid, expectRefusedWithoutHeader } from './support/inputs.ts';
import type { MomoWorld } from './support/world.ts';

// Every input of every creation (features/inputs.feature, generated from harness/checks/inputs.ts).

When('the partner asks for a {creation} with {input}', async function (this: MomoWorld, creation: string, input: string) {
  await askWithInput(this, creation, input);
});

When('the partner asks for a {creation} without {input}', async function (this: MomoWorld, creation: string, input: string) {
  await askWithInput(this, creation, input);
});

Then('it is refused, by our reading as invalid', function (this: MomoWorld) {
  expectRefusedWithoutHeader(this);
});

Then('it is accepted as valid', function (this: MomoWorld) {
  expectAcceptedAsValid(this);
});
