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
  /** fast-check's seed of the pass that found it, and its path to the shrunk sequence. */
  fastCheck: { seed: number; path: string } | undefined;
}

export interface CampaignResult {
  runs: number;
  shrinkTries: number;
  durationMs: number;
  found?: FoundDeparture;
}

/**
 * Sequences per fc.check: between them the campaign sees whether the session stopped (its cap, its time), so that the
 * runs left are not drawn for nothing. Pass k draws from seed + k, as the fuzzer's passes do: one seed, the same runs.
 */
const RUNS_PER_PASS = 10;

/** Runs the campaign: `runs` sequences from `seed`, or fewer when a departure is found (then shrunk) or the session stops. */
export async function runCampaign(
  session: ExplorationSession,
  settings: CampaignSettings,
  onProgress: (progress: CampaignProgress) => void = () => {},
): Promise<CampaignResult> {
  const started = Date.now();
  const tally = { runs: 0, shrinkTries: 0, lastTold: 0 };
  const tell = () => {
    if (Date.now() - tally.lastTold < (settings.progressEveryMs ?? 2000)) return;
    tally.lastTold = Date.now();
    onProgress({ runs: tally.runs, shrinkTries: tally.shrinkTries, calls: session.calls, elapsedMs: Date.now() - started });
  };
  // Set inside the property, which TypeScript does not follow: a holder rather than a variable it would narrow.
  const departure: { found?: FoundDeparture } = {};
  const property = fc.asyncProperty(sequencesOf(session, settings), async (commands) => {
    if (departure.found) tally.shrinkTries += 1;
    else tally.runs += 1;
    session.beginSequence();
    try {
      await fc.asyncModelRun(() => ({ model: emptyModel(), real: session }), commands);
    } catch (error) {
      // The last sequence that fails is the one fast-check ends its shrinking on: it is kept as it ran.
      if ((error as Error).name === 'ConformanceFailure')
        departure.found = departureOf(session.current, error as ConformanceFailure, departure.found, tally.runs);
      throw error;
    } finally {
      tell();
    }
  });
  for (let pass = 0; tally.runs < settings.runs && !departure.found && !session.halted; pass += 1) {
    const seed = (settings.seed + pass) | 0;
    const details = await fc.check(property, { seed, numRuns: Math.min(RUNS_PER_PASS, settings.runs - tally.runs) });
    const found = departure.found as FoundDeparture | undefined;
    if (details.failed && !found) throw details.errorInstance ?? new Error('fast-check failed without a departure');
    if (found) found.fastCheck = { seed, path: details.counterexamplePath ?? '' };
  }
  const { found } = departure;
  return { runs: tally.runs, shrinkTries: tally.shrinkTries, durationMs: Date.now() - started, ...(found ? { found } : {}) };
}

/** The sequences fast-check draws: the exploration's commands, up to maxCommands of them. */
function sequencesOf(session: ExplorationSession, settings: CampaignSettings) {
  return fc.commands([...transactionCommands(session.config.strict), ...accountCommands()], {
    maxCommands: settings.maxCommands,
    // Sequences of every length up to the most, rather than fast-check's small default.
    size: 'max',
  });
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
    fastCheck: undefined,
  };
}
