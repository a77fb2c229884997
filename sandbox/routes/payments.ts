import type { FastifyReply } from 'fastify';
import type { CreationId, StatusQueryId, TransactionStore } from '../../core/catalogue/operations.ts';
import type { RequestBodies } from '../../core/catalogue/request-bodies.generated.ts';
import { TRANSACTIONS, isServedUnder, operation } from '../../core/catalogue/routes.ts';
import { fromMinor, toMinor } from '../../core/money.ts';
import type { SandboxContext } from '../domain/context.ts';
import type { Handler, RequestOf, RouteHandlers } from '../http/serving.ts';
import { sendBadRequest, sendBusinessError, type OperationReply } from '../http/replies.ts';
import type { Product } from '../../core/products.ts';
import { idKey, PAYER_KINDS, partyOf, type Transaction } from '../domain/state.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { refuseCallbackUrl } from './callback-url.ts';

/** The body of any creation: each creation's own body (RequestOf<CreationId>) is one of these, with the fields it has. */
type CreationBody = Partial<
  RequestBodies['request-to-pay'] & RequestBodies['deposit'] & RequestBodies['refund'] & RequestBodies['transfer']
>;

/** A creation's request as the payment takes it. */
type CreationRequest = Pick<RequestOf<CreationId>, 'caller' | 'headers'> & { body: CreationBody };

const NOT_FOUND = 'Requested resource was not found.';

// The amount schema with its strict reading: what a payable amount is, whether or not the sandbox refuses others.
const amountValidator = validatorFor('amount');

/** Whether a payment's amount is payable, and if so its minor units and canonical text (as the live sandbox answers it). */
function readAmount(amount: string | undefined): { payable: boolean; minor: bigint; canonical: string | undefined } {
  if (amount === undefined || !amountValidator(amount)) return { payable: false, minor: 0n, canonical: amount };
  const minor = toMinor(amount);
  return { payable: true, minor, canonical: fromMinor(minor) };
}

// The live sandbox rejects these in free text (real-api-notes); only the mtn-sandbox profile does.
const LIVE_FORBIDDEN_CHARACTERS = /['&]/;

/**
 * Request to pay, refund and deposit (§4.2 #2, §4.3 #9–10), the creations beyond the spec, their status queries
 * (§4.6) and the delivery notification (§4.2 #3). Each creation keeps its record in the store the catalogue names.
 */
export function paymentHandlers(context: SandboxContext): Pick<RouteHandlers, CreationId | StatusQueryId | 'deliveryNotification'> {
  const creation = (id: CreationId) => {
    const store = TRANSACTIONS.find((t) => t.create === id)!.store;
    // A synchronous handler that answers and returns nothing: an async one costs a promise and a microtask a
    // request, and what it throws reaches the error handler all the same.
    return (product: Product | undefined) =>
      (request: CreationRequest, reply: OperationReply<CreationId>): void => {
        createPayment(context, id, store, product!, request, reply);
      };
  };
  const statusQuery = (id: StatusQueryId) => {
    const store = TRANSACTIONS.find((t) => t.status === id)!.store;
    return (product: Product | undefined) => async (request: NamingATransaction, reply: OperationReply<StatusQueryId>) => {
      // Ownership of a status query is a strict reading (transactionOwnership); the product always counts.
      const tx = context.settings.strict ? ownedTransaction(context, [store], request) : transactionOf(context, store, product!, request);
      if (!tx) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
      return reply.send(context.payments.statusRecord(tx));
    };
  };
  return {
    requestToPay: creation('requestToPay'),
    requestToWithdraw: creation('requestToWithdraw'),
    requestToWithdrawV2: creation('requestToWithdrawV2'),
    refund: creation('refund'),
    refundV2: creation('refundV2'),
    deposit: creation('deposit'),
    depositV2: creation('depositV2'),
    transfer: creation('transfer'),
    getRequestToPayStatus: statusQuery('getRequestToPayStatus'),
    getRequestToWithdrawStatus: statusQuery('getRequestToWithdrawStatus'),
    getRefundStatus: statusQuery('getRefundStatus'),
    getDepositStatus: statusQuery('getDepositStatus'),
    getTransferStatus: statusQuery('getTransferStatus'),
    deliveryNotification: (product) => deliveryNotification(context, product!),
  };
}

function createPayment(
  context: SandboxContext,
  id: CreationId,
  store: TransactionStore,
  product: Product,
  request: CreationRequest,
  reply: OperationReply<CreationId>,
): FastifyReply {
  // Fastify's headers is a getter: read once.
  const headers = request.headers;
  const referenceId = idKey(headers['x-reference-id']);
  const callbackUrl = headers['x-callback-url'];
  const refused = refusalOf(context, store, referenceId, callbackUrl, request, reply);
  if (refused) return refused;
  const targetEnvironment = headers['x-target-environment'];
  const tx = newTransaction(context, { id, store, product, referenceId, callbackUrl, targetEnvironment }, request);
  // One reading of the clock for the record and an outcome settled at once.
  const now = context.clock.now();
  context.state.transactions[store].add(referenceId, tx, now);
  context.payments.begin(tx, now);
  context.state.journal?.transaction(tx);
  return reply.code(202).send();
}

/** A creation refused before anything is stored: a reused reference id, text the live sandbox rejects, a refused callback URL, a currency not taken. */
function refusalOf(
  context: SandboxContext,
  store: TransactionStore,
  referenceId: string,
  callbackUrl: string | undefined,
  request: CreationRequest,
  reply: OperationReply<CreationId>,
): FastifyReply | undefined {
  if (context.state.transactions[store].has(referenceId))
    return sendBusinessError(reply, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated reference id. Creation of resource failed.');
  const { body } = request;
  if (context.profile.strictTextCharacters) {
    const field = (['externalId', 'payerMessage', 'payeeNote'] as const).find((f) => LIVE_FORBIDDEN_CHARACTERS.test(body[f] ?? ''));
    if (field)
      return sendBadRequest(
        reply,
        `Invalid request: body/${field} contains an apostrophe or "&", which the live sandbox rejects (mtn-sandbox profile).`,
      );
  }
  const refused = refuseCallbackUrl(context, reply, callbackUrl, request.caller);
  if (refused) return refused;
  if (body.currency === undefined || !context.ledger.accepts(body.currency))
    return sendBusinessError(
      reply,
      500,
      'INVALID_CURRENCY',
      `Currency not supported. This sandbox accepts ${context.settings.currencies.join(', ')}.`,
    );
  return undefined;
}

/** The transaction a creation asks for, PENDING; one that cannot be paid says why, for the engine to fail it. */
function newTransaction(
  context: SandboxContext,
  {
    id,
    store,
    product,
    referenceId,
    callbackUrl,
    targetEnvironment,
  }: {
    id: CreationId;
    store: TransactionStore;
    product: Product;
    referenceId: string;
    callbackUrl: string | undefined;
    targetEnvironment: string;
  },
  request: CreationRequest,
): Transaction {
  const { body } = request;
  const party =
    store === 'refund'
      ? context.state.transactions.requesttopay.get(idKey(body.referenceIdToRefund ?? ''))?.party
      : partyOf(body.payer ?? body.payee);
  const { payable, minor: amountMinor, canonical } = readAmount(body.amount);
  return {
    kind: store,
    referenceId,
    apiUserId: request.caller.id,
    product,
    targetEnvironment,
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
    callbackMethod: context.settings.callbackMethod === 'documented' ? operation(id).callback!.method : context.settings.callbackMethod,
    refundedMinor: 0n,
    unpayable: !payable
      ? 'NOT_ALLOWED'
      : store !== 'refund' && !party
        ? PAYER_KINDS.has(store)
          ? 'PAYER_NOT_FOUND'
          : 'PAYEE_NOT_FOUND'
        : undefined,
    // Set as the payment goes on.
    reason: undefined,
    financialTransactionId: undefined,
    completedAt: undefined,
    timer: undefined,
    lastNotificationAt: undefined,
  };
}

/** A request whose path names a transaction by its reference id: a status query or a delivery notification. */
type NamingATransaction = Pick<RequestOf<StatusQueryId | 'deliveryNotification'>, 'caller'> & { params: { referenceId: string } };

/** The transaction of a kind made under a product named by the referenceId path parameter, whoever made it. */
function transactionOf(
  context: SandboxContext,
  store: TransactionStore,
  product: Product,
  request: NamingATransaction,
): Transaction | undefined {
  const tx = context.state.transactions[store].get(idKey(request.params.referenceId));
  return tx?.product === product ? tx : undefined;
}

/** The caller's transaction of one of these kinds named by the referenceId path parameter. */
function ownedTransaction(
  context: SandboxContext,
  stores: readonly TransactionStore[],
  request: NamingATransaction,
): Transaction | undefined {
  const id = idKey(request.params.referenceId);
  for (const store of stores) {
    const tx = context.state.transactions[store].get(id);
    // Another API user's transaction is answered exactly as an unknown one, so ids cannot be probed.
    if (tx && tx.apiUserId === request.caller.id) return tx;
  }
  return undefined;
}

/** A delivery notification names a transaction of the caller made under the same product (§4.2 #3; beyond it, its own). */
function deliveryNotification(context: SandboxContext, product: Product): Handler<'deliveryNotification'> {
  const { settings, clock } = context;
  const stores = [...new Set(TRANSACTIONS.filter((t) => isServedUnder(t.create, product)).map((t) => t.store))];
  return async (request, reply) => {
    const tx = ownedTransaction(context, stores, request);
    if (!tx) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
    if (tx.status !== 'SUCCESSFUL') {
      return sendBusinessError(
        reply,
        409,
        'TRANSACTION_NOT_COMPLETED',
        `The transaction is ${tx.status}; only a SUCCESSFUL one can be notified.`,
      );
    }
    const now = clock.now();
    if (now - tx.completedAt! > settings.notificationWindowMs) {
      return sendBusinessError(reply, 410, 'EXPIRED', 'The delivery notification opportunity has expired.');
    }
    if (tx.lastNotificationAt !== undefined && now - tx.lastNotificationAt < settings.notificationCooldownMs) {
      return sendBusinessError(
        reply,
        429,
        'NOT_ALLOWED',
        'Too many delivery notifications for this transaction recently; try again later.',
      );
    }
    tx.lastNotificationAt = now;
    context.state.journal?.transaction(tx);
    return reply.code(200).send();
  };
}
