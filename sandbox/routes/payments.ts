import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { TRANSACTIONS, isServedUnder, operation } from '../../core/catalogue/routes.ts';
import { canonicalAmount, toMinor } from '../../core/money.ts';
import type { SandboxContext } from '../domain/context.ts';
import type { Handler, RouteHandlers } from '../http/serving.ts';
import { sendBadRequest, sendBusinessError } from '../http/replies.ts';
import type { Product } from '../../core/products.ts';
import { idKey, PAYER_KINDS, partyOf, type Party, type Transaction, type TransactionKind } from '../domain/state.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { refuseCallbackUrl } from './callback-url.ts';

interface PaymentBody {
  amount?: string;
  currency?: string;
  externalId?: string;
  payer?: Party;
  payee?: Party;
  payerMessage?: string;
  payeeNote?: string;
  referenceIdToRefund?: string;
}

/** A kind of transaction: the operations that create it and read its status (TRANSACTIONS of the catalogue). */
export interface PaymentKind {
  kind: TransactionKind;
  create: OperationId;
  status: OperationId;
}

/** The sandbox's store of each kind of transaction the catalogue creates; the versions of an operation share one. */
const STORE_OF: Partial<Record<OperationId, TransactionKind>> = {
  requestToPay: 'requesttopay',
  requestToWithdraw: 'requesttowithdraw',
  requestToWithdrawV2: 'requesttowithdraw',
  refund: 'refund',
  refundV2: 'refund',
  deposit: 'deposit',
  depositV2: 'deposit',
  transfer: 'transfer',
};

export const PAYMENT_KINDS: readonly PaymentKind[] = TRANSACTIONS.map(({ create, status }) => {
  const kind = STORE_OF[create];
  if (!kind) throw new Error(`The sandbox keeps no store for ${create}, a creation of the operation catalogue.`);
  return { kind, create, status };
});

const NOT_FOUND = 'Requested resource was not found.';

// The amount schema with its strict reading: what a payable amount is, whether or not the sandbox refuses others.
const amountValidator = validatorFor('amount');

/** How a payment reads its amount: whether it is payable, and if so its minor units and canonical text. */
interface AmountReading {
  amount: string | undefined;
  payable: boolean;
  minor: bigint;
  canonical: string | undefined;
}

/**
 * The reading of the amount read last, kept: a client sends the same amount request after request, and each
 * reading (a validator call, the parse, the canonical text) gives the same result for the same text.
 */
let lastAmount: AmountReading = { amount: undefined, payable: false, minor: 0n, canonical: undefined };

function readAmount(amount: string | undefined): AmountReading {
  if (amount === lastAmount.amount) return lastAmount;
  const payable = amount !== undefined && amountValidator(amount);
  // Parsed once: the stored amount is the canonical form of the same minor units (normaliseAmount).
  const minor = payable ? toMinor(amount) : 0n;
  lastAmount = { amount, payable, minor, canonical: payable ? canonicalAmount(amount, minor) : amount };
  return lastAmount;
}
// The live sandbox rejects these in free text (real-api-notes); only the mtn-sandbox profile does.
const LIVE_FORBIDDEN_CHARACTERS = /['&]/;

/** Request to pay, refund and deposit (§4.2 #2, §4.3 #9–10), their status queries (§4.6) and delivery notification (§4.2 #3). */
export function paymentHandlers(context: SandboxContext): RouteHandlers {
  const handlers: RouteHandlers = { deliveryNotification: (product) => deliveryNotification(context, product!) };
  for (const kind of PAYMENT_KINDS) {
    // A synchronous handler that answers and returns nothing: an async one costs a promise and a microtask a
    // request, and what it throws reaches the error handler all the same.
    handlers[kind.create] = (product) => (request, reply) => {
      createPayment(context, kind, product!, request, reply);
    };
    handlers[kind.status] = (product) => async (request, reply) => {
      // Ownership of a status query is a strict reading (transactionOwnership); the product always counts.
      const tx = context.settings.strict ? ownedTransaction(context, [kind.kind], request) : transactionOf(context, kind.kind, product!, request);
      if (!tx) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
      return reply.send(context.payments.statusRecord(tx));
    };
  }
  return handlers;
}

function createPayment(context: SandboxContext, kind: PaymentKind, product: Product, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { state, ledger, profile, payments } = context;
  const caller = request.caller!;
  // Fastify's headers is a getter: read once.
  const headers = request.headers;
  const referenceId = idKey(headers['x-reference-id'] as string);
  const store = state.transactions[kind.kind];
  if (store.has(referenceId)) {
    return sendBusinessError(reply, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated reference id. Creation of resource failed.');
  }
  const body = request.body as PaymentBody;
  if (profile.strictTextCharacters) {
    const field = (['externalId', 'payerMessage', 'payeeNote'] as const).find((f) => LIVE_FORBIDDEN_CHARACTERS.test(body[f] ?? ''));
    if (field) return sendBadRequest(reply, `Invalid request: body/${field} contains an apostrophe or "&", which the live sandbox rejects (mtn-sandbox profile).`);
  }
  const callbackUrl = headers['x-callback-url'] as string | undefined;
  const refused = refuseCallbackUrl(context, reply, callbackUrl, caller);
  if (refused) return refused;
  if (body.currency === undefined || !ledger.accepts(body.currency)) {
    return sendBusinessError(reply, 500, 'INVALID_CURRENCY', `Currency not supported. This sandbox accepts ${context.settings.currencies.join(', ')}.`);
  }
  const party = kind.kind === 'refund' ? state.transactions.requesttopay.get(idKey(body.referenceIdToRefund ?? ''))?.party : partyOf(body.payer ?? body.payee);
  const { payable, minor: amountMinor, canonical } = readAmount(body.amount);
  const tx: Transaction = {
    kind: kind.kind,
    referenceId,
    apiUserId: caller.id,
    product,
    targetEnvironment: allowedName(context.settings.targetEnvironments, headers['x-target-environment'] as string),
    amountMinor,
    amount: canonical,
    currency: body.currency!,
    externalId: body.externalId,
    party,
    payerMessage: body.payerMessage,
    payeeNote: body.payeeNote,
    referenceIdToRefund: body.referenceIdToRefund && idKey(body.referenceIdToRefund),
    status: 'PENDING',
    callbackUrl,
    callbackMethod: context.settings.callbackMethod === 'documented' ? operation(kind.create).callback!.method : context.settings.callbackMethod,
    refundedMinor: 0n,
    unpayable: !payable ? 'NOT_ALLOWED' : kind.kind !== 'refund' && !party ? (PAYER_KINDS.has(kind.kind) ? 'PAYER_NOT_FOUND' : 'PAYEE_NOT_FOUND') : undefined,
    // Set as the payment goes on; named here, so that every record keeps the shape it was made with (V8 gives a
    // property added later a separate backing store, and each record kept is copied by the collector).
    reason: undefined,
    financialTransactionId: undefined,
    completedAt: undefined,
    timer: undefined,
    lastNotificationAt: undefined,
  };
  // One reading of the clock for the record and an outcome settled at once.
  const now = context.clock.now();
  store.add(referenceId, tx, now);
  payments.begin(tx, now);
  return reply.code(202).send();
}

/**
 * The settings' own string for a name the guards found among them (else the name as sent): a record keeps a string
 * the sandbox holds anyway, where the request's copy would be one more for the collector to move per record.
 */
function allowedName(names: readonly string[], name: string): string {
  for (const known of names) if (known === name) return known;
  return name;
}

/** The transaction of a kind made under a product named by the referenceId path parameter, whoever made it. */
function transactionOf(context: SandboxContext, kind: TransactionKind, product: Product, request: FastifyRequest): Transaction | undefined {
  const tx = context.state.transactions[kind].get(idKey((request.params as { referenceId: string }).referenceId));
  return tx?.product === product ? tx : undefined;
}

/** The caller's transaction of one of these kinds named by the referenceId path parameter. */
function ownedTransaction(context: SandboxContext, kinds: readonly TransactionKind[], request: FastifyRequest): Transaction | undefined {
  const id = idKey((request.params as { referenceId: string }).referenceId);
  for (const kind of kinds) {
    const tx = context.state.transactions[kind].get(id);
    // Another API user's transaction is answered exactly as an unknown one, so ids cannot be probed.
    if (tx && tx.apiUserId === request.caller!.id) return tx;
  }
  return undefined;
}

/** A delivery notification names a transaction of the caller made under the same product (§4.2 #3; beyond it, its own). */
function deliveryNotification(context: SandboxContext, product: Product): Handler {
  const { settings, clock } = context;
  const kinds = [...new Set(PAYMENT_KINDS.filter((k) => isServedUnder(k.create, product)).map((k) => k.kind))];
  return async (request, reply) => {
    const tx = ownedTransaction(context, kinds, request);
    if (!tx) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
    if (tx.status !== 'SUCCESSFUL') {
      return sendBusinessError(reply, 409, 'TRANSACTION_NOT_COMPLETED', `The transaction is ${tx.status}; only a SUCCESSFUL one can be notified.`);
    }
    const now = clock.now();
    if (now - tx.completedAt! > settings.notificationWindowMs) {
      return sendBusinessError(reply, 410, 'EXPIRED', 'The delivery notification opportunity has expired.');
    }
    if (tx.lastNotificationAt !== undefined && now - tx.lastNotificationAt < settings.notificationCooldownMs) {
      return sendBusinessError(reply, 429, 'NOT_ALLOWED', 'Too many delivery notifications for this transaction recently; try again later.');
    }
    tx.lastNotificationAt = now;
    return reply.code(200).send();
  };
}
