import type { ApiResponse } from '../client/momo-client.ts';
import { FINAL_STATUSES, finalStaysFinalFindings } from '../checks/transactions.ts';
import { TRANSACTIONS } from '../../core/catalogue/routes.ts';
import { conclude, type JudgingContext } from './judge.ts';

const STATUS_QUERIES: ReadonlySet<string> = new Set(TRANSACTIONS.map((t) => t.status));

/**
 * §3: a transaction leaves PENDING when the payer answers or the system times it out, and the state it reaches is
 * final. Every status record is held to the first final status its transaction was read in (by its status query's
 * URL), for as long as the watch lasts: a scenario of the conformance run, a sequence of the exploration.
 */
export class FinalStatusWatch {
  private readonly first = new Map<string, string>();
  /** Reference ids whose transaction a later one acts on (a refund of a payment): §3 names no state it may move to. */
  private readonly mayChange = new Set<string>();

  clear(): void {
    this.first.clear();
    this.mayChange.clear();
  }

  /** From now on the transaction may leave its final status: a refund was made of it, and §3 shows no transition past one. */
  mayLeaveFinal(referenceId: string): void {
    this.mayChange.add(referenceId.toLowerCase());
  }

  /** Judges an answer of a status query against the final status its transaction was read in before, if any. */
  judge(response: ApiResponse, context: JudgingContext): void {
    if (response.status !== 200 || !STATUS_QUERIES.has(response.operation.id) || !response.exchange) return;
    const status = (response.json as { status?: unknown } | undefined)?.status;
    if (typeof status !== 'string') return;
    const transaction = response.exchange.request.url;
    if ([...this.mayChange].some((id) => transaction.toLowerCase().includes(id))) return;
    const first = this.first.get(transaction);
    if (first === undefined) {
      if (FINAL_STATUSES.has(status)) this.first.set(transaction, status);
      return;
    }
    conclude(
      {
        header: `${response.operation.label} — §3: a transaction that reached a final status keeps it`,
        operation: response.operation.id,
        product: response.operation.product,
        checks: ['final-state-is-final'],
        findings: finalStaysFinalFindings(first, status),
        response,
      },
      context,
    );
  }
}
