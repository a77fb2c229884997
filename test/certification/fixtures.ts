import type { Requirement } from '../../conformance/certification/requirements.ts';
import type { ScenarioOutcome } from '../../conformance/certification/verdicts.ts';

/** A requirement of a small fixture catalogue: a collection request to pay rule unless told otherwise. */
export function requirement(id: string, more: Partial<Requirement> = {}): Requirement {
  return { id, section: '§4.2 #2', text: `the statement of ${id}`, products: ['collection'], operations: ['requestToPay'], verification: 'scenario', ...more };
}

/** A scenario verifying the given requirements, with the ledger's verdict (or 'not run'). */
export function scenario(name: string, verdict: ScenarioOutcome['verdict'], requirements: string[], more: Partial<ScenarioOutcome> = {}): ScenarioOutcome {
  return {
    id: `pickle-${name}`,
    feature: 'Collection',
    name,
    uri: 'features/collection.feature',
    line: 10,
    tags: ['@collection', ...requirements.map((id) => `@req:${id}`)],
    verdict,
    ...more,
  };
}
