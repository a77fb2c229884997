import { OPERATIONS, type OperationDefinition, type OperationId } from '../../core/catalogue/operations.ts';
import {
  BEARER_NAMED,
  documentsForeignEnvironmentRefusal,
  documentsNotFound,
  takesBasicCredential,
  takesBody,
  takesJsonBody,
} from '../../harness/checks/every-operation.ts';
import { scenariosByRequirement, type TaggedScenario } from './coverage.ts';
import type { Requirement } from './requirements.ts';

/**
 * Rule × operation: each rule that holds of a class of operations, and each operation of the spec, with the scenarios
 * that check the rule on it, or why none can. Which operations a rule applies to is read from the catalogue (what each
 * operation takes, stores, documents and calls back), not from the scenarios, so an operation the scenarios forgot is
 * an unexplained cell, and `npm test` fails on it (test/conformance/rule-matrix.test.ts).
 */

export interface RuleClass {
  id: string;
  /** The rule in one line. */
  rule: string;
  /** Where the spec says it. */
  clause: string;
  /** Whether the rule applies to the operation, read from the catalogue: true, or why it does not. */
  applies: (operation: OperationDefinition, id: OperationId) => true | string;
  /** The requirements whose scenarios check the rule, each on the operations it lists. */
  requirements: readonly string[];
  /** The operation a requirement names when it checks the rule on this one (a creation's record, on its status query). */
  namedOn?: (operation: OperationDefinition, id: OperationId) => string;
  /** Cells no client can provoke, and why. */
  notProvokable?: Readonly<Partial<Record<OperationId, string>>>;
}

const documents = (operation: OperationDefinition, code: string, sources: readonly string[] = ['spec', 'live']) =>
  Object.values(operation.responses).some((r) => sources.includes(r.codeSource ?? r.source) && (r.codes ?? []).includes(code));
const hasBodyField = (operation: OperationDefinition, field: string) =>
  operation.request !== 'none' && /amount/.test(field) && ['request-to-pay', 'refund', 'deposit'].includes(operation.request.schema);

/**
 * The operation that reads back a record a partner creates under a reference id of its own (a POST that requires
 * X-Reference-Id and takes a body): its status query, or the GET at the creation's path and the id (the API user's,
 * §4.5 #16); undefined for any other operation.
 */
export function readOfCreation(operation: OperationDefinition): OperationId | undefined {
  if (operation.method !== 'POST' || operation.request === 'none' || !operation.headers.required.includes('x-reference-id'))
    return undefined;
  return (
    (operation.statusQuery as OperationId | undefined) ??
    (Object.keys(OPERATIONS) as OperationId[]).find(
      (r) => OPERATIONS[r].method === 'GET' && OPERATIONS[r].path === `${operation.path}/{referenceId}`,
    )
  );
}

export const RULE_CLASSES: readonly RuleClass[] = [
  {
    id: 'subscription-key',
    rule: 'not served without the subscription key',
    clause: '§5 rule 1',
    applies: () => true,
    requirements: ['AUTH-SUBSCRIPTION-KEY'],
  },
  {
    id: 'forged-token',
    rule: 'an access token whose signature was altered is refused with 401',
    clause: '§5 rule 3, §7',
    applies: (o) =>
      ((o.credential === 'bearer' || o.credential === 'consent') && o.responses[401]?.source === 'spec') || 'takes no access token',
    requirements: ['AUTH-BEARER-FORGED-401'],
  },
  {
    id: 'expired-token',
    rule: 'an access token whose expires_in has passed is refused with 401',
    clause: '§2.6, §5 rule 3, §7',
    applies: (o) =>
      ((o.credential === 'bearer' || o.credential === 'consent') && o.responses[401]?.source === 'spec') || 'takes no access token',
    requirements: ['AUTH-TOKEN-EXPIRY'],
  },
  {
    id: 'bearer-named',
    rule: "where the listing names a Bearer token, the API user's Basic credential in its place is refused with 401",
    clause: '§4.2 #6–7, §5 rule 4',
    applies: (_o, id) => BEARER_NAMED[id] !== undefined || 'its listing names no scheme, or Basic or Bearer',
    requirements: ['AUTH-BEARER-NAMED'],
  },
  {
    id: 'basic-credential-only',
    rule: "a token is created only from the API user's Basic credential: an access token in its place is refused",
    clause: '§5 rule 2, §7',
    applies: (_o, id) => takesBasicCredential(id) || 'creates no token',
    requirements: ['AUTH-TOKEN-BASIC-ONLY', 'TOKEN-FAILED-401'],
  },
  {
    id: 'reference-id-uuid4',
    rule: 'a reference id that is not a UUID v4 is refused as invalid',
    clause: '§2.5, §4.1',
    applies: (o) => o.headers.required.includes('x-reference-id') || 'takes no X-Reference-Id',
    requirements: ['TXN-REFERENCE-UUID4', 'PROV-APIUSER-INVALID-400'],
  },
  {
    id: 'duplicate',
    rule: 'a reused reference id is refused with 409, and what it named is unchanged',
    clause: '§7: 409 duplicated reference ID',
    applies: (o) => documents(o, 'RESOURCE_ALREADY_EXIST', ['spec']) || 'documents no duplicate',
    requirements: ['COL-RTP-DUPLICATE-409', 'DIS-REFUND-DUPLICATE-409', 'DIS-DEPOSIT-DUPLICATE-409', 'PROV-APIUSER-DUPLICATE-409'],
  },
  {
    id: 'refusal-changes-nothing',
    rule: 'an invalid creation is refused and leaves nothing behind',
    clause: '§7: 400 invalid data',
    applies: (o) => o.store !== undefined || o.headers.required.includes('x-reference-id') || 'creates nothing',
    requirements: ['COL-RTP-INVALID-400', 'DIS-REFUND-INVALID-400', 'DIS-DEPOSIT-INVALID-400', 'PROV-APIUSER-INVALID-400'],
  },
  {
    id: 'amount',
    rule: 'an amount is a string of a positive decimal',
    clause: '§2.2, §2.3',
    applies: (o) => hasBodyField(o, 'amount') || 'sends no amount',
    requirements: ['TXN-AMOUNT-STRING', 'AMOUNT-POSITIVE-DECIMAL'],
  },
  {
    id: 'record-echoes',
    rule: 'the status record reads back what the creation sent',
    clause: '§2.7, §4.6',
    applies: (o) => o.statusQuery !== undefined || 'makes no record a status query reads',
    namedOn: (o, id) => o.statusQuery ?? id,
    requirements: ['COL-RTP-STATUS-QUERY', 'DIS-REFUND-STATUS-QUERY', 'DIS-DEPOSIT-STATUS-QUERY'],
  },
  {
    id: 'read-names-record',
    rule: "a read gives the record its reference names, also after the partner's next one of its kind",
    clause: '§2.5, §4.5 #16, §4.6',
    applies: (o) => readOfCreation(o) !== undefined || 'creates no record read back by its reference id',
    namedOn: (o, id) => readOfCreation(o) ?? id,
    requirements: ['COL-RTP-STATUS-QUERY', 'DIS-REFUND-STATUS-QUERY', 'DIS-DEPOSIT-STATUS-QUERY', 'PROV-APIUSER-READ-200'],
  },
  {
    id: 'money-moves-once',
    rule: 'money moves once, by the amount, or not at all',
    clause: '§2.2, §4.3 #9–10, §2.9',
    applies: (o) => o.store !== undefined || 'moves no money',
    requirements: ['TXN-MONEY-ONCE'],
  },
  {
    id: 'callback',
    rule: 'a callback address given is called back with the outcome the status record has',
    clause: '§6',
    applies: (o) => o.headers.optional.includes('x-callback-url') || 'takes no X-Callback-Url',
    requirements: ['EVT-CALLBACK-RTP', 'EVT-CALLBACK-REFUND', 'EVT-CALLBACK-DEPOSIT', 'EVT-CALLBACK-BCAUTH'],
  },
  {
    id: 'body-not-json',
    rule: 'a body that is not JSON, where the listing takes JSON, is refused with 400',
    clause: 'each listing: a JSON body; 400 invalid data',
    applies: (_o, id) => takesJsonBody(id) || 'takes no JSON body, or documents no 400',
    requirements: ['BODY-NOT-JSON-400'],
  },
  {
    id: 'content-type-optional',
    rule: 'a body sent without Content-Type is served as one that names its media type',
    clause: 'each listing: Content-Type (optional)',
    applies: (_o, id) => takesBody(id) || 'takes no body',
    requirements: ['CONTENT-TYPE-OPTIONAL'],
    notProvokable: {
      createOAuthToken:
        "the body a scenario can send on its own is the refresh grant, our reading of §2.7 (RFC 6749 §6): whether a target serves it is not the spec's, so its being served without Content-Type proves nothing",
    },
  },
  {
    id: 'media-type-any-case',
    rule: 'a body whose media type is named in capitals is served as one named in lower case',
    clause: 'each listing: Content-Type; RFC 9110 §8.3.1',
    applies: (_o, id) => takesBody(id) || 'takes no body',
    requirements: ['MEDIA-TYPE-ANY-CASE'],
    notProvokable: {
      createOAuthToken:
        "the body a scenario can send on its own is the refresh grant, our reading of §2.7 (RFC 6749 §6): whether a target serves it is not the spec's, so its being served proves nothing",
    },
  },
  {
    id: 'not-found',
    rule: 'a call naming an id nothing was made under is refused with 404 RESOURCE_NOT_FOUND',
    clause: 'each operation’s listing; the live service for the status queries',
    applies: (_o, id) => documentsNotFound(id) || 'names nothing by an id in its path, or documents no 404',
    requirements: ['TXN-UNKNOWN-404', 'PROV-APIKEY-NOT-FOUND-404', 'PROV-APIUSER-READ-404', 'COL-DN-UNKNOWN-404'],
  },
  {
    id: 'malformed-reference',
    rule: 'a call naming, in its path, an id that is not a UUID is refused with 400',
    clause: '§4.5 #15–16 for API users; the live service for the status queries',
    applies: (o, id) =>
      id === 'deliveryNotification'
        ? 'a notification naming no transaction may be refused as not found (§4.2 #3 lists 404) as well as invalid'
        : o.params?.referenceId !== undefined || 'names nothing by an id in its path',
    requirements: ['TXN-STATUS-REFERENCE-400', 'PROV-APIUSER-READ-400', 'PROV-APIKEY-INVALID-400'],
  },
  {
    id: 'foreign-environment',
    rule: 'a target environment the caller may not use is refused with 500 NOT_ALLOWED_TARGET_ENVIRONMENT',
    clause: '§7 and each operation’s listing',
    applies: (_o, id) => documentsForeignEnvironmentRefusal(id) || 'the spec documents no such refusal for it',
    requirements: [
      'ENV-NOT-ALLOWED-500',
      'COL-RTP-STATUS-TARGET-ENV-500',
      'DIS-REFUND-STATUS-TARGET-ENV-500',
      'DIS-DEPOSIT-STATUS-TARGET-ENV-500',
      'COL-BALANCE-TARGET-ENV-500',
      'REM-BALANCE-TARGET-ENV-500',
      'COL-HOLDER-TARGET-ENV-500',
      'DIS-HOLDER-TARGET-ENV-500',
    ],
  },
];

/**
 * The operations a rule class applies to that none of its requirements names but `generated`: where a generated scenario
 * must check it (features/every-operation.feature), and hand-written ones do not already.
 */
export function operationsLeftTo(classId: string, generated: string, requirements: readonly Requirement[]): OperationId[] {
  const rule = RULE_CLASSES.find((r) => r.id === classId);
  if (!rule) throw new Error(`No rule class ${classId} in conformance/certification/rule-matrix.ts`);
  return specOperationIds().filter((id) => {
    if (rule.applies(OPERATIONS[id], id) !== true || rule.notProvokable?.[id] !== undefined) return false;
    const namedOn = rule.namedOn?.(OPERATIONS[id], id) ?? id;
    return !requirements.some((r) => r.id !== generated && rule.requirements.includes(r.id) && r.operations.includes(namedOn));
  });
}

export type Cell =
  | { kind: 'checked'; requirements: string[]; scenarios: string[] }
  | { kind: 'not applicable' | 'not provokable'; why: string }
  | { kind: 'unexplained'; why: string };

export interface RuleMatrix {
  operations: OperationId[];
  rows: { rule: RuleClass; cells: Record<string, Cell> }[];
  counts: Record<Cell['kind'], number>;
}

/** The operations the spec lists (its 19, the account-holder check counted once). */
export function specOperationIds(): OperationId[] {
  return (Object.keys(OPERATIONS) as OperationId[]).filter((id) => OPERATIONS[id].spec !== undefined);
}

function cellOf(rule: RuleClass, id: OperationId, requirements: readonly Requirement[], byId: Map<string, TaggedScenario[]>): Cell {
  const applies = rule.applies(OPERATIONS[id], id);
  if (applies !== true) return { kind: 'not applicable', why: applies };
  const namedOn = rule.namedOn?.(OPERATIONS[id], id) ?? id;
  const naming = requirements.filter((r) => rule.requirements.includes(r.id) && r.operations.includes(namedOn));
  const scenarios = naming.flatMap((r) => byId.get(r.id) ?? []);
  if (scenarios.length > 0)
    return { kind: 'checked', requirements: naming.map((r) => r.id), scenarios: [...new Set(scenarios.map((s) => s.location))] };
  const why = rule.notProvokable?.[id];
  if (why) return { kind: 'not provokable', why };
  return {
    kind: 'unexplained',
    why: `no scenario checks it: none of ${rule.requirements.join(', ')} names ${id} with a scenario, and no reason is given why none can`,
  };
}

/** The matrix of the rule classes over the spec's operations, from the requirements and the scenarios that name them. */
export function ruleMatrix(requirements: readonly Requirement[], scenarios: readonly TaggedScenario[]): RuleMatrix {
  const byId = scenariosByRequirement(scenarios);
  const operations = specOperationIds();
  const counts = { checked: 0, 'not applicable': 0, 'not provokable': 0, unexplained: 0 };
  const rows = RULE_CLASSES.map((rule) => {
    const cells = Object.fromEntries(operations.map((id) => [id, cellOf(rule, id, requirements, byId)]));
    for (const cell of Object.values(cells)) counts[cell.kind] += 1;
    return { rule, cells };
  });
  return { operations, rows, counts };
}

/** The order in which a cell's requirements decide its verdict in a run: the first one any of them has. */
const CELL_VERDICT_ORDER = ['FAIL', 'FLAKY', 'WARN', 'WAIVED', 'NOT TESTED', 'PASS', 'NOT APPLICABLE', 'UNPROVOKABLE'] as const;

/** A run's view of the matrix: each checked cell with the verdict its requirements got, the worst first. */
export interface RunRuleCoverage {
  operations: string[];
  counts: RuleMatrix['counts'];
  rules: {
    id: string;
    rule: string;
    clause: string;
    cells: Record<string, { kind: Cell['kind']; verdict?: string; requirements?: string[]; why?: string }>;
  }[];
}

/** The matrix of the features the run had, each checked cell with the verdict of the run's requirements there. */
export function runRuleCoverage(matrix: RuleMatrix, verdicts: ReadonlyMap<string, string>): RunRuleCoverage {
  const verdictOf = (ids: readonly string[]) => CELL_VERDICT_ORDER.find((v) => ids.some((id) => verdicts.get(id) === v)) ?? 'NOT TESTED';
  return {
    operations: matrix.operations,
    counts: matrix.counts,
    rules: matrix.rows.map(({ rule, cells }) => ({
      id: rule.id,
      rule: rule.rule,
      clause: rule.clause,
      cells: Object.fromEntries(
        Object.entries(cells).map(([id, cell]) => [
          id,
          cell.kind === 'checked'
            ? { kind: cell.kind, verdict: verdictOf(cell.requirements), requirements: cell.requirements }
            : { kind: cell.kind, why: cell.why },
        ]),
      ),
    })),
  };
}

/** The matrix as a Markdown page: a table of rules by operations, then each cell that is not checked, with why. */
export function ruleMatrixMarkdown(matrix: RuleMatrix): string {
  const mark = (cell: Cell) => ({ checked: '✓', 'not applicable': '·', 'not provokable': 'n/p', unexplained: '**?**' })[cell.kind];
  const { counts } = matrix;
  return [
    '# Rules × operations',
    '',
    'Generated by `npm run generate:features` from `conformance/certification/rule-matrix.ts`, the catalogue and the',
    'requirements; do not edit by hand. Each rule that holds of a class of operations, against each operation the spec',
    'lists: ✓ a scenario checks it there (the requirements below name which), · it does not apply (the catalogue says',
    'why), n/p no client can provoke it. `npm test` fails on any other cell.',
    '',
    `${counts.checked} cells checked, ${counts['not applicable']} not applicable, ${counts['not provokable']} not provokable, ${counts.unexplained} unexplained.`,
    '',
    `| rule | ${matrix.operations.join(' | ')} |`,
    `|---|${matrix.operations.map(() => ':-:').join('|')}|`,
    ...matrix.rows.map(
      ({ rule, cells }) => `| ${rule.rule} (${rule.clause}) | ${matrix.operations.map((id) => mark(cells[id]!)).join(' | ')} |`,
    ),
    '',
    '## Where each rule is checked',
    '',
    ...matrix.rows.flatMap(({ rule, cells }) => [
      `- **${rule.rule}** (\`${rule.id}\`): ${
        Object.entries(cells)
          .filter(([, c]) => c.kind === 'checked')
          .map(([id, c]) => `${id} by ${(c as { requirements: string[] }).requirements.join(', ')}`)
          .join('; ') || 'nowhere'
      }.${Object.entries(cells)
        .filter(([, c]) => c.kind === 'not provokable' || c.kind === 'unexplained')
        .map(([id, c]) => ` ${id}: ${c.kind}, ${(c as { why: string }).why}.`)
        .join('')}`,
    ]),
    '',
  ].join('\n');
}
