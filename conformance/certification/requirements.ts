import { fileURLToPath } from 'node:url';
import { readCheckedJson } from '../../core/validation/json-document.ts';

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
  /** 'unprovokable': no client can make a target show it; `why` says why. */
  verification: 'scenario' | 'unprovokable';
  why?: string;
}

/** A scenario tagged `@req:COL-RTP-DUPLICATE-409` verifies that requirement (cucumber's tag expressions accept the colon). */
export const REQUIREMENT_TAG_PREFIX = '@req:';

export const DEFAULT_CATALOGUE = fileURLToPath(new URL('../../requirements/momo-api.requirements.json', import.meta.url));

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
  if (repeated.size > 0) throw new CatalogueError(file, [...repeated].map((id) => `the id ${id} is used more than once`));
  return requirements;
}

/** The requirement ids that a scenario's tags name, in order, each once: `@req:X` gives X; other tags are ignored. */
export function requirementIdsOf(tags: readonly string[]): string[] {
  const ids = tags.filter((tag) => tag.startsWith(REQUIREMENT_TAG_PREFIX)).map((tag) => tag.slice(REQUIREMENT_TAG_PREFIX.length));
  return [...new Set(ids)];
}
