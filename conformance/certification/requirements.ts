import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { readCheckedJson } from '../../core/validation/json-document.ts';
import type { StrictReading } from '../../core/profiles.ts';

/** One testable statement of the spec, with the stable id that scenarios name in a '@req:' tag. */
export interface Requirement {
  id: string;
  /** Where the spec says it, e.g. "§4.2 #2". */
  section: string;
  /** The statement in one line. */
  text: string;
  /** Products it applies to: collection, disbursement, remittance, provisioning. */
  products: string[];
  /** OperationId values of harness/contract.ts; empty for cross-cutting rules. */
  operations: string[];
  /**
   * The named checks (harness/checks/index.ts) that verify it, on its operations: in a failed scenario, a failed one
   * fails it; one that passed before the failure passes it; none of them reached leaves it not tested.
   */
  checks?: string[];
  /** 'unprovokable': no client can make a target show it; `why` says why. */
  verification: 'scenario' | 'unprovokable';
  why?: string;
  /** beyond-spec: about an operation the live service has and the spec does not list; `source` says where that is known from. */
  scope?: 'spec' | 'beyond-spec';
  source?: string;
  /** The strict reading it rests on (STRICT_READINGS in core/profiles.ts): checked only with --strict. */
  reading?: StrictReading;
}

/** Which count a requirement is in: the spec's, the strict readings', or beyond the spec. */
export type RequirementGroup = 'spec' | 'strict reading' | 'beyond the spec';

export function groupOf(requirement: Pick<Requirement, 'scope' | 'reading'>): RequirementGroup {
  if (requirement.scope === 'beyond-spec') return 'beyond the spec';
  return requirement.reading ? 'strict reading' : 'spec';
}

/** A scenario tagged `@req:COL-RTP-DUPLICATE-409` verifies that requirement (cucumber's tag expressions accept the colon). */
export const REQUIREMENT_TAG_PREFIX = '@req:';

/** The tag of a scenario that holds a target to a strict reading (STRICT_READINGS): run only with --strict. */
export const STRICT_TAG = '@strict';

/** The tag of a scenario of an operation the live service has beyond the spec (beyondSpec in the catalogue). */
export const BEYOND_SPEC_TAG = '@beyond-spec';

/** The tag of a scenario that needs two customers' user information told apart: left out where a profile has it one record. */
export const TWO_CUSTOMERS_TAG = '@two-customers';

export const DEFAULT_CATALOGUE = join(PACKAGE_ROOT, 'requirements/momo-api.requirements.json');

export class CatalogueError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`The requirement catalogue ${file} is wrong:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'CatalogueError';
  }
}

/**
 * The requirements of a catalogue file (by default requirements/momo-api.requirements.json), checked against
 * schemas/requirements-catalogue.schema.json and for repeated ids. Throws a CatalogueError naming the file and
 * each problem.
 */
export function loadRequirements(file: string = DEFAULT_CATALOGUE): Requirement[] {
  const checked = readCheckedJson<{ requirements: Requirement[] }>(file, 'requirements-catalogue');
  if (!checked.ok) throw new CatalogueError(file, checked.problems);
  const { requirements } = checked.document;
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const { id } of requirements) (seen.has(id) ? repeated : seen).add(id);
  if (repeated.size > 0)
    throw new CatalogueError(
      file,
      [...repeated].map((id) => `the id ${id} is used more than once`),
    );
  return requirements;
}

/** The requirement ids that a scenario's tags name, in order, each once: `@req:X` gives X; other tags are ignored. */
export function requirementIdsOf(tags: readonly string[]): string[] {
  const ids = tags.filter((tag) => tag.startsWith(REQUIREMENT_TAG_PREFIX)).map((tag) => tag.slice(REQUIREMENT_TAG_PREFIX.length));
  return [...new Set(ids)];
}
