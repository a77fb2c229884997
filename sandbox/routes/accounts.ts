import type { ValidateFunction } from 'ajv/dist/2020.js';
import { OPERATIONS } from '../../core/catalogue/operations.ts';
import { fromMinor } from '../../core/money.ts';
import { ajv } from '../../core/validation/schemas.ts';
import { TEST_NUMBERS } from '../../core/test-numbers.ts';
import type { SandboxContext } from '../domain/context.ts';
import type { RouteHandlers } from '../http/serving.ts';
import { sendBadRequest, sendBusinessError } from '../http/replies.ts';
import { accountHolderAnswer } from '../domain/outcomes.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';

/** The account holder's id by its type, as the catalogue gives each form (which the OpenAPI document states too). */
const ID_FORMS = OPERATIONS.accountHolderActive.dependentParams!.accountHolderId!.forms;
const idValidators = new Map<string, ValidateFunction>();

/** Whether an id has the form its type asks for; each form's validator is compiled when first asked for. */
function hasFormOf(idType: string, id: string): boolean {
  let validate = idValidators.get(idType);
  if (!validate) idValidators.set(idType, (validate = ajv.compile(ID_FORMS[idType]!.schema)));
  return validate(id);
}

/** Balances (§4.2 #4, §4.4 #13), account-holder status (§4.2 #8, §4.3 #12) and basic user information (§4.2 #5). */
export function accountHandlers(
  context: SandboxContext,
): Pick<RouteHandlers, 'getBalance' | 'getBalanceInCurrency' | 'accountHolderActive' | 'basicUserInfo'> {
  const { ledger, settings, profile } = context;
  return {
    getBalance: (product) => async (request, reply) => {
      const currency = settings.currencies[0]!;
      return reply.send({ availableBalance: fromMinor(ledger.balance(request.caller.id, product!, currency)), currency });
    },

    getBalanceInCurrency: (product) => async (request, reply) => {
      const { currency } = request.params;
      if (!ledger.accepts(currency)) {
        return sendBusinessError(
          reply,
          500,
          'INVALID_CURRENCY',
          `Currency not supported. This sandbox accepts ${settings.currencies.join(', ')}.`,
        );
      }
      return reply.send({ availableBalance: fromMinor(ledger.balance(request.caller.id, product!, currency)), currency });
    },

    accountHolderActive: () => async (request, reply) => {
      const { accountHolderIdType: idType, accountHolderId: id } = request.params;
      if (!hasFormOf(idType, id))
        return sendBadRequest(
          reply,
          `Invalid request: accountHolderId "${id}" is not ${ID_FORMS[idType]!.what}, as type ${idType} requires.`,
        );
      const answer = accountHolderAnswer(idType, id, profile);
      if (answer.kind === 'error') return sendBusinessError(reply, answer.httpStatus, answer.code, answer.message);
      return reply.send({ result: answer.active });
    },

    basicUserInfo: () => async (request, reply) => {
      const { accountHolderMSISDN } = request.params;
      return reply.send(basicUserInfo(accountHolderMSISDN, profile));
    },
  };
}

/** The "Sand Box" account holder every sandbox number belongs to (real-api-notes, observed). */
function basicUserInfo(msisdn: string, profile: ProfileBehaviour): Record<string, unknown> {
  if (profile.basicUserInfo === 'observed') {
    return {
      sub: '0',
      name: 'Sand Box',
      given_name: 'Sand',
      family_name: 'Box',
      birthdate: '1976-08-13',
      locale: 'sv_SE',
      gender: 'MALE',
      updated_at: 1678355127,
    };
  }
  return {
    given_name: 'Sand',
    family_name: 'Box',
    birthdate: '1976-08-13',
    locale: 'sv-SE',
    gender: 'male',
    status: msisdn === TEST_NUMBERS.rejects.msisdn ? 'INACTIVE' : 'ACTIVE',
  };
}
