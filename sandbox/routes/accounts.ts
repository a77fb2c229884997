import { schemaId } from '../../core/schemas.ts';
import { fromMinor } from '../../core/money.ts';
import type { SandboxContext } from '../app.ts';
import { sendBadRequest, sendBusinessError } from '../http.ts';
import { accountHolderAnswer } from '../outcomes.ts';
import { PRODUCTS } from '../../core/products.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';

const errorSchemaOf = { collection: 'error-set-a', disbursement: 'error-set-b', remittance: 'error-set-b' } as const;

const ID_CHECKS: Record<string, { test: (id: string) => boolean; what: string }> = {
  msisdn: { test: (id) => /^\+?[1-9]\d{6,14}$/.test(id), what: 'an E.164 MSISDN such as 46733123450' },
  email: { test: (id) => /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/.test(id) && id.length <= 254, what: 'an e-mail address' },
  party_code: { test: (id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id), what: 'a UUID' },
};

/** Balances (§4.2 #4, §4.4 #13), account-holder status (§4.2 #8, §4.3 #12) and basic user information (§4.2 #5). */
export function registerAccounts(context: SandboxContext): void {
  const { catalogue, state, settings, profile } = context;

  for (const product of PRODUCTS) {
    catalogue.define({
      id: `${product}.getAccountBalance`,
      summary: `Get account balance (${product})`,
      specSection: product === 'remittance' ? '§4.4 #13' : '§4.4 #13 (the live service has it on every product)',
      method: 'GET',
      url: `/${product}/v1_0/account/balance`,
      product,
      credential: 'bearer',
      requiredHeaders: ['x-target-environment'],
      noBody: true,
      responses: {
        200: { description: 'The balance in the first configured currency.', schema: 'balance' },
        401: { description: 'Missing, expired or foreign access token.', schema: 'oauth-error' },
        500: { description: 'NOT_ALLOWED_TARGET_ENVIRONMENT.', schema: errorSchemaOf[product] },
      },
    }, async (request, reply) => {
      const currency = settings.currencies[0]!;
      return reply.send({ availableBalance: fromMinor(state.balance(request.caller!.id, product, currency)), currency });
    });
  }

  catalogue.define({
    id: 'collection.getAccountBalanceInSpecificCurrency',
    summary: 'Get account balance in a specific currency',
    specSection: '§4.2 #4',
    method: 'GET',
    url: '/collection/v1_0/account/balance/:currency',
    product: 'collection',
    credential: 'bearer',
    requiredHeaders: ['x-target-environment'],
    params: { currency: { $ref: schemaId('currency') } },
    noBody: true,
    responses: {
      200: { description: 'The balance.', schema: 'balance' },
      400: { description: 'Invalid data, e.g. a currency that is not an ISO 4217 code.', schema: 'bad-request' },
      401: { description: 'Missing, expired or foreign access token.', schema: 'oauth-error' },
      500: { description: 'INVALID_CURRENCY or NOT_ALLOWED_TARGET_ENVIRONMENT.', schema: 'error-set-a' },
    },
  }, async (request, reply) => {
    const { currency } = request.params as { currency: string };
    if (!settings.currencies.includes(currency)) {
      return sendBusinessError(reply, 500, 'INVALID_CURRENCY', `Currency not supported. This sandbox accepts ${settings.currencies.join(', ')}.`);
    }
    return reply.send({ availableBalance: fromMinor(state.balance(request.caller!.id, 'collection', currency)), currency });
  });

  for (const product of ['collection', 'disbursement'] as const) {
    catalogue.define({
      id: `${product}.validateAccountHolderStatus`,
      summary: `Validate account holder status (${product})`,
      specSection: product === 'collection' ? '§4.2 #8' : '§4.3 #12',
      method: 'GET',
      url: `/${product}/v1_0/accountholder/:accountHolderIdType/:accountHolderId/active`,
      product,
      credential: 'bearer',
      requiredHeaders: ['x-target-environment'],
      params: {
        accountHolderIdType: { type: 'string', enum: Object.keys(ID_CHECKS), description: 'Lower case, as §4.2 #8 requires.' },
        accountHolderId: { type: 'string', minLength: 1, maxLength: 254 },
      },
      noBody: true,
      responses: {
        200: { description: 'Whether the holder is registered and active.', schema: 'account-holder-status' },
        400: { description: 'Invalid data: an upper-case type, or an id that does not fit its type.', schema: 'bad-request' },
        401: { description: 'Missing, expired or foreign access token.', schema: 'oauth-error' },
        404: { description: 'mtn-sandbox profile only: test number 46733123450.', schema: errorSchemaOf[product] },
        500: { description: 'NOT_ALLOWED, NOT_ALLOWED_TARGET_ENVIRONMENT or INTERNAL_PROCESSING_ERROR (test numbers).', schema: errorSchemaOf[product] },
        503: { description: 'mtn-sandbox profile only: test number 46733123455.', schema: errorSchemaOf[product] },
      },
    }, async (request, reply) => {
      const { accountHolderIdType: idType, accountHolderId: id } = request.params as { accountHolderIdType: string; accountHolderId: string };
      const check = ID_CHECKS[idType]!;
      if (!check.test(id)) return sendBadRequest(reply, `Invalid request: accountHolderId "${id}" is not ${check.what}, as type ${idType} requires.`);
      const answer = accountHolderAnswer(idType, id, profile);
      if (answer.kind === 'error') return sendBusinessError(reply, answer.httpStatus, answer.code, answer.message);
      return reply.send({ result: answer.active });
    });
  }

  catalogue.define({
    id: 'collection.getBasicUserinfo',
    summary: 'Get basic user information',
    specSection: '§4.2 #5',
    method: 'GET',
    url: '/collection/v1_0/accountholder/msisdn/:accountHolderMSISDN/basicuserinfo',
    product: 'collection',
    credential: 'bearer',
    requiredHeaders: ['x-target-environment'],
    params: { accountHolderMSISDN: { $ref: schemaId('msisdn') } },
    noBody: true,
    responses: {
      200: { description: 'Basic information of the holder.', schema: profile.basicUserInfo === 'spec' ? 'basic-user-info' : 'basic-user-info-observed' },
      400: { description: 'Invalid data.', schema: 'bad-request' },
      401: { description: 'Missing, expired or foreign access token.', schema: 'oauth-error' },
      500: { description: 'NOT_ALLOWED_TARGET_ENVIRONMENT.', schema: 'error-set-a' },
    },
  }, async (request, reply) => {
    const { accountHolderMSISDN } = request.params as { accountHolderMSISDN: string };
    return reply.send(basicUserInfo(accountHolderMSISDN, profile));
  });
}

/** The "Sand Box" account holder every sandbox number belongs to (real-api-notes, observed). */
function basicUserInfo(msisdn: string, profile: ProfileBehaviour): Record<string, unknown> {
  if (profile.basicUserInfo === 'observed') {
    return { sub: '0', name: 'Sand Box', given_name: 'Sand', family_name: 'Box', birthdate: '1976-08-13', locale: 'sv_SE', gender: 'MALE', updated_at: 1678355127 };
  }
  return { given_name: 'Sand', family_name: 'Box', birthdate: '1976-08-13', locale: 'sv-SE', gender: 'male', status: msisdn === '46733123451' ? 'INACTIVE' : 'ACTIVE' };
}
