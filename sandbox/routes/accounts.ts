import { fromMinor } from '../../core/money.ts';
import { TEST_NUMBERS } from '../../core/test-numbers.ts';
import type { SandboxContext } from '../domain/context.ts';
import type { RouteHandlers } from '../http/serving.ts';
import { sendBadRequest, sendBusinessError } from '../http/replies.ts';
import { accountHolderAnswer } from '../domain/outcomes.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';

const ID_CHECKS: Record<string, { test: (id: string) => boolean; what: string }> = {
  msisdn: { test: (id) => /^\+?[1-9]\d{6,14}$/.test(id), what: 'an E.164 MSISDN such as 46733123450' },
  email: { test: (id) => /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/.test(id) && id.length <= 254, what: 'an e-mail address' },
  party_code: { test: (id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id), what: 'a UUID' },
};

/** Balances (§4.2 #4, §4.4 #13), account-holder status (§4.2 #8, §4.3 #12) and basic user information (§4.2 #5). */
export function accountHandlers(
  context: SandboxContext,
): Pick<RouteHandlers, 'getBalance' | 'getBalanceInCurrency' | 'accountHolderActive' | 'basicUserInfo'> {
  const { ledger, settings, profile } = context;
  return {
    getBalance: (product) => async (request, reply) => {
      const currency = settings.currencies[0]!;
      return reply.send({ availableBalance: fromMinor(ledger.balance(request.caller!.id, product!, currency)), currency });
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
      return reply.send({ availableBalance: fromMinor(ledger.balance(request.caller!.id, product!, currency)), currency });
    },

    accountHolderActive: () => async (request, reply) => {
      const { accountHolderIdType: idType, accountHolderId: id } = request.params;
      const check = ID_CHECKS[idType]!;
      if (!check.test(id))
        return sendBadRequest(reply, `Invalid request: accountHolderId "${id}" is not ${check.what}, as type ${idType} requires.`);
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
