import { isDeepStrictEqual } from 'node:util';
import type { ApiResponse } from '../client/momo-client.ts';
import { fromMinor, normaliseAmount, sameDecimal, toMinor } from '../../core/money.ts';
import { sourceOfDifference, type ProfileName } from '../../core/profiles.ts';
import { observed, reading, spec, type Source } from '../../core/sources.ts';
import { namedPart } from '../../core/validation/schemas.ts';
import { TRANSACTIONS } from '../../core/catalogue/routes.ts';
import { findingOf, quote, type CheckDefinition, type Finding, type Found } from './check.ts';

/**
 * What a transaction's records are held to: how it ends, why it failed, what its record says of what was asked,
 * that a final state stays final, and that a refused creation leaves nothing behind. The spec shows neither the
 * status record nor the names of its final states, nor which customer approves: those rest on the live service's
 * (real-api-notes), and weigh as observations.
 */
export const TRANSACTION_CHECKS = {
  'transaction-outcome': {
    title:
      "A transaction ends as its party's answer calls for: the test number that approves makes it SUCCESSFUL, one that declines FAILED, one that never answers keeps it PENDING.",
    source: spec('§3: the request to pay is PENDING until the payer authorizes or declines it, or the system times it out'),
    values: {
      testNumbers: observed(
        'real-api-notes, sandbox test numbers: which customer approves, declines or never answers, and the states SUCCESSFUL and FAILED it ends in (§3 names only PENDING)',
      ),
      slowNumber: observed('real-api-notes, sandbox test numbers: 46733123454 stays PENDING for about 25–30 s before SUCCESSFUL'),
      settling: observed(
        'real-api-notes, sandbox test numbers: payments settle at once, 46733123454 after about 25–30 s; the spec gives no time (§3, §8)',
      ),
    },
  },
  'failure-reason': {
    title: 'A FAILED transaction gives the reason its test number is documented to give.',
    source: observed('real-api-notes, sandbox test numbers: the reason of each'),
  },
  'reason-shape': {
    title: 'The reason of a FAILED status record is a bare code string, as the live sandbox sends it.',
    source: observed('real-api-notes, status records: "reason" is a plain string code'),
    general: true,
  },
  'financial-transaction-id': {
    title: 'A SUCCESSFUL request to pay carries its financialTransactionId.',
    source: observed('real-api-notes, status records: financialTransactionId is present once SUCCESSFUL'),
    general: true,
  },
  'final-state-is-final': {
    title: 'A transaction that read SUCCESSFUL or FAILED never reads otherwise again.',
    source: spec('§3: PENDING until the payer answers or the system times it out; the outcome that ends PENDING is final'),
    general: true,
  },
  'record-echoes-request': {
    title:
      'A record that names a field of what the partner sent shows it as sent: the amount as the same number, the party as the same party, texts and host unchanged.',
    source: spec('§2.2–§2.5, §2.12: the record is of the resource the partner created'),
    values: {
      recordFields: observed(
        'real-api-notes, status records: the record carries amount, currency, the party, externalId, payerMessage and payeeNote as sent',
      ),
    },
    general: true,
  },
  'refund-to-payer': {
    title: 'A refund goes to the payer of the request to pay it refunds.',
    source: spec('§2.4: referenceIdToRefund identifies the request to pay that is refunded'),
  },
  'refusal-changes-nothing': {
    title: 'A refused creation leaves nothing behind, and changes nothing that was there.',
    source: spec('§2.5, §7 rule 1: a reused reference id is rejected; a refused request creates nothing'),
  },
} as const satisfies Record<string, CheckDefinition>;

type TransactionCheck = keyof typeof TRANSACTION_CHECKS;
const found = (name: TransactionCheck, f: Found): Finding => findingOf(name, TRANSACTION_CHECKS[name], f);

/** A status record as the status queries and callbacks carry it (schemas/*-status.schema.json). */
export interface StatusRecord {
  status: string;
  amount: string;
  currency: string;
  financialTransactionId?: string;
  externalId?: string;
  payer?: { partyIdType: string; partyId: string };
  payee?: { partyIdType: string; partyId: string };
  payerMessage?: string;
  payeeNote?: string;
  reason?: string | { code: string; message: string };
}

/** The status a transaction ends in (or is still in), against its test number's: every name but PENDING is the live service's. */
export function outcomeFindings(record: { status?: unknown }, expected: string, options: { slow?: boolean } = {}): Finding[] {
  if (record.status === expected) return [];
  const source = options.slow
    ? TRANSACTION_CHECKS['transaction-outcome'].values.slowNumber
    : TRANSACTION_CHECKS['transaction-outcome'].values.testNumbers;
  return [found('transaction-outcome', { field: '/status', expected: JSON.stringify(expected), received: quote(record.status), source })];
}

/** The reason of a FAILED record: the code its test number is documented to give (observed), or the case's own source. */
export function reasonFindings(record: StatusRecord, code: string, source?: Source): Finding[] {
  const reason = record.reason;
  const given = typeof reason === 'string' ? reason : typeof reason === 'object' && reason !== null ? reason.code : undefined;
  if (given === code) return [];
  return [
    found('failure-reason', {
      field: typeof reason === 'object' && reason !== null ? '/reason/code' : '/reason',
      expected: JSON.stringify(code),
      received: given === undefined ? 'none' : quote(given),
      ...(source ? { source } : {}),
    }),
  ];
}

/** A SUCCESSFUL record carries its financialTransactionId (observed). */
export function transactionIdFindings(record: StatusRecord): Finding[] {
  return record.status !== 'SUCCESSFUL' || record.financialTransactionId
    ? []
    : [found('financial-transaction-id', { field: '/financialTransactionId', expected: 'the field', received: 'none' })];
}

const STATUS_QUERIES: ReadonlySet<string> = new Set(TRANSACTIONS.map((t) => t.status));

/** The live sandbox sends the reason of a FAILED record as a bare code; the spec does not show the record. */
export function reasonShapeFindings(response: ApiResponse): Finding[] {
  if (!STATUS_QUERIES.has(response.operation.id)) return [];
  const reason = (response.json as { reason?: unknown } | undefined)?.reason;
  if (reason === undefined || typeof reason === 'string') return [];
  return [
    found('reason-shape', {
      field: '/reason',
      expected: 'a bare code string',
      received: quote(reason),
      source: sourceOfDifference('failureReason', 'mtn-sandbox'),
    }),
  ];
}

/** The final statuses whose names the live service gives: a record that read one keeps it. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['SUCCESSFUL', 'FAILED']);

/** §3: a transaction that was read in a final status reads in it again. */
export function finalStaysFinalFindings(first: string, now: string): Finding[] {
  return now === first
    ? []
    : [
        found('final-state-is-final', {
          field: '/status',
          expected: `${JSON.stringify(first)}, as read before`,
          received: JSON.stringify(now),
        }),
      ];
}

/**
 * The amount of a record against the amount sent: the same number (definite); as a JSON number, or not normalised,
 * it departs only from the live record (observed). Missing: the live record names it (observed).
 */
export function amountFindings(record: { amount?: unknown }, sent: string): Finding[] {
  const recorded = record.amount;
  const recordFields = TRANSACTION_CHECKS['record-echoes-request'].values.recordFields;
  if (recorded === undefined)
    return [found('record-echoes-request', { field: '/amount', expected: quote(sent), received: 'none', source: recordFields })];
  if (typeof recorded === 'number' && sameDecimal(String(recorded), sent)) {
    return [
      found('record-echoes-request', {
        field: '/amount',
        expected: `${quote(sent)}, a string`,
        received: quote(recorded),
        source: sourceOfDifference('amountForm', 'mtn-sandbox'),
      }),
    ];
  }
  if (typeof recorded !== 'string' || !sameDecimal(recorded, sent)) {
    return [found('record-echoes-request', { field: '/amount', expected: `${quote(sent)}, the same number`, received: quote(recorded) })];
  }
  const normalised = normaliseAmount(sent);
  return recorded === normalised
    ? []
    : [
        found('record-echoes-request', {
          field: '/amount',
          expected: `${quote(normalised)}, without trailing zeros`,
          received: quote(recorded),
          source: sourceOfDifference('amountForm', 'mtn-sandbox'),
        }),
      ];
}

type Party = { partyIdType: string; partyId: string };
const isParty = (value: unknown): value is Party =>
  typeof value === 'object' && value !== null && 'partyIdType' in value && 'partyId' in value;

/**
 * Whether a recorded party is the party sent. The spec profile compares the id as a value of its type (§2.1): an
 * E.164 number with or without its "+", an e-mail address in any case. The live sandbox gives it back
 * exactly as sent (observed), which the mtn-sandbox profile holds.
 */
export function sameParty(recorded: unknown, sent: Party, profile: ProfileName): boolean {
  const named = namedPart('party', recorded);
  if (isDeepStrictEqual(named, sent)) return true;
  if (profile === 'mtn-sandbox' || !isParty(named) || named.partyIdType !== sent.partyIdType) return false;
  return partyValue(named) === partyValue(sent);
}

function partyValue({ partyIdType, partyId }: Party): string {
  if (partyIdType === 'MSISDN') return partyId.replace(/^\+/, '');
  // An e-mail address in any case: that its local part's case names another mailbox is RFC 5321 §2.4's, which the
  // spec does not cite (§2.1 asks a valid e-mail address) and which itself advises against relying on it.
  return partyId.toLowerCase();
}

/**
 * Each field sent, against the record: as sent where the record names it (definite; a party as the same party, which
 * the live sandbox gives back verbatim, observed), present on the live sandbox (observed). A party is compared on its
 * own two fields: one it adds (records are open) is no difference.
 */
export function echoFindings(record: object, sent: Record<string, unknown>, profile: ProfileName): Finding[] {
  const actual = record as Record<string, unknown>;
  const recordFields = TRANSACTION_CHECKS['record-echoes-request'].values.recordFields;
  return Object.entries(sent).flatMap(([key, value]) => {
    if (value === undefined) return [];
    if (actual[key] === undefined)
      return [found('record-echoes-request', { field: `/${key}`, expected: quote(value), received: 'none', source: recordFields })];
    if (isParty(value)) {
      if (sameParty(actual[key], value, profile)) return [];
      const asValue = sameParty(actual[key], value, 'spec');
      return [
        found('record-echoes-request', {
          field: `/${key}`,
          expected: quote(value),
          received: quote(actual[key]),
          ...(asValue ? { source: sourceOfDifference('partyIdForm', 'mtn-sandbox') } : {}),
        }),
      ];
    }
    if (isDeepStrictEqual(actual[key], value)) return [];
    return [found('record-echoes-request', { field: `/${key}`, expected: quote(value), received: quote(actual[key]) })];
  });
}

/** An API user whose id was refused as a duplicate keeps the host it was registered with, where its record names one. */
export function apiUserUnchangedFindings(record: { providerCallbackHost?: unknown } | undefined, host: string): Finding[] {
  const given = record?.providerCallbackHost;
  return given === undefined || given === host
    ? []
    : [found('refusal-changes-nothing', { field: '/providerCallbackHost', expected: JSON.stringify(host), received: quote(given) })];
}

const API_USER_RECORD = observed(
  'real-api-notes, provisioning: GET /v1_0/apiuser/{id} answers {"providerCallbackHost", "targetEnvironment"}',
);

/**
 * The host an API user record gives back: the one it was registered with, where the record names one (observed that
 * it does). Given `another`, the host of an API user registered after it: reading that one instead is the wrong
 * record (definite, §4.5 #16 reads the API user its path names); any other host (written otherwise, say) is weighed
 * as the record's form is, observed.
 */
export function callbackHostFindings(record: { providerCallbackHost?: unknown } | undefined, host: string, another?: string): Finding[] {
  const given = record?.providerCallbackHost;
  if (given === host) return [];
  const otherRecord = another !== undefined && typeof given === 'string' && given.toLowerCase() === another.toLowerCase();
  return [
    found('record-echoes-request', {
      field: '/providerCallbackHost',
      expected: JSON.stringify(host),
      received: given === undefined ? 'none' : quote(given),
      ...(given === undefined || (another !== undefined && !otherRecord) ? { source: API_USER_RECORD } : {}),
    }),
  ];
}

/**
 * The target environment an API user record gives back, where it names one: the sandbox's, as the live record reads
 * (observed: §2.12 does not show the record; §4.5 #15 makes its keys for the sandbox target environment). Any API user the
 * partner registered reads so, so this tells a read of another user apart only with the host (callbackHostFindings).
 */
export function targetEnvironmentFindings(record: { targetEnvironment?: unknown } | undefined): Finding[] {
  const given = record?.targetEnvironment;
  if (given === undefined || given === 'sandbox') return [];
  return [
    found('record-echoes-request', {
      field: '/targetEnvironment',
      expected: '"sandbox"',
      received: quote(given),
      source: observed(
        'real-api-notes, provisioning: GET /v1_0/apiuser/{id} answers {"providerCallbackHost", "targetEnvironment": "sandbox"}',
      ),
    }),
  ];
}

/** A refund's record names as payee the payer of the request to pay it refunds, where it names a payee. */
export function refundToPayerFindings(record: StatusRecord, payer: Party, profile: ProfileName): Finding[] {
  if (record.payee !== undefined && sameParty(record.payee, payer, profile)) return [];
  return [
    found('refund-to-payer', {
      field: '/payee',
      expected: quote(payer),
      received: record.payee === undefined ? 'none' : quote(record.payee),
      ...(record.payee === undefined
        ? { source: TRANSACTION_CHECKS['record-echoes-request'].values.recordFields }
        : sameParty(record.payee, payer, 'spec')
          ? { source: sourceOfDifference('partyIdForm', 'mtn-sandbox') }
          : {}),
    }),
  ];
}

/** A creation that was to be refused was accepted: it left a transaction behind. `rule`: what makes the refusal expected. */
export function acceptedInsteadFindings(status: number, rule?: Source): Finding[] {
  return [
    found('refusal-changes-nothing', {
      field: 'status',
      expected: 'a refusal, and no transaction',
      received: `${status}: the transaction was created`,
      ...(rule ? { source: rule } : {}),
    }),
  ];
}

/**
 * Callbacks at the address only a creation refused as a duplicate gave. One that tells of the first transaction (its
 * externalId or its amount) tells a request the partner was told had failed of another's outcome: definite (§2.5, §7
 * rule 1, §6). Any other (a notice of the refusal, say) is a departure by our reading only: the refused request made
 * no transaction to be told of, but the spec does not forbid a service to write to an address it was given.
 */
export function refusedAddressCalledFindings(bodies: readonly unknown[], first: { externalId?: unknown; amount?: unknown }): Finding[] {
  if (bodies.length === 0) return [];
  const tellsOfFirst = bodies.some((body) => {
    const record = body as { externalId?: unknown; amount?: unknown } | null | undefined;
    if (typeof record !== 'object' || record === null) return false;
    return (
      (first.externalId !== undefined && record.externalId === first.externalId) ||
      (typeof record.amount === 'string' &&
        typeof first.amount === 'string' &&
        normaliseAmount(record.amount) === normaliseAmount(first.amount))
    );
  });
  return [
    found('refusal-changes-nothing', {
      field: 'X-Callback-Url of the refused request',
      expected: 'no callback: the refused request gave its address to nothing',
      received: `${bodies.length} callback${bodies.length === 1 ? '' : 's'} there${tellsOfFirst ? ', telling of the first transaction' : ''}`,
      ...(tellsOfFirst ? {} : { source: REFUSED_ADDRESS_SILENT }),
    }),
  ];
}

/**
 * Callbacks at the address a refused creation gave (refused for its data or its currency, not as a duplicate). One that
 * carries a transaction's status tells of a transaction the status query finds none of: the callback is the status
 * record (observed), and there is none. Any other is a departure by our reading only, as for a refused duplicate.
 */
export function refusedCreationCalledBackFindings(bodies: readonly unknown[]): Finding[] {
  if (bodies.length === 0) return [];
  const record = bodies.find((body) => typeof body === 'object' && body !== null && 'status' in body) as { status?: unknown } | undefined;
  return [
    found('refusal-changes-nothing', {
      field: 'X-Callback-Url of the refused request',
      expected: 'no callback: the refused request made no transaction to tell of',
      received: `${bodies.length} callback${bodies.length === 1 ? '' : 's'} there${record ? `, one telling of a transaction ${quote(record.status)}` : ''}`,
      source: record ? CALLBACK_IS_STATUS_RECORD : REFUSED_ADDRESS_SILENT,
    }),
  ];
}

const CALLBACK_IS_STATUS_RECORD = observed(
  'real-api-notes, callbacks: the body is the same record as the status GET [documented]; a refused request has none, the status query finding no transaction under its reference id',
);

const REFUSED_ADDRESS_SILENT = reading(
  '§6 sends a callback to the address a transaction gave; that nothing at all, not even a notice of its refusal, is sent to the address a refused request gave (a duplicate, invalid data, a consent request refused: it made nothing to tell of) is our reading',
);

/** The reference id of a refused creation reads back as a transaction: it was created all the same. */
export function leftBehindFindings(readStatus: number): Finding[] {
  return readStatus === 200
    ? [
        found('refusal-changes-nothing', {
          field: 'status',
          expected: 'no transaction under the refused reference id',
          received: '200 with its status record: the transaction was created',
        }),
      ]
    : [];
}

/** The first transaction of a reused reference id reads back as it was asked, on what its record names. */
export function unchangedFindings(
  record: { amount?: unknown; externalId?: unknown; payerMessage?: unknown; payeeNote?: unknown },
  first: { amount: string; externalId?: string; payerMessage?: string; payeeNote?: string },
): Finding[] {
  const changed = (field: string, expected: unknown, received: unknown) =>
    found('refusal-changes-nothing', { field: `/${field}`, expected: quote(expected), received: quote(received) });
  return [
    ...(record.amount !== undefined && !(typeof record.amount === 'string' && sameDecimal(record.amount, first.amount))
      ? [changed('amount', first.amount, record.amount)]
      : []),
    // The texts the record names, as the first creation sent them: a refused duplicate wrote none of its own.
    ...(['externalId', 'payerMessage', 'payeeNote'] as const)
      .filter((field) => record[field] !== undefined && first[field] !== undefined && record[field] !== first[field])
      .map((field) => changed(field, first[field], record[field])),
  ];
}

/**
 * Payouts under way together are covered as one: on a target that fails a payout larger than the balance (the premise
 * funds-checked), two accepted together that each take more than half of it do not both succeed. A target that checks
 * each against the balance it read when it was accepted, and pays both, overdraws the account. That a payout larger
 * than the balance fails is our reading (core/profiles.ts READINGS), so this is one too.
 */
export const FUNDS_COVER_PAYOUTS_TOGETHER = reading(
  '§7 set B NOT_ENOUGH_FUNDS and §2.9 availableBalance: payouts that together take more than the balance do not all succeed, on a target that fails one larger than it',
);

export function fundsCoverFindings(payouts: readonly { amount: string; status: unknown }[], balance: string): Finding[] {
  if (payouts.length < 2 || !payouts.every((p) => p.status === 'SUCCESSFUL')) return [];
  const totalMinor = payouts.reduce((sum, p) => sum + toMinor(p.amount), 0n);
  if (totalMinor <= toMinor(balance)) return [];
  const total = fromMinor(totalMinor);
  return [
    found('transaction-outcome', {
      field: '/status',
      expected: `not every one of ${payouts.length} payouts of ${total} in all SUCCESSFUL, from a balance of ${balance}`,
      received: `all ${payouts.length} SUCCESSFUL`,
      source: FUNDS_COVER_PAYOUTS_TOGETHER,
    }),
  ];
}
