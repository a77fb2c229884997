import fc from 'fast-check';
import { callbackHostFindings, TRANSACTION_CHECKS } from '../../harness/checks/transactions.ts';
import { ACCOUNT_CHECKS, currencyFindings } from '../../harness/checks/accounts.ts';
import { observed } from '../../core/sources.ts';
import { picked, type ExplorationModel } from './model.ts';
import { keyNameOf, type ExplorationSession } from './session.ts';
import { ExplorationCommand } from './commands.ts';

/**
 * The commands of the exploration's API users and balance: an API user registered (§4.5 #14), registered again under
 * its id (409, §7 rule 1), given a key (§4.5 #15), getting a token with it (§4.2 #1, §5 rule 2), read back (§4.5 #16,
 * whose record is the live service's); and the collection balance (§4.2 #4, §2.9). Every API user is registered under
 * collection's key, as §4.5 lets any product's key open provisioning, and asks for its token under collection.
 */

/** At most this many API users a sequence registers: the exploration creates only what it tracks, and a few will do. */
const MOST_USERS = 3;
/** The host a second registration names: another than the first's, so that a record replaced by it shows. */
const OTHER_HOST = 'explore.example.com';

/** The API user's record is the live service's (§4.5 #16: "not shown"): a record without the host departs from it only. */
const RECORD_IS_LIVE = observed(
  'real-api-notes, provisioning: GET /v1_0/apiuser/{id} answers {"providerCallbackHost", "targetEnvironment"}',
);

/** A new API user: 201 (§4.5 #14), tracked once created. */
export class RegisterApiUser extends ExplorationCommand {
  check = (model: Readonly<ExplorationModel>) => model.users.length < MOST_USERS;
  toString = () => 'register a new API user';

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const userId = session.newId('u');
    const callbackHost = session.config.callbackHost;
    const response = await session.call({
      operation: 'createApiUser',
      product: 'collection',
      auth: 'none',
      referenceId: userId,
      body: { providerCallbackHost: callbackHost },
    });
    session.expect(response, { status: 201, what: 'a new API user is created' });
    if (response.status !== 201) return;
    model.users.push({ userId, name: session.nameOf(userId) ?? 'user', callbackHost });
    session.created.apiUsers.push(userId);
  }
}

/** An API user's id registered again, with another host: 409 RESOURCE_ALREADY_EXIST (§4.5 #14, §7 rule 1). */
export class RegisterApiUserAgain extends ExplorationCommand {
  constructor(private readonly pick: number) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => model.users.length > 0;
  toString = () => `register API user #${this.pick} again, with another callback host`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const user = picked(model.users, this.pick);
    const response = await session.call({
      operation: 'createApiUser',
      product: 'collection',
      auth: 'none',
      referenceId: user.userId,
      body: { providerCallbackHost: OTHER_HOST },
      reusesReference: true,
    });
    session.expect(response, { status: 409, code: 'RESOURCE_ALREADY_EXIST', what: 'a reused API user id is refused' });
  }
}

/** A key for an API user that has none yet: 201 with {apiKey} (§4.5 #15); the replay keeps it for the token. */
export class CreateApiKey extends ExplorationCommand {
  constructor(private readonly pick: number) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => model.users.some((u) => u.apiKey === undefined);
  toString = () => `make the API key of API user #${this.pick} without one`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const user = picked(
      model.users.filter((u) => u.apiKey === undefined),
      this.pick,
    );
    const response = await session.call({
      operation: 'createApiKey',
      product: 'collection',
      auth: 'none',
      params: { referenceId: user.userId },
    });
    session.expect(response, { status: 201, what: 'an API key is created' });
    const apiKey = (response.json as { apiKey?: unknown } | undefined)?.apiKey;
    if (response.status !== 201 || typeof apiKey !== 'string') return;
    session.redactor.addBasicCredential(user.userId, apiKey);
    session.keep(response, keyNameOf(user), '/apiKey');
    user.apiKey = apiKey;
  }
}

/** An access token with an API user's id and key: 200 (§4.2 #1, §5 rule 2), whatever was registered since. */
export class TokenWithApiKey extends ExplorationCommand {
  constructor(private readonly pick: number) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => model.users.some((u) => u.apiKey !== undefined);
  toString = () => `get an access token with the key of API user #${this.pick}`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const user = picked(
      model.users.filter((u) => u.apiKey !== undefined),
      this.pick,
    );
    const response = await session.call({ operation: 'createAccessToken', product: 'collection', auth: { basic: user } });
    const token = (response.json as { access_token?: unknown } | undefined)?.access_token;
    if (typeof token === 'string') session.redactor.add(token, 'access token');
    session.expect(response, { status: 200, what: 'an API user gets an access token with its key' });
  }
}

/** An API user read back (the record is the live service's): the host it was registered with, where it names one. */
export class ReadApiUser extends ExplorationCommand {
  constructor(private readonly pick: number) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => model.users.length > 0;
  toString = () => `read API user #${this.pick}`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const user = picked(model.users, this.pick);
    const response = await session.call({
      operation: 'getApiUser',
      product: 'collection',
      auth: 'none',
      params: { referenceId: user.userId },
    });
    session.expect(response, { status: 200, what: 'an API user reads back' });
    if (response.status !== 200) return;
    const what = 'the API user reads back with the host it was registered with';
    const check = TRANSACTION_CHECKS['record-echoes-request'];
    session.check('record-echoes-request', response, what, callbackHostFindings(response.json as object, user.callbackHost), [
      {
        kind: 'field',
        pointer: '/providerCallbackHost',
        value: user.callbackHost,
        compare: 'exact',
        weight: session.weightOf(check.source),
        whenMissing: session.weightOf(RECORD_IS_LIVE),
        when: [200],
        why: what,
      },
    ]);
  }
}

/** The collection balance: 200 (§4.2 #4), in the partner's currency (§2.9). */
export class ReadBalance extends ExplorationCommand {
  check = () => true;
  toString = () => 'read the collection balance';

  protected async act(_model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const response = await session.call({ operation: 'getBalance', product: 'collection', auth: { bearer: 'collection' } });
    session.expect(response, { status: 200, what: 'the balance is readable' });
    if (response.status !== 200) return;
    const currency = session.config.currency;
    const what = 'the balance is in the currency the partner trades in';
    const weight = session.weightOf(ACCOUNT_CHECKS['balance-in-currency'].source);
    session.check('balance-in-currency', response, what, currencyFindings((response.json as { currency?: unknown }).currency, currency), [
      { kind: 'field', pointer: '/currency', value: currency, compare: 'exact', weight, whenMissing: weight, when: [200], why: what },
    ]);
  }
}

/** The arbitraries of the API user and balance commands, for fc.commands. */
export function accountCommands(): fc.Arbitrary<ExplorationCommand>[] {
  const pick = fc.nat({ max: 15 });
  return [
    fc.constant(null).map(() => new RegisterApiUser()),
    pick.map((p) => new RegisterApiUserAgain(p)),
    pick.map((p) => new CreateApiKey(p)),
    pick.map((p) => new TokenWithApiKey(p)),
    pick.map((p) => new ReadApiUser(p)),
    fc.constant(null).map(() => new ReadBalance()),
  ];
}
