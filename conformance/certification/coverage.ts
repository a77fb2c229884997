import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { generateMessages } from '@cucumber/gherkin';
import { IdGenerator, SourceMediaType } from '@cucumber/messages';
import { BEYOND_SPEC_TAG, REQUIREMENT_TAG_PREFIX, STRICT_TAG, requirementIdsOf, type Requirement } from './requirements.ts';

export const FEATURES_DIR = join(PACKAGE_ROOT, 'features');

/** One scenario as cucumber runs it (an outline's row is one), with every tag it inherits. */
export interface TaggedScenario {
  /** features/collection.feature:9, where the scenario (or outline) starts. */
  location: string;
  name: string;
  /** Feature, rule, scenario and examples tags, as cucumber gives them to the pickle. */
  tags: string[];
}

/**
 * Every scenario of the .feature files in a folder, as pickles: the same expansion cucumber makes, so an
 * Examples block's tags count only for its rows. A file gherkin cannot parse throws, naming the file.
 */
export function readScenarios(dir: string = FEATURES_DIR): TaggedScenario[] {
  const scenarios: TaggedScenario[] = [];
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.feature'))
    .sort()) {
    const path = join(dir, file);
    const uri = relative(PACKAGE_ROOT, path);
    const envelopes = generateMessages(readFileSync(path, 'utf8'), uri, SourceMediaType.TEXT_X_CUCUMBER_GHERKIN_PLAIN, {
      includeSource: false,
      includeGherkinDocument: true,
      includePickles: true,
      newId: IdGenerator.incrementing(),
    });
    const lines = new Map<string, number>();
    for (const envelope of envelopes) {
      if (envelope.parseError) throw new Error(`${uri} cannot be parsed: ${envelope.parseError.message}`);
      for (const child of envelope.gherkinDocument?.feature?.children ?? []) {
        for (const scenario of [child.scenario, ...(child.rule?.children ?? []).map((c) => c.scenario)]) {
          if (scenario) lines.set(scenario.id, scenario.location.line);
        }
      }
      const pickle = envelope.pickle;
      if (pickle) {
        scenarios.push({
          location: `${uri}:${lines.get(pickle.astNodeIds[0]!) ?? '?'}`,
          name: pickle.name,
          tags: pickle.tags.map((t) => t.name),
        });
      }
    }
  }
  return scenarios;
}

/** The scenarios that name each requirement, by id; ids no requirement has are kept too, for checkCoverage. */
export function scenariosByRequirement(scenarios: readonly TaggedScenario[]): Map<string, TaggedScenario[]> {
  const byId = new Map<string, TaggedScenario[]>();
  for (const scenario of scenarios) {
    for (const id of requirementIdsOf(scenario.tags)) byId.set(id, [...(byId.get(id) ?? []), scenario]);
  }
  return byId;
}

/**
 * What is wrong between the catalogue and the scenarios, one line each, empty when nothing is: a requirement
 * to verify by scenario that no scenario names, an unprovokable one that a scenario names (or that says
 * nothing of why), a tag naming a requirement the catalogue does not have, and the strict readings and the
 * operations beyond the spec mixed with the rest: a requirement of a strict reading is named by @strict
 * scenarios alone, each @strict scenario names one, and the same holds for @beyond-spec.
 */
export function coverageProblems(requirements: readonly Requirement[], scenarios: readonly TaggedScenario[]): string[] {
  const problems: string[] = [];
  const byId = scenariosByRequirement(scenarios);
  const where = (list: readonly TaggedScenario[]) => [...new Set(list.map((s) => `"${s.name}" (${s.location})`))].join(', ');
  for (const requirement of requirements) {
    const verifying = byId.get(requirement.id) ?? [];
    if (requirement.verification === 'scenario' && verifying.length === 0) {
      problems.push(
        `${requirement.id} (${requirement.section}) has no scenario: tag the scenario that verifies it with ${REQUIREMENT_TAG_PREFIX}${requirement.id}`,
      );
    }
    if (requirement.verification === 'unprovokable') {
      if (!requirement.why?.trim()) problems.push(`${requirement.id} is unprovokable but does not say why`);
      if (verifying.length > 0)
        problems.push(
          `${requirement.id} is listed as unprovokable, yet ${where(verifying)} names it: make it "scenario", or remove the tag`,
        );
    }
  }
  const byRequirementId = new Map(requirements.map((r) => [r.id, r]));
  const apart = [
    { tag: STRICT_TAG, holds: (r: Requirement) => r.reading !== undefined, what: 'a strict reading' },
    { tag: BEYOND_SPEC_TAG, holds: (r: Requirement) => r.scope === 'beyond-spec', what: 'beyond the spec' },
  ];
  for (const { tag, holds, what } of apart) {
    for (const requirement of requirements.filter(holds)) {
      const untagged = (byId.get(requirement.id) ?? []).filter((s) => !s.tags.includes(tag));
      if (untagged.length > 0)
        problems.push(`${requirement.id} is ${what}, yet ${where(untagged)} names it without ${tag}: tag the scenario ${tag}`);
    }
    for (const scenario of scenarios.filter((s) => s.tags.includes(tag))) {
      const named = requirementIdsOf(scenario.tags)
        .map((id) => byRequirementId.get(id))
        .filter((r): r is Requirement => r !== undefined);
      if (!named.some(holds))
        problems.push(
          `"${scenario.name}" (${scenario.location}) is tagged ${tag} but names no requirement ${what}: name one, or remove the tag`,
        );
    }
  }
  const known = new Set(requirements.map((r) => r.id));
  for (const [id, list] of byId) {
    if (!known.has(id)) problems.push(`${REQUIREMENT_TAG_PREFIX}${id} names no requirement of the catalogue, in ${where(list)}`);
  }
  return problems;
}
