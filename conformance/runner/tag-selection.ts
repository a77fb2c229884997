import { parse as parseTagExpression } from '@cucumber/tag-expressions';
import { nearestWords } from '../../core/command-line.ts';
import { REQUIREMENT_TAG_PREFIX } from '../certification/requirements.ts';
import type { TaggedScenario } from '../certification/coverage.ts';

/** A --tags expression that cannot select what the user meant: the run stops before it starts anything. */
export class TagSelectionError extends Error {
  constructor(expression: string, problems: string[]) {
    const text = problems.join('; ');
    super(`--tags ${JSON.stringify(expression)}: ${text}${/[.?]$/.test(text) ? '' : '.'}`);
    this.name = 'TagSelectionError';
  }
}

const GOOD_EXAMPLE = 'A tag expression is tags joined by and, or, not and parentheses, e.g. --tags "@collection and not @slow"';

/**
 * Checks the user's own --tags (before the run adds `not @strict` and the like) against the grammar of tag
 * expressions and against the tags the scenarios carry (read from the feature files with cucumber's own parser),
 * and returns the scenarios it selects. A malformed expression, a tag written without @, or a tag that no scenario
 * carries would otherwise start the target and the workers, and end 15 s later in "nothing matched" or in
 * cucumber's own words; here it throws TagSelectionError, which names what to write instead.
 */
export function checkTagExpression(expression: string, scenarios: readonly TaggedScenario[]): TaggedScenario[] {
  if (expression.trim() === '') throw new TagSelectionError(expression, [`it is empty. ${GOOD_EXAMPLE}`]);
  const words = expression.split(/[\s()]+/).filter(Boolean);
  const shouted = words.filter((w) => /^(and|or|not)$/i.test(w) && w !== w.toLowerCase());
  if (shouted.length > 0) {
    const lowered = rewriteWords(expression, new Map(shouted.map((w) => [w, w.toLowerCase()])));
    throw new TagSelectionError(expression, [`the operators are written in lower case: did you mean ${asArgument(lowered)}?`]);
  }
  const commas = words.filter((w) => w.includes(','));
  if (commas.length > 0)
    throw new TagSelectionError(expression, [
      `tags are joined with "or" or "and", not commas: "${commas[0]!.split(',').filter(Boolean).join(' or ')}" runs the scenarios that carry any of them`,
    ]);

  let parsed;
  try {
    parsed = parseTagExpression(expression);
  } catch (error) {
    throw new TagSelectionError(expression, [`${syntaxProblem((error as Error).message, words)}. ${GOOD_EXAMPLE}`]);
  }

  const carried = [...new Set(scenarios.flatMap((s) => s.tags))].sort();
  const literals = [...new Set(literalsOf(parsed))];
  // A tag written without @ that is a tag with it: the whole expression, corrected, is the clearest answer.
  const bare = literals.filter((tag) => !tag.startsWith('@'));
  if (bare.length > 0 && bare.every((tag) => carried.includes(`@${tag}`))) {
    throw new TagSelectionError(expression, [
      `tags start with @: did you mean ${asArgument(rewriteWords(expression, new Map(bare.map((tag) => [tag, `@${tag}`]))))}?`,
    ]);
  }
  const problems = literals.flatMap((tag) => tagProblem(tag, carried));
  if (problems.length > 0) throw new TagSelectionError(expression, problems);

  const selected = scenarios.filter((s) => parsed.evaluate(s.tags));
  if (selected.length === 0)
    throw new TagSelectionError(expression, ['every tag it names is on a scenario, but no scenario has the combination it asks for']);
  return selected;
}

/** What a tag expression parser's complaint means, in words that say where to look. */
function syntaxProblem(message: string, words: readonly string[]): string {
  const reason = /syntax error: (.*?)\.?$/.exec(message)?.[1] ?? message;
  if (reason === 'Expected operand') {
    const last = words.at(-1);
    const first = words[0];
    if (last === 'and' || last === 'or' || last === 'not') return `it ends with "${last}", which needs a tag after it`;
    if (first === 'and' || first === 'or') return `it starts with "${first}", which needs a tag before it`;
    return '"and" and "or" need a tag on each side, and "not" one after it; a tag is missing';
  }
  if (reason === 'Expected operator') return 'two tags stand side by side: join them with "and" or "or"';
  if (reason === 'Unmatched (') return 'a "(" is not closed';
  if (reason === 'Unmatched )') return 'a ")" closes nothing';
  return reason;
}

/** The expression with some of its words replaced, its spacing and parentheses kept. */
function rewriteWords(expression: string, replacements: ReadonlyMap<string, string>): string {
  return expression
    .split(/(\s+|[()])/)
    .map((piece) => replacements.get(piece) ?? piece)
    .join('');
}

/** An expression as it is written after --tags in a shell: quoted when it has spaces. */
function asArgument(expression: string): string {
  return /[\s()]/.test(expression) ? JSON.stringify(expression) : expression;
}

/** What is wrong with one tag of the expression, given the tags the scenarios carry: nothing, or one line. */
function tagProblem(tag: string, carried: readonly string[]): string[] {
  if (!tag.startsWith('@')) {
    const meant = carried.includes(`@${tag}`) ? [`@${tag}`] : nearestWords(`@${tag}`, carried);
    return [
      `tags start with @: ${meant.length > 0 ? `did you mean ${meant.join(' or ')}?` : `"${tag}" is no tag (${tagsInUse(carried)})`}`,
    ];
  }
  if (carried.includes(tag)) return [];
  const nearest = nearestWords(tag, carried);
  return [
    nearest.length > 0
      ? `no scenario carries ${tag}; did you mean ${nearest.join(' or ')}?`
      : `no scenario carries ${tag} (${tagsInUse(carried)})`,
  ];
}

/** The tags a user can select by, short: each tag but the requirement ids, which are many and follow one form. */
function tagsInUse(carried: readonly string[]): string {
  const plain = carried.filter((t) => !t.startsWith(REQUIREMENT_TAG_PREFIX));
  return `the scenarios carry ${plain.join(', ')}, and ${REQUIREMENT_TAG_PREFIX}<requirement id> (requirements/momo-api.requirements.json)`;
}

/**
 * The tags an expression names. @cucumber/tag-expressions gives its tree a public evaluate() only; its nodes keep
 * their parts in the fields value (a tag), leftExpr and rightExpr (and, or) and expr (not), which
 * test/conformance/tag-selection.test.ts holds, so that an upgrade that renames them is seen.
 */
export function literalsOf(node: unknown): string[] {
  const parts = node as { value?: unknown; leftExpr?: unknown; rightExpr?: unknown; expr?: unknown };
  if (typeof parts.value === 'string') return [parts.value];
  return [parts.leftExpr, parts.rightExpr, parts.expr].filter((part) => part !== undefined).flatMap(literalsOf);
}
