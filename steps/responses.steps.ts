import { Then } from '@cucumber/cucumber';
import type { MomoWorld } from './support/world.ts';

// How the target answered the last request: the outcomes every feature shares. Each status cites where the
// catalogue says it comes from for the operation called (harness/checks/contract.ts statusSourceOf).

Then('it is created', function (this: MomoWorld) {
  this.expect({ status: 201, what: 'the resource is created' });
});

Then('it is created with a key', function (this: MomoWorld) {
  this.expect({ status: 201, what: 'an API key is created' });
});

Then('it is accepted', function (this: MomoWorld) {
  this.expect({ status: 202, what: 'the transaction is accepted' });
});

Then('it is refused as a duplicate', function (this: MomoWorld) {
  this.expect({ status: 409, code: 'RESOURCE_ALREADY_EXIST', what: 'a reused reference id is refused' });
});

Then('it is refused as not found', function (this: MomoWorld) {
  this.expect({ status: 404, code: 'RESOURCE_NOT_FOUND', ...(this.rule ? { source: this.rule } : {}), what: 'an unknown id is refused' });
});

Then('it is refused as invalid', function (this: MomoWorld) {
  this.expect({ status: 400, ...(this.rule ? { source: this.rule } : {}), what: 'invalid data is refused' });
});

Then('it is refused for the target environment', function (this: MomoWorld) {
  this.expect({ status: 500, code: 'NOT_ALLOWED_TARGET_ENVIRONMENT', what: 'a target environment the partner may not use is refused' });
});

Then('it is refused as unauthorized', function (this: MomoWorld) {
  this.expect({ status: 401, ...(this.rule ? { source: this.rule } : {}), what: 'the caller is not authorized' });
});
