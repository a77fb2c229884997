/**
 * features/inputs.feature and features/every-operation.feature, and docs/rule-coverage.md from them. inputs.feature is
 * generated from the input classes of the spec's creations (harness/checks/inputs.ts, which
 * derives them from the catalogue and the request schemas), so that every rule about an input is tried on every
 * creation that has the input, in the domain's words. The requirement tags come from the requirements catalogue: the
 * creation's own (the one of its operation whose id ends in -INVALID-400 or -ACCEPTED-202) and each case's.
 *
 *   npm run generate:features            # writes the file
 *   npm run generate:features -- --check # exits 1 when the file is not what the catalogue gives (a test runs this)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPERATIONS, type OperationId } from '../core/catalogue/operations.ts';
import {
  type CreationInputs,
  type InputCase,
  inputCasesOf,
  ownStatusQuery,
  reuseCasesOf,
  specCreations,
} from '../harness/checks/inputs.ts';
import { loadRequirements } from '../conformance/certification/requirements.ts';
import { readScenarios } from '../conformance/certification/coverage.ts';
import { operationsLeftTo, readOfCreation, ruleMatrix, ruleMatrixMarkdown } from '../conformance/certification/rule-matrix.ts';
import { bindingOf } from '../core/catalogue/routes.ts';
import {
  BEARER_NAMED,
  keyCalls,
  specCalls,
  takesAccessToken,
  takesBasicCredential,
  takesJsonBody,
  type SpecCall,
} from '../harness/checks/every-operation.ts';

export const INPUTS_FEATURE = fileURLToPath(new URL('../features/inputs.feature', import.meta.url));
export const EVERY_OPERATION_FEATURE = fileURLToPath(new URL('../features/every-operation.feature', import.meta.url));

/** How the steps name what a creation leaves behind: "no payment was created". */
const NOUN: Record<string, string> = { requestToPay: 'payment', deposit: 'deposit', refund: 'refund' };

/** The creation's own requirement whose id ends so: COL-RTP-INVALID-400 for a request to pay. */
function ownRequirement(creation: CreationInputs, ending: string): string {
  const found = loadRequirements().find((r) => r.id.endsWith(ending) && r.operations.includes(creation.id));
  if (!found) throw new Error(`No requirement ending in ${ending} names ${creation.id} in requirements/momo-api.requirements.json`);
  return found.id;
}

/** The Examples blocks of an outline: one per set of requirement tags and strictness, in the order cases come. */
function examples(cases: InputCase[], column: string): string[] {
  const groups = new Map<string, InputCase[]>();
  for (const c of cases) {
    const key = JSON.stringify([c.strict, c.requirements]);
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const width = Math.max(column.length, ...cases.map((c) => c.phrase.length));
  return [...groups.values()].flatMap((group) => {
    const { strict, requirements } = group[0]!;
    const tags = [...(strict ? ['@strict'] : []), ...requirements.map((id) => `@req:${id}`)];
    const reading = strict && group[0]!.rule.kind === 'reading' ? /strict reading (\w+)/.exec(group[0]!.rule.reading)?.[1] : undefined;
    return [
      '',
      ...(tags.length > 0 ? [`    ${tags.join(' ')}`] : []),
      `    Examples:${reading ? ` refused under the strict reading ${reading}` : ''}`,
      `      | ${column.padEnd(width)} |`,
      ...group.map((c) => `      | ${c.phrase.padEnd(width)} |`),
    ];
  });
}

/** What every outline of one creation shares: the creation, how its steps name it, and its Given steps. */
interface CreationOutlines {
  creation: CreationInputs;
  /** "payment": what the steps say was not created. */
  noun: string;
  given: string[];
  cases: InputCase[];
}

/** The outlines of one creation: its invalid inputs, its required headers left out, its valid forms. */
function outlinesOf(creation: CreationInputs): string[] {
  const shared: CreationOutlines = {
    creation,
    noun: NOUN[creation.id] ?? creation.label,
    given: [
      `    Given a partner subscribed to ${creation.product}`,
      ...(creation.id === 'refund' ? ['    And a customer who approves has paid the partner 10 through collection'] : []),
    ],
    cases: inputCasesOf(creation),
  };
  const refused = ownRequirement(creation, '-INVALID-400');
  return [
    ...invalidInputOutline(shared, refused),
    ...missingHeaderOutline(shared),
    ...validInputOutline(shared),
    ...keptInputOutline(shared),
    ...leftFreeScenario(creation, shared.given, refused),
    ...reuseOutline(shared, false),
    ...exactRepeatScenario(shared),
    ...nextCreationScenario(shared),
    ...externalIdReuseScenario(shared),
    ...moneyOutlines(creation, shared.given),
    ...reuseOutline(shared, true),
  ];
}

/** One outline whose Examples are the creation's input cases of a kind; none when the creation has no such case. */
function inputOutline(shared: CreationOutlines, kind: InputCase['kind'], tags: string[], title: string, steps: string[]): string[] {
  const rows = shared.cases.filter((c) => c.kind === kind);
  if (rows.length === 0) return [];
  return [
    '',
    `  ${[`@${shared.creation.product}`, ...tags].join(' ')}`,
    `  Scenario Outline: ${title}`,
    ...shared.given,
    ...steps,
    ...examples(rows, 'input'),
  ];
}

function invalidInputOutline(shared: CreationOutlines, refused: string): string[] {
  const { label } = shared.creation;
  return inputOutline(shared, 'invalid', ['@negative', `@req:${refused}`], `A ${label} with <input> is refused as invalid`, [
    `    When the partner asks for a ${label} with <input>`,
    '    Then it is refused as invalid',
    `    And no ${shared.noun} was created`,
  ]);
}

function missingHeaderOutline(shared: CreationOutlines): string[] {
  const { label } = shared.creation;
  return inputOutline(shared, 'missing-header', ['@negative'], `A ${label} without <input> is refused`, [
    `    When the partner asks for a ${label} without <input>`,
    '    Then it is refused, by our reading as invalid',
    `    And no ${shared.noun} was created`,
  ]);
}

function validInputOutline(shared: CreationOutlines): string[] {
  const { label } = shared.creation;
  return inputOutline(
    shared,
    'valid',
    [`@req:${ownRequirement(shared.creation, '-ACCEPTED-202')}`],
    `A ${label} with <input> is accepted`,
    [`    When the partner asks for a ${label} with <input>`, '    Then it is accepted, and its record reads back as asked'],
  );
}

function keptInputOutline(shared: CreationOutlines): string[] {
  const { label } = shared.creation;
  return inputOutline(shared, 'kept', [], `A ${label} with <input> is refused as invalid, or kept as asked`, [
    `    When the partner asks for a ${label} with <input>`,
    '    Then it is refused as invalid, or its record reads back as asked',
  ]);
}

/** A creation asked again under the reference id of an ended one, as it was or written in upper case. */
function reuseOutline(shared: CreationOutlines, upperCase: boolean): string[] {
  const { creation, given } = shared;
  const rows = reuseCasesOf(creation)
    .filter((r) => r.upperCase === upperCase)
    .map((r) => r.earlier);
  if (rows.length === 0) return [];
  const width = Math.max('earlier'.length, ...rows.map((r) => r.length));
  const title = upperCase
    ? `A ${creation.label} under the reference id of one with <earlier>, in upper case, is not made twice`
    : `A ${creation.label} under the reference id of one with <earlier> is refused as a duplicate`;
  return [
    '',
    `  @${creation.product} @negative @req:${ownRequirement(creation, '-DUPLICATE-409')}`,
    `  Scenario Outline: ${title}`,
    ...given,
    `    And the partner's ${creation.label} with <earlier> has ended`,
    `    When the partner asks for a ${creation.label} again under its reference id${upperCase ? ' written in upper case' : ''}`,
    upperCase ? '    Then it is refused, by our reading as a duplicate' : '    Then it is refused as a duplicate',
    `    And the earlier ${creation.label} is unchanged`,
    '',
    '    Examples:',
    `      | ${'earlier'.padEnd(width)} |`,
    ...rows.map((r) => `      | ${r.padEnd(width)} |`),
  ];
}

/**
 * The same request again, byte for byte, under its reference id: §2.5 refuses a request that reuses an existing
 * reference id, whatever it carries, so a server that takes an identical repeat as a replay (202, nothing made) departs.
 */
function exactRepeatScenario(shared: CreationOutlines): string[] {
  const { creation, given } = shared;
  const earlier = reuseCasesOf(creation).find((r) => r.earlier.endsWith('who approves'))?.earlier;
  if (earlier === undefined) return [];
  return [
    '',
    `  @${creation.product} @negative @req:${ownRequirement(creation, '-DUPLICATE-409')}`,
    `  Scenario: A ${creation.label} sent again exactly as it was, under its reference id, is refused as a duplicate`,
    ...given,
    `    And the partner's ${creation.label} with ${earlier} has ended`,
    `    When the partner sends the ${creation.label} again exactly as it was`,
    '    Then it is refused as a duplicate',
    `    And the earlier ${creation.label} is unchanged`,
  ];
}

/**
 * A transaction reads as it was asked after the partner's next one of its kind, to another party: a record the next
 * creation overwrote (a payer or an amount held in one place) departs, which a read right after creation cannot show.
 */
function nextCreationScenario(shared: CreationOutlines): string[] {
  const { creation, given } = shared;
  const role = creation.party === 'payer' ? 'customer' : 'payee';
  // A refund names no party of its own: the next one refunds another payment.
  const earlier = creation.party ? `a ${role} who approves` : 'a customer who approves';
  const next = creation.party
    ? `    When the partner asks for another ${creation.label}, with a ${role} whose wallet fails`
    : `    When the partner asks for another ${creation.label}, of another payment`;
  return [
    '',
    `  @${creation.product} @req:${ownStatusQuery(creation)}`,
    `  Scenario: A ${creation.label} still reads as it was asked after the partner's next one`,
    ...given,
    `    And the partner's ${creation.label} with ${earlier} has ended`,
    next,
    `    Then the earlier ${creation.label} still reads as it was asked`,
  ];
}

/** Every record the catalogue lets a partner create under a reference id of its own and read back by it (rule-matrix.ts). */
export function creatableRecords(): { create: OperationId; read: OperationId }[] {
  return (Object.keys(OPERATIONS) as OperationId[]).flatMap((id) => {
    const read = OPERATIONS[id].spec?.length ? readOfCreation(OPERATIONS[id]) : undefined;
    return read ? [{ create: id, read }] : [];
  });
}

/**
 * A record that is no transaction, read after the partner's next one of its kind: the API user (§4.5 #16 reads the one
 * its path names), registered with another callback host the second time, so that a read answering the latest shows.
 */
function nextRecordScenarios(): string[] {
  const transactions = new Set<string>(specCreations().map((c) => c.id));
  return creatableRecords()
    .filter((r) => !transactions.has(r.create))
    .flatMap((r) => {
      if (r.create !== 'createApiUser')
        throw new Error(`No scenario reads a ${OPERATIONS[r.create].label} after the next one: add it here`);
      const requirement = loadRequirements().find((q) => q.id.endsWith('-READ-200') && q.operations.includes(r.read));
      if (!requirement) throw new Error(`No requirement ending in -READ-200 names ${r.read}`);
      return [
        '',
        `  @provisioning @req:${requirement.id}`,
        "  Scenario: An API user still reads as it was registered after the partner's next one",
        '    Given a partner subscribed to collection',
        '    And the partner has registered an API user',
        '    When the partner registers another API user, with another callback host',
        '    Then the API user registered first still reads as it was registered',
      ];
    });
}

/**
 * An external id need not be unique (§2.2, §2.4; §2.3 takes §2.2's fields): a creation under the external id of the
 * partner's earlier one of its kind is made like any other. A server that keys its payouts on the partner's reference
 * refuses it.
 */
function externalIdReuseScenario(shared: CreationOutlines): string[] {
  const { creation, given } = shared;
  const role = creation.party === 'payee' ? 'a payee' : 'a customer';
  return [
    '',
    `  @${creation.product} @req:${ownRequirement(creation, '-EXTERNALID-REUSE')}`,
    `  Scenario: A ${creation.label} may carry the external reference of the partner's earlier one`,
    ...given,
    `    And the partner's ${creation.label} with ${role} who approves has ended`,
    `    When the partner asks for another ${creation.label} under the external reference of the earlier one`,
    '    Then it is accepted',
    `    And the ${shared.noun} ends SUCCESSFUL`,
  ];
}

/** A creation refused as invalid took nothing: its reference id is free for a valid one (§2.5, §7 rule 1). */
function leftFreeScenario(creation: CreationInputs, given: string[], refused: string): string[] {
  return [
    // Refused, it made nothing to tell of: the callback address it gave hears nothing.
    ...(OPERATIONS[creation.id].headers.optional.includes('x-callback-url')
      ? [
          '',
          `  @${creation.product} @negative @callback @req:${refused}`,
          `  Scenario: A ${creation.label} refused as invalid calls nobody back`,
          ...given,
          `    When the partner asks for a ${creation.label} with an amount given as a number, not a string, to be told at its callback address`,
          '    Then it is refused as invalid',
          '    And nothing arrives at its callback address',
        ]
      : []),
    '',
    `  @${creation.product} @negative @req:${refused}`,
    `  Scenario: A ${creation.label} refused as invalid leaves its reference id free`,
    ...given,
    `    When the partner asks for a ${creation.label} with an amount given as a number, not a string`,
    '    Then it is refused as invalid',
    `    And a ${creation.label} made right under the same reference id is accepted`,
  ];
}

/** What the money scenarios of one creation share: who they start with, their tags, the customer who approves. */
interface MoneyContext {
  creation: CreationInputs;
  given: string[];
  /** `given`, for a new partner whose balance nothing else moves, seen to move once and read. */
  newPartner: string[];
  /** The creation's product, and @beyond-spec where its balance is beyond the spec. */
  tags: string;
  beyond: string;
  /** The earlier case of a party who approves: "a customer who approves". */
  approves: string;
}

/**
 * Money moves once: each creation, ended each way its party allows, moves its amount or nothing of the partner's
 * balance (a new partner's, which nothing else moves); and one refused as a duplicate moves no more.
 */
function moneyOutlines(creation: CreationInputs, given: string[]): string[] {
  const rows = reuseCasesOf(creation)
    .map((r) => r.earlier)
    .filter((earlier, i, all) => all.indexOf(earlier) === i);
  // An outcome decided after a while moves money too, not only one decided at once (@slow: it waits for it).
  const later = creation.party ? [`${creation.party === 'payer' ? 'a customer' : 'a payee'} who approves after a while`] : [];
  // The balance the steps read: collection's in a currency (§4.2 #4); disbursement's is beyond the spec.
  const balance = creation.product === 'collection' ? 'getBalanceInCurrency' : 'getBalance';
  const beyond = bindingOf(balance, creation.product).beyondSpec === undefined ? '' : ' @beyond-spec @req:BEY-BALANCE';
  // The balance is first seen to move with a creation of the same account that names a party (a deposit before a
  // refund): a target that keeps balances but does not move them for this kind then departs, rather than looking
  // like one that keeps none.
  const seenWith = specCreations().find((c) => c.product === creation.product && c.party !== undefined) ?? creation;
  const newPartner = [
    given[0]!.replace('Given a partner', 'Given a new partner'),
    `    And the partner has seen its balance move with a first ${seenWith.label}`,
    ...given.slice(1),
    '    And the partner has read its balance',
  ];
  const approves = rows.find((r) => r.endsWith('who approves'))!;
  const context = { creation, given, newPartner, tags: `@${creation.product}${beyond}`, beyond, approves };
  return [
    ...outcomeOutline(context, rows, later),
    ...later.flatMap((slowParty) => overlapScenario(context, slowParty)),
    ...largeAmountScenario(context),
    ...callbackOnlyScenario(context),
    ...duplicateMoneyScenarios(context),
  ];
}

/**
 * A partner that does not poll learns the outcome from its callback alone: the money moves all the same, not once a
 * status query has read it.
 */
function callbackOnlyScenario({ creation, newPartner, tags }: MoneyContext): string[] {
  if (!creation.party) return [];
  return [
    `  ${tags} @callback @req:TXN-MONEY-ONCE`,
    `  Scenario: A ${creation.label} the partner learnt of from its callback alone moves its amount`,
    ...newPartner,
    creation.party === 'payer'
      ? '    When the partner requests 2.2 from a customer who approves, to be told at its callback address'
      : '    When the partner deposits 2.2 to a payee who approves, to be told at its callback address',
    '    And its callback has told the partner it succeeded, and the partner read nothing',
    `    Then the balance has moved by what the ${creation.label} called for`,
    '',
  ];
}

/** Each way the creation's party ends it moves its amount once, or nothing: one decided at once, one after a while. */
function outcomeOutline({ creation, newPartner, tags }: MoneyContext, rows: string[], later: string[]): string[] {
  const width = Math.max('earlier'.length, ...rows.map((r) => r.length), ...later.map((r) => r.length));
  return [
    '',
    `  ${tags} @req:TXN-MONEY-ONCE`,
    `  Scenario Outline: A ${creation.label} with <earlier> moves its amount once, or nothing`,
    ...newPartner,
    `    When the partner's ${creation.label} with <earlier> has ended, telling its callback address`,
    `    Then the balance has moved by what the ${creation.label} called for`,
    '',
    '    Examples:',
    `      | ${'earlier'.padEnd(width)} |`,
    ...rows.map((r) => `      | ${r.padEnd(width)} |`),
    ...(later.length > 0
      ? ['', '    @slow', '    Examples:', `      | ${'earlier'.padEnd(width)} |`, ...later.map((r) => `      | ${r.padEnd(width)} |`)]
      : []),
    '',
  ];
}

/**
 * Two that overlap, one decided after a while and one decided meanwhile: a ledger that wrote back the balance read
 * when the first was accepted would lose what the second moved.
 */
function overlapScenario({ creation, newPartner, tags, approves }: MoneyContext, slowParty: string): string[] {
  return [
    `  ${tags} @slow @req:TXN-MONEY-ONCE`,
    `  Scenario: A ${creation.label} decided after a while, and another decided meanwhile, each move their amount`,
    ...newPartner,
    `    When the partner's ${creation.label} with ${slowParty} is under way`,
    `    And the partner's ${creation.label} with ${approves} has ended meanwhile`,
    `    And the partner's ${creation.label} under way has ended too`,
    `    Then the balance has moved by what each ${creation.label} called for`,
    '',
  ];
}

/** An amount past 32 bits of whole units, with a fraction: a creation that names a party (a refund's is its payment's). */
function largeAmountScenario({ creation, newPartner, tags }: MoneyContext): string[] {
  if (!creation.party) return [];
  return [
    `  ${tags} @req:TXN-MONEY-ONCE`,
    `  Scenario: A ${creation.label} of a large amount moves it once, or nothing`,
    ...newPartner,
    `    When the partner's ${creation.label} of a large amount with a ${creation.party === 'payer' ? 'customer' : 'payee'} who approves has ended`,
    `    Then the balance has moved by what the ${creation.label} called for`,
    '',
  ];
}

/** A duplicate moves no money: refused after the first has ended, sent twice at once, or under another partner's id. */
function duplicateMoneyScenarios({ creation, given, newPartner, tags, beyond, approves }: MoneyContext): string[] {
  const duplicate = `@req:${ownRequirement(creation, '-DUPLICATE-409')}`;
  return [
    `  ${tags} @negative @req:TXN-MONEY-ONCE ${duplicate}`,
    `  Scenario: A ${creation.label} refused as a duplicate moves no money`,
    ...newPartner,
    `    And the partner's ${creation.label} with ${approves} has ended`,
    `    When the partner asks for a ${creation.label} again under its reference id`,
    '    Then it is refused as a duplicate',
    `    And the balance has moved by what the earlier ${creation.label} called for, and no more`,
    // Sent at once, the second finds the first's id only if the store checks and writes it as one step. Where the
    // balance is beyond the spec, the refusal is checked apart from the money, so that every target has it checked.
    ...(beyond
      ? [
          '',
          `  @${creation.product} @negative ${duplicate}`,
          `  Scenario: A ${creation.label} sent twice at once under one reference id is refused once`,
          ...given,
          `    When the partner asks for a ${creation.label} with ${approves} twice at once, under one reference id`,
          '    Then one is accepted and the other refused as a duplicate',
        ]
      : []),
    '',
    `  ${tags} @negative @req:TXN-MONEY-ONCE ${duplicate}`,
    `  Scenario: A ${creation.label} sent twice at once under one reference id is made once`,
    ...newPartner,
    `    When the partner asks for a ${creation.label} with ${approves} twice at once, under one reference id`,
    '    Then one is accepted and the other refused as a duplicate',
    `    And once it has ended, the balance has moved by what the ${creation.label} called for, and no more`,
    // Another API user's reuse: whether reference ids are one space for all is our reading (OTHER_USER_REUSE), a
    // warning unless --strict.
    ...(creation.party
      ? [
          '',
          `  @${creation.product} @negative ${duplicate}`,
          `  Scenario: A ${creation.label} under the reference id another partner used is refused as a duplicate`,
          ...given,
          `    And the partner's ${creation.label} with ${approves} has ended`,
          `    And another new partner subscribed to ${creation.product}`,
          `    When the other partner asks for a ${creation.label} under the reference id of the partner's`,
          "    Then it is refused, by our reading as a duplicate of the partner's",
          `    And the earlier ${creation.label} is unchanged`,
        ]
      : []),
  ];
}

export function inputsFeature(): string {
  return [
    '# Generated by npm run generate:features from harness/checks/inputs.ts (the catalogue and the request schemas).',
    '# Do not edit by hand: change the input classes there, and generate again.',
    '@inputs',
    'Feature: Every input of every creation',
    '  A rule about an input holds wherever the input is sent. Each request to pay, deposit and refund is sent',
    '  every invalid form of each input it has, and must refuse it and create nothing; without each header that',
    '  section 4 requires, and must not serve it; and each form of a party that section 2.1 allows, and must take it.',
    ...specCreations().flatMap(outlinesOf),
    ...nextRecordScenarios(),
    '',
  ].join('\n');
}

/** The calls a rule class applies to that no other of its requirements than the generated one names (rule-matrix.ts). */
function leftTo(classId: string, generated: string): SpecCall[] {
  const left = operationsLeftTo(classId, generated, loadRequirements());
  return specCalls().filter((c) => left.includes(c.id));
}

/** Examples blocks of calls, one per product (so that a product's tag selects its rows), with the column "call". */
function callExamples(calls: SpecCall[]): string[] {
  const width = Math.max('call'.length, ...calls.map((c) => c.phrase.length));
  const products = [...new Set(calls.map((c) => c.product))];
  return products.flatMap((product) => [
    '',
    `    @${product}`,
    '    Examples:',
    `      | ${'product'.padEnd(12)} | ${'call'.padEnd(width)} |`,
    ...calls.filter((c) => c.product === product).map((c) => `      | ${product.padEnd(12)} | ${c.phrase.padEnd(width)} |`),
  ]);
}

/** A rule of every operation as the feature states it: its tags, its title, its When, its Then (outcome), and its calls. */
interface OperationRule {
  tags: string;
  title: string;
  when: string;
  outcome: string;
  calls: () => SpecCall[];
}

const withToken = () => specCalls().filter((c) => takesAccessToken(c.id));

/** The rules in the order the feature gives them; a call's set-up comes from steps/support/every-operation.ts. */
const OPERATION_RULES: readonly OperationRule[] = [
  {
    tags: '@negative @req:AUTH-SUBSCRIPTION-KEY',
    title: '<call> is not served without a subscription key',
    when: 'the partner asks for it without a subscription key',
    outcome: 'it is not served, by our reading as unauthorized',
    calls: keyCalls,
  },
  {
    tags: '@negative @req:AUTH-BEARER-FORGED-401',
    title: '<call> with a forged access token is refused as unauthorized',
    when: 'the partner asks for it with an access token whose signature was altered',
    outcome: 'it is refused as unauthorized',
    calls: withToken,
  },
  {
    tags: '@negative @slow @req:AUTH-TOKEN-EXPIRY',
    title: '<call> with an access token that has expired is refused as unauthorized',
    when: 'the partner asks for it with an access token that has expired',
    outcome: 'it is refused as unauthorized',
    calls: withToken,
  },
  {
    tags: '@negative @req:AUTH-TOKEN-BASIC-ONLY',
    title: "<call> asked for with an access token in place of the API user's credentials is not given",
    when: "the partner asks for it with its access token in place of its API user's credentials",
    outcome: 'it is not served, and where nothing else is wrong refused as unauthorized',
    calls: () => specCalls().filter((c) => takesBasicCredential(c.id)),
  },
  {
    tags: '@negative @req:AUTH-BEARER-NAMED',
    title: "<call> with the API user's credentials in place of an access token is refused as unauthorized",
    when: "the partner asks for it with its API user's credentials in place of an access token",
    outcome: 'it is refused as unauthorized',
    calls: () => specCalls().filter((c) => BEARER_NAMED[c.id] !== undefined),
  },
  {
    tags: '@negative @req:BODY-NOT-JSON-400',
    title: '<call> whose body is not JSON is refused as invalid',
    when: 'the partner asks for it with a body that is not JSON',
    outcome: 'it is refused as invalid',
    calls: () => specCalls().filter((c) => takesJsonBody(c.id)),
  },
  {
    tags: '@req:CONTENT-TYPE-OPTIONAL',
    title: '<call> whose body does not name its media type is served',
    when: 'the partner asks for it without naming the media type of its body',
    outcome: 'it is served as if it had named it',
    calls: () => leftTo('content-type-optional', 'CONTENT-TYPE-OPTIONAL'),
  },
  {
    tags: '@req:MEDIA-TYPE-ANY-CASE',
    title: '<call> whose body names its media type in capitals is served',
    when: 'the partner asks for it naming the media type of its body in capitals',
    outcome: 'it is served as if it had named it in lower case',
    calls: () => leftTo('media-type-any-case', 'MEDIA-TYPE-ANY-CASE'),
  },
  {
    tags: '@negative @req:TXN-UNKNOWN-404',
    title: '<call> naming one that was never made is not found',
    when: 'the partner asks for <call> naming one that was never made',
    outcome: 'it is refused as not found',
    calls: () => leftTo('not-found', 'TXN-UNKNOWN-404'),
  },
  {
    tags: '@negative @req:TXN-STATUS-REFERENCE-400',
    title: '<call> naming a reference that is not a UUID is refused as invalid',
    when: 'the partner asks for <call> naming a reference that is not a UUID',
    outcome: 'it is refused as invalid',
    calls: () => leftTo('malformed-reference', 'TXN-STATUS-REFERENCE-400'),
  },
  {
    // A refusal that a hand-written scenario already tries (reads, balances, holders) is not repeated.
    tags: '@negative @req:ENV-NOT-ALLOWED-500',
    title: '<call> in a target environment the partner may not use is refused',
    when: 'the partner asks for it in a target environment it may not use',
    outcome: 'it is refused for the target environment',
    calls: () => leftTo('foreign-environment', 'ENV-NOT-ALLOWED-500'),
  },
];

function ruleOutline(rule: OperationRule): string[] {
  return [
    `  ${rule.tags}`,
    `  Scenario Outline: ${rule.title}`,
    '    Given a partner subscribed to <product>',
    '    And the partner has what <call> needs',
    `    When ${rule.when}`,
    `    Then ${rule.outcome}`,
    ...callExamples(rule.calls()),
    '',
  ];
}

export function everyOperationFeature(): string {
  return [
    '# Generated by npm run generate:features from harness/checks/every-operation.ts (the catalogue).',
    '# Do not edit by hand: change the rules there, and generate again.',
    '@every-operation',
    'Feature: Rules of every operation',
    '  A rule of every operation holds for each of them: each operation the spec lists, under each product it lists',
    '  it for, is set up so that it is otherwise valid and then asked for with the one thing the rule is about wrong.',
    '',
    ...OPERATION_RULES.flatMap(ruleOutline),
  ].join('\n');
}

export const RULE_COVERAGE_DOC = fileURLToPath(new URL('../docs/rule-coverage.md', import.meta.url));

/** docs/rule-coverage.md: the rule × operation matrix of the features as they are (written after them, so it sees them). */
function ruleCoverageDoc(): string {
  return ruleMatrixMarkdown(ruleMatrix(loadRequirements(), readScenarios()));
}

const GENERATED = [
  { path: INPUTS_FEATURE, text: inputsFeature, from: 'the input classes' },
  { path: EVERY_OPERATION_FEATURE, text: everyOperationFeature, from: 'the rules of every operation' },
  { path: RULE_COVERAGE_DOC, text: ruleCoverageDoc, from: 'the rule classes, the requirements and the features' },
];

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of GENERATED) {
    const text = file.text();
    const name = relative(fileURLToPath(new URL('..', import.meta.url)), file.path);
    if (process.argv.includes('--check')) {
      if (readFileSync(file.path, 'utf8') !== text) {
        console.error(`${name} is not what ${file.from} give: run npm run generate:features`);
        process.exitCode = 1;
      }
    } else {
      writeFileSync(file.path, text);
      console.log(`Wrote ${name}`);
    }
  }
}
