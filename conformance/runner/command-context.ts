import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';

/**
 * What a command of the conformance layer is given by the process that runs it: its arguments, environment and
 * directory, where its lines go, and how the embedded sandbox's named deviations and variations become plugins (those
 * live in sandbox-quality/, above this layer, so the command line hands them down).
 */
export interface CommandContext {
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  log: (line: string) => void;
  /**
   * Turns the names of MOMO_SANDBOX_DEVIATIONS into plugins for the embedded sandbox (sandbox-quality/faults);
   * throws, saying what to fix, on a name it does not know. Without it, deviations cannot be asked for.
   */
  faults?: (names: string[]) => SandboxPlugin[];
  /** Turns the names of MOMO_SANDBOX_VARIATIONS into plugins for the embedded sandbox (sandbox-quality/variations). */
  variations?: (names: string[]) => SandboxPlugin[];
}
