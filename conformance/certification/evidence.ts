import type { Envelope } from '@cucumber/messages';
import type { Exchange } from '../../harness/client/momo-client.ts';
import type { FailureEvidence } from '../../harness/judging/judge.ts';
import type { EarlierAttempt, ScenarioResult } from '../results/verdict-stream.ts';
import type { ScenarioOutcome } from './verdicts.ts';

/** A scenario of the suite with its evidence: every exchange it had with the target, redacted. */
export interface ScenarioEvidence extends ScenarioOutcome {
  /** The exchanges of its last attempt. */
  exchanges: Exchange[];
  /** When its last attempt failed to conform: the findings, and which of `exchanges` the failure is about. */
  failure?: FailureEvidence;
  /** The attempts before the last, when it was run again (MOMO_RETRIES): what each came to, and its exchanges. */
  earlierAttempts?: (EarlierAttempt & { exchanges: Exchange[] })[];
}

/** The file name under which steps/support/hooks.ts attaches a scenario's exchanges. */
const EVIDENCE_FILE = 'evidence.json';

/**
 * Follows the message stream of a run for what the certification needs beyond the verdicts: every scenario
 * of the suite (those the tag expression left out too, with their tags) and each one's evidence, from every
 * attempt.
 */
export class EvidenceCollector {
  private readonly features = new Map<string, string>();
  private readonly pickles = new Map<string, { name: string; uri: string; tags: string[] }>();
  private readonly testCases = new Map<string, string>();
  private readonly attempts = new Map<string, string>();
  private readonly exchanges = new Map<string, Exchange[]>();
  private readonly earlierExchanges = new Map<string, Exchange[][]>();
  private readonly failures = new Map<string, FailureEvidence>();

  record(envelope: Envelope): void {
    if (envelope.gherkinDocument?.feature) {
      this.features.set(envelope.gherkinDocument.uri ?? '', envelope.gherkinDocument.feature.name);
    } else if (envelope.pickle) {
      const { id, name, uri, tags } = envelope.pickle;
      this.pickles.set(id, { name, uri, tags: tags.map((t) => t.name) });
    } else if (envelope.testCase) {
      this.testCases.set(envelope.testCase.id, envelope.testCase.pickleId);
    } else if (envelope.testCaseStarted) {
      const pickleId = this.testCases.get(envelope.testCaseStarted.testCaseId);
      if (pickleId === undefined) return;
      this.attempts.set(envelope.testCaseStarted.id, pickleId);
      // A retry starts a new attempt: the one before it is kept apart, the verdict is the last attempt's.
      if (envelope.testCaseStarted.attempt > 0)
        this.earlierExchanges.set(pickleId, [...(this.earlierExchanges.get(pickleId) ?? []), this.exchanges.get(pickleId) ?? []]);
      this.exchanges.set(pickleId, []);
      this.failures.delete(pickleId);
    } else if (envelope.attachment?.fileName === EVIDENCE_FILE && envelope.attachment.testCaseStartedId) {
      const pickleId = this.attempts.get(envelope.attachment.testCaseStartedId);
      const exchanges = pickleId === undefined ? undefined : this.exchanges.get(pickleId);
      if (pickleId === undefined || exchanges === undefined) return;
      const evidence = parseEvidence(envelope.attachment.body);
      if (evidence.failure) {
        const at = evidence.failure.exchange;
        this.failures.set(pickleId, {
          findings: evidence.failure.findings,
          ...(at !== undefined ? { exchange: exchanges.length + at } : {}),
        });
      }
      exchanges.push(...evidence.exchanges);
    }
  }

  /** Every scenario of the suite in the order of its files, with the ledger's verdict for the ones that ran. */
  scenarios(results: readonly ScenarioResult[]): ScenarioEvidence[] {
    const resultOf = new Map(results.map((r) => [r.id, r]));
    return [...this.pickles].map(([id, pickle]) => {
      const result = resultOf.get(id);
      return {
        id,
        feature: this.features.get(pickle.uri) ?? pickle.uri,
        name: pickle.name,
        uri: pickle.uri,
        ...(result?.line !== undefined ? { line: result.line } : {}),
        tags: pickle.tags,
        verdict: result?.verdict ?? 'not run',
        ...(result?.reason ? { reason: result.reason } : {}),
        ...(result?.warnings ? { warnings: result.warnings } : {}),
        ...(result?.checks ? { checks: result.checks } : {}),
        exchanges: this.exchanges.get(id) ?? [],
        ...(this.failures.has(id) && result?.verdict === 'failed' ? { failure: this.failures.get(id)! } : {}),
        ...(result?.earlierAttempts
          ? { earlierAttempts: result.earlierAttempts.map((a, i) => ({ ...a, exchanges: this.earlierExchanges.get(id)?.[i] ?? [] })) }
          : {}),
      };
    });
  }
}

/** What hooks.ts attaches; anything else (a hand-edited or truncated attachment) is read as far as it is sound. */
function parseEvidence(body: string): { exchanges: Exchange[]; failure?: FailureEvidence } {
  try {
    const evidence = JSON.parse(body) as { exchanges?: Exchange[]; failure?: FailureEvidence };
    const exchanges = Array.isArray(evidence.exchanges) ? evidence.exchanges : [];
    const failure = evidence.failure;
    const sound =
      failure !== undefined &&
      Array.isArray(failure.findings) &&
      (failure.exchange === undefined ||
        (Number.isInteger(failure.exchange) && failure.exchange >= 0 && failure.exchange < exchanges.length));
    return { exchanges, ...(sound ? { failure } : {}) };
  } catch {
    return { exchanges: [] };
  }
}
