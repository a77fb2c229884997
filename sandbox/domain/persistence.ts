import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Product } from '../../core/products.ts';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';
import { pingWhenGranted, type CallbackSink } from './callbacks.ts';
import type { SandboxComponents } from './context.ts';
import {
  DataDirectoryError,
  corruptLine,
  openDataDirectory,
  type DataDirectory,
  type DataDirectoryOptions,
  type StoredLine,
} from './journal.ts';
import type { SandboxSettings } from './settings.ts';
import { idKey, type ApiUser, type ConsentGrant, type ConsentRequest, type StateJournal, type Transaction } from './state.ts';
import { StoreFullError } from './store.ts';

/**
 * The sandbox's state kept in a data directory (--data): every change written as one line of the journal
 * (sandbox/domain/journal.ts) in the format of schemas/sandbox-data-record.schema.json, every answer held until
 * what it reports is durable, and at start the state read back, pending payments resumed with their callbacks.
 * Without --data none of this exists: the routes find no journal on the state, and nothing waits.
 */

/** A transaction as a line keeps it: every field but its timer, amounts as decimal strings. */
type StoredTransaction = Omit<Transaction, 'timer' | 'amountMinor' | 'refundedMinor'> & { amountMinor: string; refundedMinor: string };

type StoredRecord =
  | ({ t: 'user' } & ApiUser)
  | { t: 'tx'; at: number; tx: StoredTransaction; balance?: string; refunded?: string }
  | { t: 'consent'; at: number; request: ConsentRequest }
  | { t: 'grant'; at: number; grant: ConsentGrant }
  | { t: 'balance'; apiUserId: string; product: Product; currency: string; minor: string };

/** What a start read back from its data directory. */
export interface Recovery {
  apiUsers: number;
  transactions: number;
  /** Transactions still PENDING, whose outcomes were set going again. */
  resumed: number;
  consents: number;
}

const validRecord = validatorFor('sandbox-data-record');

/** Every field of a transaction but its timer, by name, so that a field added to Transaction is kept or fails to compile here. */
function storedTransaction(tx: Transaction): Record<Exclude<keyof Transaction, 'timer'>, unknown> {
  return {
    kind: tx.kind,
    referenceId: tx.referenceId,
    apiUserId: tx.apiUserId,
    product: tx.product,
    targetEnvironment: tx.targetEnvironment,
    amountMinor: String(tx.amountMinor),
    amount: tx.amount,
    currency: tx.currency,
    externalId: tx.externalId,
    party: tx.party,
    payerMessage: tx.payerMessage,
    payeeNote: tx.payeeNote,
    referenceIdToRefund: tx.referenceIdToRefund,
    status: tx.status,
    reason: tx.reason,
    financialTransactionId: tx.financialTransactionId,
    completedAt: tx.completedAt,
    callbackUrl: tx.callbackUrl,
    callbackMethod: tx.callbackMethod,
    refundedMinor: String(tx.refundedMinor),
    lastNotificationAt: tx.lastNotificationAt,
    unpayable: tx.unpayable,
  };
}

function transactionOf(stored: StoredTransaction): Transaction {
  return { ...stored, amountMinor: BigInt(stored.amountMinor), refundedMinor: BigInt(stored.refundedMinor), timer: undefined };
}

/** Opens (or makes) the data directory of settings.dataDir and takes it for this sandbox; a DataDirectoryError says why it cannot. */
export function openSandboxData(settings: SandboxSettings, log: FastifyBaseLogger, options: DataDirectoryOptions = {}): SandboxData {
  return new SandboxData(openDataDirectory(settings.dataDir!, options), settings, log);
}

export class SandboxData implements StateJournal {
  private components: SandboxComponents | undefined;
  private failedWith: ((error: Error) => void) | undefined;
  /** Settles with the error that stopped the journal, if one ever does: the sandbox must then stop. */
  readonly failure: Promise<Error>;

  constructor(
    private readonly directory: DataDirectory,
    private readonly settings: SandboxSettings,
    private readonly log: FastifyBaseLogger,
  ) {
    this.failure = new Promise((resolve) => {
      this.failedWith = resolve;
    });
  }

  get path(): string {
    return this.directory.path;
  }

  /** The secret the directory keeps for the sandbox's tokens, used unless one is configured. */
  get tokenSecret(): string {
    return this.directory.tokenSecret;
  }

  /**
   * Holds every answer until what was written before it is durable: a creation's 201 or 202 is sent only once
   * its record is on disk, and no answer tells of a change a crash could still undo.
   */
  holdAnswers(app: FastifyInstance): void {
    app.addHook('onSend', (_request, reply, payload, done) => {
      this.directory.whenDurable((error) => {
        // Nothing is answered that is not kept: the connection is dropped, and the sandbox stops (failure).
        if (error) reply.raw.destroy();
        else done(null, payload);
      });
    });
  }

  /** A callback sink whose callbacks leave once the final status they carry is durable. */
  deferringCallbacks(sink: CallbackSink): CallbackSink {
    const directory = this.directory;
    return {
      send: (url, method, body, context) => directory.afterCommit((error) => error || sink.send(url, method, body, context)),
      sendLater: (delayMs, url, method, body, context) => sink.sendLater(delayMs, url, method, body, context),
      settled: async () => {
        await new Promise<void>((done) => directory.whenDurable(() => done()));
        await sink.settled();
      },
      close: () => sink.close(),
      observe: (observer) => sink.observe?.(observer),
    };
  }

  /**
   * Reads the state back into the sandbox's components, begins a new generation from it, and from then on
   * journals every change: payments still pending go on (settled at once when their time has passed), and
   * consent requests not yet redeemed get their ping again.
   */
  recover(components: SandboxComponents): Recovery {
    const { state, clock } = components;
    const now = clock.now();
    for (const line of this.directory.recover()) this.apply(line, components, now);
    state.forgetExpired();
    this.components = components;
    this.directory.begin(
      () => this.snapshot(),
      (error) => {
        this.log.error({ problem: error.message }, 'the data directory cannot be written; the sandbox stops');
        this.failedWith?.(error);
      },
    );
    state.journal = this;
    const recovery: Recovery = { apiUsers: state.apiUsers.size, transactions: 0, resumed: 0, consents: 0 };
    for (const store of Object.values(state.transactions)) {
      for (const { value: tx, storedAt } of [...store.liveEntries(now)]) {
        recovery.transactions += 1;
        if (tx.status !== 'PENDING') continue;
        recovery.resumed += 1;
        components.payments.begin(tx, storedAt);
        if (tx.status !== 'PENDING') this.transaction(tx);
      }
    }
    for (const { value: consent } of state.consentRequests.liveEntries(now)) {
      recovery.consents += 1;
      pingWhenGranted(components.callbacks, consent, now);
    }
    recovery.consents += state.consentGrants.size;
    return recovery;
  }

  /** Waits for what is written to be durable, and lets the directory go. */
  close(): Promise<void> {
    return this.directory.close();
  }

  /** Lets the directory go at once: a start that failed. */
  release(): void {
    this.directory.release();
  }

  apiUser(user: ApiUser): void {
    this.directory.append(JSON.stringify({ t: 'user', ...user }));
  }

  transaction(tx: Transaction): void {
    const { state, ledger, clock } = this.components!;
    const record: Record<string, unknown> = {
      t: 'tx',
      at: state.transactions[tx.kind].storedAt(tx.referenceId) ?? clock.now(),
      tx: storedTransaction(tx),
    };
    if (tx.status === 'SUCCESSFUL') {
      record.balance = String(ledger.balance(tx.apiUserId, tx.product, tx.currency));
      const original = tx.kind === 'refund' ? state.transactions.requesttopay.get(tx.referenceIdToRefund ?? '') : undefined;
      if (original) record.refunded = String(original.refundedMinor);
    }
    this.directory.append(JSON.stringify(record));
  }

  consentRequest(request: ConsentRequest): void {
    const at = this.components!.state.consentRequests.storedAt(request.authReqId) ?? request.createdAt;
    this.directory.append(JSON.stringify({ t: 'consent', at, request }));
  }

  consentGranted(grant: ConsentGrant): void {
    const at = this.components!.state.consentGrants.storedAt(grant.refreshToken) ?? this.components!.clock.now();
    this.directory.append(JSON.stringify({ t: 'grant', at, grant }));
  }

  /** The lines of a snapshot: every record still alive, then every balance that has moved. */
  private *snapshot(): Generator<string> {
    const { state, ledger, clock } = this.components!;
    const now = clock.now();
    for (const { value: user } of state.apiUsers.liveEntries(now)) yield JSON.stringify({ t: 'user', ...user });
    for (const store of Object.values(state.transactions)) {
      for (const { value: tx, storedAt } of store.liveEntries(now))
        yield JSON.stringify({ t: 'tx', at: storedAt, tx: storedTransaction(tx) });
    }
    for (const { value: request, storedAt } of state.consentRequests.liveEntries(now))
      yield JSON.stringify({ t: 'consent', at: storedAt, request });
    for (const { value: grant, storedAt } of state.consentGrants.liveEntries(now))
      yield JSON.stringify({ t: 'grant', at: storedAt, grant });
    for (const [account, minor] of ledger.moved()) {
      // "<API user>|<product>|<currency>": the product and the currency have no "|".
      const [currency, product, ...user] = account.split('|').reverse();
      yield JSON.stringify({ t: 'balance', apiUserId: user.reverse().join('|'), product, currency, minor: String(minor) });
    }
  }

  /** One line read back, applied as the change it records; what retention has forgotten since is left out. */
  private apply(line: StoredLine, components: SandboxComponents, now: number): void {
    if (!validRecord(line.value)) throw corruptLine(this.path, line.where, describeErrors(validRecord.errors).join('; '));
    const record = line.value as StoredRecord | { t: 'end' };
    if (record.t === 'end') throw corruptLine(this.path, line.where, "a snapshot's end line where a change belongs");
    const { state, ledger } = components;
    const setBalance = (apiUserId: string, product: Product, currency: string, minor: bigint) =>
      ledger.credit(apiUserId, product, currency, minor - ledger.balance(apiUserId, product, currency));
    try {
      switch (record.t) {
        case 'user': {
          const { t: _, ...user } = record;
          const known = state.apiUsers.get(user.id);
          if (known) Object.assign(known, user);
          else state.apiUsers.add(user.id, user);
          return;
        }
        case 'tx': {
          const tx = transactionOf(record.tx);
          if (record.balance !== undefined) setBalance(tx.apiUserId, tx.product, tx.currency, BigInt(record.balance));
          if (record.refunded !== undefined) {
            const original = state.transactions.requesttopay.get(tx.referenceIdToRefund ?? '');
            if (original) original.refundedMinor = BigInt(record.refunded);
          }
          if (now - record.at > this.settings.retentionMaxAgeMs) return;
          const store = state.transactions[tx.kind];
          const known = store.get(tx.referenceId);
          if (known) Object.assign(known, tx);
          else store.add(tx.referenceId, tx, record.at);
          return;
        }
        case 'consent':
          if (!state.consentRequests.has(record.request.authReqId))
            state.consentRequests.add(record.request.authReqId, record.request, record.at);
          return;
        case 'grant':
          state.consentRequests.delete(idKey(record.grant.authReqId));
          if (!state.consentGrants.has(record.grant.refreshToken))
            state.consentGrants.add(record.grant.refreshToken, record.grant, record.at);
          return;
        case 'balance':
          setBalance(record.apiUserId, record.product, record.currency, BigInt(record.minor));
          return;
      }
    } catch (error) {
      if (!(error instanceof StoreFullError)) throw error;
      throw new DataDirectoryError(
        `--data ${this.path} holds more than the retention settings let the sandbox keep (${error.message}); start it with the settings it ran with, or larger ones.`,
      );
    }
  }
}
