import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';

/** An accepted failure: while it holds, the requirement's failure is reported WAIVED rather than FAIL. */
export interface Waiver {
  requirement: string;
  reason: string;
  owner: string;
  /** The last day (UTC) it holds, YYYY-MM-DD. */
  expires: string;
}

/** The waivers file is wrong: the run cannot start (exit 2), as for any other configuration error. */
export class WaiverError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(
      `The waivers file ${file} is wrong:\n${problems.map((p) => `  - ${p}`).join('\n')}\nSee schemas/waivers.schema.json and docs/conformance.md, "Waivers".`,
    );
    this.name = 'WaiverError';
  }
}

export const DEFAULT_WAIVERS_FILE = 'waivers.json';

/**
 * The waivers file of a run: the one MOMO_WAIVERS names (which must exist), else waivers.json in the
 * project folder if there is one, else none.
 */
export function waiversFileOf(cwd: string, setting: string | undefined): string | undefined {
  if (setting) return resolve(cwd, setting);
  const fallback = join(cwd, DEFAULT_WAIVERS_FILE);
  return existsSync(fallback) ? fallback : undefined;
}

/**
 * The waivers of a file, checked against schemas/waivers.schema.json and against the catalogue: a waiver
 * must name a requirement that exists, and one requirement gets at most one waiver.
 */
export function loadWaivers(file: string, requirementIds: ReadonlySet<string>): Waiver[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new WaiverError(file, [`cannot be read: ${(error as Error).message}`]);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new WaiverError(file, [`is not JSON: ${(error as Error).message}`]);
  }
  const validate = validatorFor('waivers');
  if (!validate(document)) throw new WaiverError(file, describeErrors(validate.errors));
  const waivers = (document as { waivers: Waiver[] }).waivers;
  const problems: string[] = [];
  const seen = new Set<string>();
  waivers.forEach((waiver, i) => {
    if (!requirementIds.has(waiver.requirement)) {
      problems.push(
        `/waivers/${i} names the requirement ${waiver.requirement}, which is not in the requirement catalogue (requirements/momo-api.requirements.json): correct the id or remove the waiver`,
      );
    } else if (seen.has(waiver.requirement)) {
      problems.push(`/waivers/${i} waives ${waiver.requirement} a second time: keep one waiver per requirement`);
    }
    seen.add(waiver.requirement);
  });
  if (problems.length > 0) throw new WaiverError(file, problems);
  return waivers;
}
