import type { HistoryRecord } from '../../conformance/trend/history.ts';

/** A history record of a run: requirement verdicts and response times, the rest as a run writes it unless given. */
export function record(
  at: string,
  requirements: HistoryRecord['requirements'],
  operations: HistoryRecord['operations'],
  more: Partial<HistoryRecord> = {},
): HistoryRecord {
  return {
    history: 1,
    at,
    target: 'the embedded reference sandbox (profile spec) at http://127.0.0.1:8080',
    profile: 'spec',
    catalogue: '0'.repeat(64),
    durationMs: 61_000,
    exitCode: 0,
    outcome: 'conforms',
    requirements,
    operations,
    ...more,
  };
}
