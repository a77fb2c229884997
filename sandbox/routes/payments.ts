import type { FastifyReply, FastifyRequest } from 'fastify';
import { schemaId } from '../../core/schemas.ts';
import { normaliseAmount, toMinor } from '../../core/money.ts';
import type { SandboxContext } from '../app.ts';
import { sendBadRequest, sendBusinessError } from '../http.ts';
import type { OperationSpec } from '../operations.ts';
import type { Product } from '../../core/products.ts';
import { idKey, type Party, type Transaction, type TransactionKind } from '../state.ts';
import { callbackHostMatches, isCallbackUrl } from '../callbacks.ts';

interface PaymentBody {
  amount: string;
  currency: string;
  externalId?: string;
  payer?: Party;
  payee?: Party;
  payerMessage?: string;
  payeeNote?: string;
  referenceIdToRefund?: string;
}

interface PaymentKind {
  kind: TransactionKind;
  product: Product;
  path: string;
  create: { id: string; summary: string; specSection: string; schema: string };
  status: { id: string; summary: string; schema: string };
  errorSchema: string;
}

const KINDS: PaymentKind[] = [
  {
    kind: 'requesttopay',
    product: 'collection',
    path: '/collection/v1_0/requesttopay',
    create: { id: 'collection.requestToPay', summary: 'Request to pay', specSection: '§4.2 #2', schema: 'request-to-pay' },
    status: { id: 'collection.getRequestToPayStatus', summary: 'Get request-to-pay status', schema: 'request-to-pay-status' },
    errorSchema: 'error-set-a',
  },
  {
    kind: 'refund',
    product: 'disbursement',
    path: '/disbursement/v1_0/refund',
    create: { id: 'disbursement.refund', summary: 'Refund', specSection: '§4.3 #9', schema: 'refund' },
    status: { id: 'disbursement.getRefundStatus', summary: 'Get refund status', schema: 'refund-status' },
    errorSchema: 'error-set-b',
  },
  {
    kind: 'deposit',
    product: 'disbursement',
    path: '/disbursement/v1_0/deposit',
    create: { id: 'disbursement.deposit', summary: 'Deposit', specSection: '§4.3 #10', schema: 'deposit' },
    status: { id: 'disbursement.getDepositStatus', summary: 'Get deposit status', schema: 'deposit-status' },
    errorSchema: 'error-set-b',
  },
];

const referenceIdParam = { referenceId: { $ref: schemaId('uuid-v4') } };
const NOT_FOUND = 'Requested resource was not found.';
// The live sandbox rejects these in free text (real-api-notes); only the mtn-sandbox profile does.
const LIVE_FORBIDDEN_CHARACTERS = /['&]/;

/** Request to pay, refund and deposit (§4.2 #2, §4.3 #9–10), their status queries (§4.6) and delivery notification (§4.2 #3). */
export function registerPayments(context: SandboxContext): void {
  for (const kind of KINDS) {
    context.catalogue.define(creationSpec(kind), (request, reply) => createPayment(context, kind, request, reply));
    context.catalogue.define(statusSpec(kind), async (request, reply) => {
      const tx = ownedTransaction(context, kind.kind, request);
      if (!tx) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
      return reply.send(context.payments.statusRecord(tx));
    });
  }
  registerDeliveryNotification(context);
}

function creationSpec(kind: PaymentKind): OperationSpec {
  return {
    id: kind.create.id,
    summary: kind.create.summary,
    specSection: kind.create.specSection,
    method: 'POST',
    url: kind.path,
    product: kind.product,
    credential: 'bearer',
    requiredHeaders: ['x-reference-id', 'x-target-environment'],
    optionalHeaders: ['x-callback-url'],
    body: { schema: kind.create.schema, mediaType: 'application/json' },
    responses: {
      202: { description: 'Accepted; no body. The transaction is PENDING until it settles.' },
      400: { description: 'Invalid data.', schema: 'bad-request' },
      401: { description: 'Missing, expired or foreign access token.', schema: 'oauth-error' },
      409: { description: 'Duplicated reference id: RESOURCE_ALREADY_EXIST.', schema: kind.errorSchema },
      500: { description: 'INVALID_CURRENCY, INVALID_CALLBACK_URL_HOST or NOT_ALLOWED_TARGET_ENVIRONMENT.', schema: kind.errorSchema },
      503: { description: 'The sandbox store is full: SERVICE_UNAVAILABLE.', schema: kind.errorSchema },
    },
  };
}

function statusSpec(kind: PaymentKind): OperationSpec {
  return {
    id: kind.status.id,
    summary: kind.status.summary,
    specSection: '§4.6',
    method: 'GET',
    url: `${kind.path}/:referenceId`,
    product: kind.product,
    credential: 'bearer',
    requiredHeaders: ['x-target-environment'],
    params: referenceIdParam,
    noBody: true,
    responses: {
      200: { description: 'The status record.', schema: kind.status.schema },
      400: { description: 'Invalid data, e.g. a reference id that is not a UUID v4.', schema: 'bad-request' },
      401: { description: 'Missing, expired or foreign access token.', schema: 'oauth-error' },
      404: { description: 'Unknown reference id, or a transaction of another API user: RESOURCE_NOT_FOUND.', schema: kind.errorSchema },
      500: { description: 'NOT_ALLOWED_TARGET_ENVIRONMENT.', schema: kind.errorSchema },
    },
  };
}

async function createPayment(context: SandboxContext, kind: PaymentKind, request: FastifyRequest, reply: FastifyReply) {
  const { state, settings, profile, clock, payments, deviations } = context;
  const caller = request.caller!;
  const referenceId = idKey(request.headers['x-reference-id'] as string);
  const store = state.transactions[kind.kind];
  const reuseAllowed = (kind.kind === 'requesttopay' && deviations.has('payment-reference-reused')) || (kind.kind === 'deposit' && deviations.has('deposit-id-reused'));
  if (store.has(referenceId) && reuseAllowed) {
    store.delete(referenceId);
  } else if (store.has(referenceId)) {
    return sendBusinessError(reply, 409, 'RESOURCE_ALREADY_EXIST', 'Duplicated reference id. Creation of resource failed.');
  }
  const body = request.body as PaymentBody;
  if (profile.strictTextCharacters) {
    const field = (['externalId', 'payerMessage', 'payeeNote'] as const).find((f) => LIVE_FORBIDDEN_CHARACTERS.test(body[f] ?? ''));
    if (field) return sendBadRequest(reply, `Invalid request: body/${field} contains an apostrophe or "&", which the live sandbox rejects (mtn-sandbox profile).`);
  }
  const callbackUrl = request.headers['x-callback-url'] as string | undefined;
  if (callbackUrl !== undefined && !isCallbackUrl(callbackUrl)) {
    return sendBadRequest(reply, 'Invalid request: header X-Callback-Url is not an absolute http(s) URL with a host and a valid port.');
  }
  if (callbackUrl !== undefined && !callbackHostMatches(callbackUrl, caller.providerCallbackHost) && !deviations.has('callback-host-not-checked')) {
    return sendBusinessError(reply, 500, 'INVALID_CALLBACK_URL_HOST', 'Callback URL does not match the configured value.');
  }
  if (!settings.currencies.includes(body.currency) && !deviations.has('currency-not-checked')) {
    return sendBusinessError(reply, 500, 'INVALID_CURRENCY', `Currency not supported. This sandbox accepts ${settings.currencies.join(', ')}.`);
  }
  const party = kind.kind === 'requesttopay' ? body.payer
    : kind.kind === 'deposit' ? body.payee
      : state.transactions.requesttopay.get(idKey(body.referenceIdToRefund!))?.party;
  const tx: Transaction = {
    kind: kind.kind,
    referenceId,
    apiUserId: caller.id,
    product: kind.product,
    targetEnvironment: request.headers['x-target-environment'] as string,
    amountMinor: toMinor(body.amount),
    amount: normaliseAmount(body.amount),
    currency: body.currency,
    externalId: body.externalId,
    party,
    payerMessage: body.payerMessage,
    payeeNote: body.payeeNote,
    referenceIdToRefund: body.referenceIdToRefund && idKey(body.referenceIdToRefund),
    status: 'PENDING',
    createdAt: clock.now(),
    callbackUrl,
    refundedMinor: 0n,
  };
  store.add(referenceId, tx);
  payments.begin(tx);
  return reply.code(202).send();
}

function ownedTransaction(context: SandboxContext, kind: TransactionKind, request: FastifyRequest): Transaction | undefined {
  const tx = context.state.transactions[kind].get(idKey((request.params as { referenceId: string }).referenceId));
  // Another API user's transaction is answered exactly as an unknown one, so ids cannot be probed.
  return tx && (tx.apiUserId === request.caller!.id || context.deviations.has('payment-readable-by-others')) ? tx : undefined;
}

function registerDeliveryNotification(context: SandboxContext): void {
  const { catalogue, settings, clock, deviations } = context;
  catalogue.define({
    id: 'collection.requestToPayDeliveryNotification',
    summary: 'Request-to-pay delivery notification',
    specSection: '§4.2 #3',
    method: 'POST',
    url: '/collection/v1_0/requesttopay/:referenceId/deliverynotification',
    product: 'collection',
    credential: 'bearer',
    requiredHeaders: ['x-target-environment'],
    optionalHeaders: ['language'],
    params: referenceIdParam,
    body: { schema: 'delivery-notification', mediaType: 'application/json' },
    responses: {
      200: { description: 'Notification enqueued; no body.' },
      400: { description: 'Invalid data.', schema: 'bad-request' },
      401: { description: 'Missing, expired or foreign access token.', schema: 'oauth-error' },
      404: { description: 'Unknown reference id, or a transaction of another API user: RESOURCE_NOT_FOUND.', schema: 'error-set-a' },
      409: { description: 'The transaction is not SUCCESSFUL: TRANSACTION_NOT_COMPLETED.', schema: 'error-set-a' },
      410: { description: 'The notification window has passed: EXPIRED.', schema: 'error-set-a' },
      429: { description: 'Notified for this id within the cool-down: NOT_ALLOWED.', schema: 'error-set-a' },
      500: { description: 'NOT_ALLOWED_TARGET_ENVIRONMENT.', schema: 'error-set-a' },
    },
  }, async (request, reply) => {
    const tx = ownedTransaction(context, 'requesttopay', request);
    if (!tx) return sendBusinessError(reply, 404, 'RESOURCE_NOT_FOUND', NOT_FOUND);
    if (tx.status !== 'SUCCESSFUL' && !deviations.has('notification-of-unfinished-payment')) {
      return sendBusinessError(reply, 409, 'TRANSACTION_NOT_COMPLETED', `The transaction is ${tx.status}; only a SUCCESSFUL one can be notified.`);
    }
    const now = clock.now();
    if (now - tx.completedAt! > settings.notificationWindowMs) {
      return sendBusinessError(reply, 410, 'EXPIRED', 'The delivery notification opportunity has expired.');
    }
    if (tx.lastNotificationAt !== undefined && now - tx.lastNotificationAt < settings.notificationCooldownMs && !deviations.has('notification-repeat-allowed')) {
      return sendBusinessError(reply, 429, 'NOT_ALLOWED', 'Too many delivery notifications for this transaction recently; try again later.');
    }
    tx.lastNotificationAt = now;
    return reply.code(200).send();
  });
}
