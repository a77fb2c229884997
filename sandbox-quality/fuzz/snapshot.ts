import type { SandboxState } from '../../sandbox/domain/state.ts';
import type { Ledger } from '../../sandbox/domain/ledger.ts';

/** The sandbox's memory as text, one section per store, so two snapshots compare and a difference names its store. */
export type StateSnapshot = Record<string, string>;

/**
 * Everything a request could change: API users (with their keys), the three transaction stores, the
 * consent requests and grants, and every balance. Only live records count: a record past its life is
 * forgotten by the sandbox's sweeper whenever it runs (a timer), which is housekeeping, not a change a
 * request made. The rules of life are those of sandbox/state.ts.
 */
export function snapshotState({ state, ledger }: { state: SandboxState; ledger: Ledger }, now: number): StateSnapshot {
  const live = <T>(values: Iterable<T>, alive: (value: T) => boolean) => [...values].filter(alive);
  return {
    apiUsers: text([...state.apiUsers.values()]),
    requesttopay: text(state.transactions.requesttopay.liveValues(now)),
    deposit: text(state.transactions.deposit.liveValues(now)),
    refund: text(state.transactions.refund.liveValues(now)),
    consentRequests: text(live(state.consentRequests.values(), (r) => now < r.expiresAt + (r.expiresAt - r.createdAt))),
    consentGrants: text(live(state.consentGrants.values(), (g) => now < g.refreshableUntil)),
    balances: text(ledger.moved().sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** The stores whose contents differ, each with its record counts before and after. */
export function stateDifferences(before: StateSnapshot, after: StateSnapshot): string[] {
  return Object.keys(before)
    .filter((store) => before[store] !== after[store])
    .map((store) => {
      const count = (s: string | undefined) => (s ? (JSON.parse(s) as unknown[]).length : 0);
      return `${store} (${count(before[store])} → ${count(after[store])} records)`;
    });
}

function text(values: unknown[]): string {
  // Timers are how a pending transaction will settle, not what it is; bigint amounts become strings.
  return JSON.stringify(values, (key, value) => (key === 'timer' ? undefined : typeof value === 'bigint' ? value.toString() : value));
}
