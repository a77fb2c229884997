import fc from 'fast-check';
import type { ConformanceFailure } from '../../harness/judging/judge.ts';
import { accountCommands } from './account-commands.ts';
import { transactionCommands } from './commands.ts';
import { emptyModel } from './model.ts';
import type { ExplorationSession, Sequence } from './session.ts';

/**
 * The seeded campaign: fast-check's model-based testing draws sequences of the exploration's commands from the seed
 * (fc.commands), runs each against the target with a fresh model (fc.asyncModelRun), and, at the first departure,
 * shrinks the sequence to the fewest commands that still show it. The session keeps the cap on calls and the time
 * limit: once either is spent, commands stop calling, and the runs and shrinking that remain end at once.
 */

export interface CampaignSettings {
  seed: number;
  runs: number;
  maxCommands: number;
  /** How often progress is told, at most. */
  progressEveryMs?: number;
}

export interface CampaignProgress {
  runs: number;
  /** Sequences tried while shrinking, once a departure was found. */
  shrinkTries: number;
  calls: number;
  elapsedMs: number;
}

/** A departure, in the shrunk sequence that shows it, with the size of the sequence it was first found in. */
export interface FoundDeparture extends Sequence {
  failure: ConformanceFailure;
  firstFound: { afterRuns: number; commands: number; calls: number };
  /** fast-check's path to the shrunk sequence, for its seed. */
  path: string | undefined;
}

export interface CampaignResult {
  runs: number;
  shrinkTries: number;
  durationMs: number;
  found?: FoundDeparture;
}

/** Runs the campaign: `runs` sequences from `seed`, or fewer when a departure is found (then shrunk) or the session stops. */
export async function runCampaign(
  session: ExplorationSession,
  settings: CampaignSettings,
  onProgress: (progress: CampaignProgress) => void = () => {},
): Promise<CampaignResult> {
  const started = Date.now();
  const arbitrary = fc.commands([...transactionCommands(session.config.strict), ...accountCommands()], {
    maxCommands: settings.maxCommands,
    size: 'max',
  });
  const tally = { runs: 0, shrinkTries: 0, lastTold: 0 };
  let found: FoundDeparture | undefined;
  const property = fc.asyncProperty(arbitrary, async (commands) => {
    if (found) tally.shrinkTries += 1;
    else tally.runs += 1;
    session.beginSequence();
    try {
      await fc.asyncModelRun(() => ({ model: emptyModel(), real: session }), commands);
    } catch (error) {
      // The last sequence that fails is the one fast-check ends its shrinking on: it is kept as it ran.
      if ((error as Error).name === 'ConformanceFailure')
        found = departureOf(session.current, error as ConformanceFailure, found, tally.runs);
      throw error;
    } finally {
      if (Date.now() - tally.lastTold >= (settings.progressEveryMs ?? 2000)) {
        tally.lastTold = Date.now();
        onProgress({ runs: tally.runs, shrinkTries: tally.shrinkTries, calls: session.calls, elapsedMs: Date.now() - started });
      }
    }
  });
  const details = await fc.check(property, { seed: settings.seed, numRuns: settings.runs });
  if (details.failed && !found) throw details.errorInstance ?? new Error('fast-check failed without a departure');
  if (found) found.path = details.counterexamplePath ?? undefined;
  return { runs: tally.runs, shrinkTries: tally.shrinkTries, durationMs: Date.now() - started, ...(found ? { found } : {}) };
}

function departureOf(
  sequence: Readonly<Sequence>,
  failure: ConformanceFailure,
  earlier: FoundDeparture | undefined,
  runs: number,
): FoundDeparture {
  return {
    commands: [...sequence.commands],
    calls: [...sequence.calls],
    exchanges: [...sequence.exchanges],
    generated: new Map(sequence.generated),
    failure,
    firstFound: earlier?.firstFound ?? { afterRuns: runs, commands: sequence.commands.length, calls: sequence.calls.length },
    path: undefined,
  };
}
