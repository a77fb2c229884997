import { randomInt, randomUUID } from 'node:crypto';
import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import { observed, reading, spec, type Source } from '../../core/sources.ts';
import type { ProfileName } from '../../core/profiles.ts';
import { schemaDocuments } from '../../core/validation/schemas.ts';
import { TEST_NUMBERS } from '../../core/test-numbers.ts';

/**
 * The input classes of the spec's creations (request to pay §4.2 #2, refund §4.3 #9, deposit §4.3 #10), derived from
 * the catalogue and the request schemas: a rule about an input holds wherever that input is sent, so each class
 * applies to every creation whose request has the input (its party, its amount, its texts, its UUID fields, its
 * required headers), not to the one a scenario's author thought of. features/inputs.feature is generated from this
 * (npm run generate:features); the steps look each case up here by its creation and its words.
 */

/** What a creation's request has, read from its catalogue entry and its request schema. */
export interface CreationInputs {
  id: OperationId;
  /** The creation in the features' words: "request to pay", "deposit", "refund". */
  label: string;
  product: Product;
  /** Its listing in §4: "§4.2 #2". */
  listing: string;
  /** The section of its body: "§2.2". */
  bodyClause: string;
  /** The party it names, if any: the payer of a request to pay, the payee of a deposit. */
  party?: 'payer' | 'payee';
  /** The UUID fields of its body besides the party (referenceIdToRefund). */
  uuidFields: string[];
  /** Its free texts (payerMessage, payeeNote). */
  texts: string[];
  /** The fields its body gives as strings besides the amount, the currency and the UUIDs: externalId and the texts. */
  stringFields: string[];
  /** The body fields the strict reading requiredFields asks for, besides amount and currency (whose absence has its own answer). */
  strictlyRequired: string[];
  /** The headers §4 lists as required, besides the credentials. */
  requiredHeaders: string[];
}

/** How one input is sent wrong, or written in one of the forms the spec allows. */
export interface InputCase {
  creation: OperationId;
  /** The features' words after "with" or "without": "a payee e-mail address that is not an e-mail address". */
  phrase: string;
  /**
   * invalid: refused with 400; missing-header: not served (400 by our reading); valid: accepted (202); kept: a form
   * the spec neither allows nor forbids, refused with 400 or accepted and read back as sent.
   */
  kind: 'invalid' | 'missing-header' | 'valid' | 'kept';
  /** The rule that decides the expected answer, with its source: what a departure cites and weighs. */
  rule: Source;
  /** The rule in a profile where it weighs otherwise than `rule` (inputRuleIn): the live service's way not observed. */
  ruleIn?: Readonly<Partial<Record<ProfileName, Source>>>;
  /** Only under --strict: the rule is a strict reading. */
  strict: boolean;
  /** The requirements of requirements/momo-api.requirements.json the case verifies, besides the creation's own. */
  requirements: string[];
  /**
   * The changes to the creation's body, fresh for each call (an e-mail address or a party code is new each time), from
   * the currency the run pays in.
   */
  body?: (currency: string) => Record<string, unknown>;
  /** The X-Reference-Id to send instead of a new UUID v4 (a fresh one each call when a function). */
  referenceId?: string | (() => string);
  /** The required header to leave out. */
  omit?: 'x-reference-id' | 'x-target-environment';
  /** An X-Callback-Url on the receiver's host, in the scheme named. */
  callbackScheme?: 'https';
}

interface SchemaDocument {
  $id?: string;
  description?: string;
  properties?: Record<string, { $ref?: string }>;
  strictReading?: { schema?: { required?: string[] } };
}

const schemaNamed = (name: string): SchemaDocument => {
  const found = (schemaDocuments as readonly unknown[] as readonly SchemaDocument[]).find((s) => s.$id?.endsWith(`/${name}.schema.json`));
  if (!found) throw new Error(`No request schema named ${name} in schemas/`);
  return found;
};

/** The properties of a schema that refer to another: "party.schema.json" gives payer or payee. */
const fieldsReferring = (schema: SchemaDocument, ref: string): string[] =>
  Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.$ref === ref)
    .map(([name]) => name);

/** The spec's creations, in catalogue order: the operations that store a transaction and that §4 lists. */
export function specCreations(): CreationInputs[] {
  return (Object.keys(OPERATIONS) as OperationId[]).flatMap((id) => {
    const operation = OPERATIONS[id];
    if (!operation.store || !operation.spec?.length || operation.request === 'none') return [];
    const schema = schemaNamed(operation.request.schema);
    const [party] = fieldsReferring(schema, 'party.schema.json') as ('payer' | 'payee')[];
    const bodyClause = /\((§\d+\.\d+)\)/.exec(schema.description ?? '')?.[1];
    if (!bodyClause) throw new Error(`The schema ${operation.request.schema} does not name its section of the spec as (§n.n)`);
    const [specOperation] = operation.spec;
    return [
      {
        id,
        label: operation.label,
        product: specOperation!.products[0]!,
        listing: `§${specOperation!.key}`,
        bodyClause,
        ...(party ? { party } : {}),
        uuidFields: fieldsReferring(schema, 'uuid-v4.schema.json'),
        texts: fieldsReferring(schema, 'message-text.schema.json'),
        stringFields: [...fieldsReferring(schema, 'external-id.schema.json'), ...fieldsReferring(schema, 'message-text.schema.json')],
        strictlyRequired: (schema.strictReading?.schema?.required ?? []).filter((f) => f !== 'amount' && f !== 'currency'),
        requiredHeaders: operation.headers.required.filter((h) => h === 'x-reference-id' || h === 'x-target-environment'),
      },
    ];
  });
}

/** A field in the features' words: "payer message", "reference to refund". */
const FIELD_WORDS: Record<string, string> = {
  payer: 'payer',
  payee: 'payee',
  externalId: 'external id',
  payerMessage: 'payer message',
  payeeNote: 'payee note',
  referenceIdToRefund: 'reference to refund',
};
const wordsOf = (field: string) => FIELD_WORDS[field] ?? field;

/** A header in the features' words. */
const HEADER_WORDS: Record<string, string> = { 'x-reference-id': 'a reference id', 'x-target-environment': 'a target environment' };

const AMOUNT_VALUE = reading('the strict reading amountValue (core/profiles.ts): §2.2 declares amount a string, and §8 sets no bounds');
const REQUIRED_FIELDS = reading('the strict reading requiredFields (core/profiles.ts): §2.2 does not say which fields are required');
const TEXT_BOUND = observed(
  'real-api-notes, errors and inputs: payerMessage, payeeNote and notificationMessage over 160 characters give 400; §8 sets no string-length bounds',
);

/** §2.2–§2.4 give the currency as an ISO 4217 code, and say nothing of case: a server may take "eur" for EUR. */
const CURRENCY_CASE = reading(
  '§2.2–§2.4: currency is an ISO 4217 currency code; our reading is that the code written in lower case ("eur") is none (ISO 4217 writes its codes in capitals; the spec says nothing of case)',
);

/**
 * §2.1 lists partyIdType as MSISDN, EMAIL or PARTY_CODE, and says nothing of case; the account-holder path writes the
 * kinds in lower case (§4.2 #8), so a server may match them so in the body too.
 */
const PARTY_KIND_CASE = reading(
  '§2.1 lists partyIdType as MSISDN, EMAIL or PARTY_CODE; our reading is that "msisdn" is none of them (the spec says nothing of case, and §4.2 #8 writes the kinds in lower case in a path)',
);

const EMAIL_SUB_ADDRESS = reading(
  '§2.1 says an EMAIL partyId has a valid e-mail format; RFC 5322 §3.2.3 allows "+" in the local part, so that an address with a sub-address is taken is our reading',
);

/**
 * RFC 9562 §4 writes a UUID 8-4-4-4-12 with hyphens; §2.5 and §4.1 ask for a UUID v4 and say no more of its form, and
 * common parsers take one without hyphens or in braces: that these are refused is our reading.
 */
const REFERENCE_FORM = reading(
  "§2.5, §4.1: X-Reference-Id is a UUID v4; that it is written in RFC 9562 §4's string form (hyphens, no braces) is our reading",
);

/** The forms of a party §2.1 allows, and a partyId of each kind that its format refuses. */
const PARTY_FORMS = [
  {
    kind: 'MSISDN',
    // E.164 numbers have at most 15 digits; the test numbers have 11, so the longest a number may be is sent too.
    valid: {
      words: 'whose number has all 15 digits E.164 allows',
      partyId: () => `46${Array.from({ length: 13 }, () => randomInt(10)).join('')}`,
    },
    invalid: { words: 'number that is not a phone number', partyId: 'call me', rule: 'an MSISDN partyId is an E.164 number' },
  },
  {
    kind: 'EMAIL',
    // In mixed case, as customers write theirs: the live sandbox gives every partyId back exactly as sent (observed,
    // mtn-sandbox); the spec profile takes the address back in any case (partyIdForm).
    valid: { words: 'identified by an e-mail address', partyId: () => `Customer.${randomUUID().slice(0, 8)}@Example.com` },
    invalid: {
      words: 'e-mail address that is not an e-mail address',
      partyId: 'not-an-address',
      rule: 'an EMAIL partyId is a valid e-mail address',
    },
  },
  {
    kind: 'PARTY_CODE',
    valid: { words: 'identified by a party code', partyId: () => randomUUID() },
    invalid: { words: 'party code that is not a UUID', partyId: '12345', rule: 'a PARTY_CODE partyId is the UUID of the party' },
  },
] as const;

/** Makes the cases of one creation: each with its kind, words, rule (strict when a reading) and what it changes. */
/** The rule an input case is judged by in a profile. */
export const inputRuleIn = (input: InputCase, profile: ProfileName): Source => input.ruleIn?.[profile] ?? input.rule;

type CaseMaker = (kind: InputCase['kind'], phrase: string, rule: Source, more?: Partial<InputCase>) => InputCase;
const caseMakerOf =
  (c: CreationInputs): CaseMaker =>
  (kind, phrase, rule, more = {}) => ({ creation: c.id, phrase, kind, rule, strict: rule.kind === 'reading', requirements: [], ...more });
const invalidDataOf = (c: CreationInputs) => `${c.listing}: 400 invalid data`;

/** Every input case of one creation: the invalid inputs, the required headers left out, and the valid forms. */
export function inputCasesOf(c: CreationInputs): InputCase[] {
  return [
    ...amountAndReferenceCases(c),
    ...partyCases(c),
    ...fieldCases(c),
    ...missingHeaderCases(c),
    ...callbackCases(c),
    ...strictReadingCases(c),
  ];
}

/** An amount as a JSON number; a reference id that is not a UUID, or a UUID of another version than 4. */
function amountAndReferenceCases(c: CreationInputs): InputCase[] {
  const make = caseMakerOf(c);
  const referenceRule = spec(`§2.5, §4.1: X-Reference-Id is a UUID v4; ${invalidDataOf(c)}`);
  return [
    make('invalid', 'an amount given as a number, not a string', spec(`${c.bodyClause}: amount is a string; ${invalidDataOf(c)}`), {
      body: () => ({ amount: 10 }),
      requirements: ['TXN-AMOUNT-STRING'],
    }),
    // §2.2–§2.4 give the amount as a string and no scale: a target may refuse three decimals as invalid data, but one
    // that takes them records the amount asked, not another (one cut to cents charges less than was agreed).
    make(
      'kept',
      'an amount with three decimals',
      spec(`${c.bodyClause}: amount is a string, with no scale given; ${invalidDataOf(c)}; its record reads back the amount asked`),
      { body: () => ({ amount: '1.005' }), requirements: [ownStatusQuery(c)] },
    ),
    // RFC 9562 §4: a UUID's hex digits are case-insensitive on input, so one in capitals is a UUID v4 as well: it is
    // taken, and the transaction is found under the reference id it was given (§2.5: it is later used in status queries).
    make(
      'valid',
      'a reference id in upper case',
      spec('§2.5, §4.1: X-Reference-Id is a UUID v4, later used in status queries; RFC 9562 §4: a UUID is case-insensitive on input'),
      { referenceId: () => randomUUID().toUpperCase(), requirements: [ownStatusQuery(c)] },
    ),
    make('invalid', 'a reference id that is not a UUID', referenceRule, { referenceId: 'order-42', requirements: ['TXN-REFERENCE-UUID4'] }),
    // A UUID's own digits in another dress than RFC 9562 §4's string form (8-4-4-4-12, hyphens and all), which a lenient
    // parser takes.
    // Run by default, as warnings: a target that takes them is worth telling of.
    make('invalid', 'a reference id without its hyphens', REFERENCE_FORM, {
      referenceId: () => randomUUID().replaceAll('-', ''),
      strict: false,
    }),
    make('invalid', 'a reference id in braces', REFERENCE_FORM, {
      referenceId: () => `{${randomUUID()}}`,
      strict: false,
    }),
    // A UUID of version 1 (RFC 9562 §5.1): a UUID, but not the version §2.5 and §4.1 ask for.
    make('invalid', 'a reference id that is a UUID of another version', referenceRule, {
      referenceId: () => `${randomUUID().slice(0, 14)}1${randomUUID().slice(15)}`,
      requirements: ['TXN-REFERENCE-UUID4'],
    }),
  ];
}

/** The party a creation names: each kind with an id its format refuses, a kind §2.1 does not know, each valid form. */
function partyCases(c: CreationInputs): InputCase[] {
  const party = c.party;
  if (!party) return [];
  const make = caseMakerOf(c);
  const { invalid, nearlyValid, unknownKind, kindInLowerCase } = malformedParties(c, party, make);
  const { valid, subAddress } = validParties(c, party, make);
  return [
    ...invalid,
    ...nearlyValid,
    ...incompleteParties(c, party, make),
    ...misnamedParty(c, party, make),
    internationalForm(c, party, make),
    unknownKind,
    kindInLowerCase,
    ...valid,
    subAddress,
  ];
}

/**
 * A number written with its international "+" (ITU-T E.123), as customers' often are: whether §2.1's "E.164" takes the
 * "+" is not said, so it may be refused as invalid; taken, the record reads the party back as sent (the live sandbox
 * gives every partyId back exactly so, observed; the spec profile takes it back with or without its "+").
 */
function internationalForm(c: CreationInputs, party: string, make: CaseMaker): InputCase {
  return make(
    'kept',
    `a ${party} number in international form, with its plus sign`,
    spec(
      `§2.1: an MSISDN partyId is an E.164 number, with or without its "+" as the spec does not say; ${invalidDataOf(c)}; its record reads back the party sent`,
    ),
    {
      body: () => ({ [party]: { partyIdType: 'MSISDN', partyId: `+${TEST_NUMBERS.ordinary.msisdn}` } }),
      requirements: ['PARTY-ID-FORMAT'],
    },
  );
}

/**
 * The party under the other creation's name (a deposit's payee sent as payer, as a body copied from a request to pay),
 * its own name left out: the creation names no party of its kind, so under the strict reading requiredFields it is
 * refused as one without it. A target that takes the other name for its own pays someone the request did not name.
 */
function misnamedParty(c: CreationInputs, party: string, make: CaseMaker): InputCase[] {
  if (!c.strictlyRequired.includes(party)) return [];
  const other = party === 'payer' ? 'payee' : 'payer';
  return [
    make('invalid', `its ${party} named ${other}`, REQUIRED_FIELDS, {
      body: () => ({ [party]: undefined, [other]: { partyIdType: 'MSISDN', partyId: TEST_NUMBERS.ordinary.msisdn } }),
      requirements: ['BODY-REQUIRED-FIELDS'],
    }),
  ];
}

/** Each kind with an id its format refuses, and one just past its bound; a kind §2.1 does not know, or in lower case. */
function malformedParties(c: CreationInputs, party: string, make: CaseMaker) {
  const invalid = PARTY_FORMS.map((form) =>
    make(
      'invalid',
      `a ${party} ${form.invalid.words}`,
      spec(`§2.1: ${form.invalid.rule}, validated according to partyIdType; ${invalidDataOf(c)}`),
      {
        body: () => ({ [party]: { partyIdType: form.kind, partyId: form.invalid.partyId } }),
        requirements: ['PARTY-ID-FORMAT'],
      },
    ),
  );
  // The other side of each format's bound: one digit more than E.164 allows; an address without its domain.
  const nearlyValid = [
    make(
      'invalid',
      `a ${party} number with more digits than E.164 allows`,
      spec(`§2.1: an MSISDN partyId is an E.164 number (at most 15 digits); ${invalidDataOf(c)}`),
      {
        body: () => ({ [party]: { partyIdType: 'MSISDN', partyId: `46${'7'.repeat(14)}` } }),
        requirements: ['PARTY-ID-FORMAT'],
      },
    ),
    // A national number, as customers often write theirs: E.164 begins with the country code, never with 0. Whether
    // the live service takes its own country's national form is not observed: in mtn-sandbox a refusal is our reading.
    make(
      'invalid',
      `a ${party} number in national form, with a leading 0`,
      spec(`§2.1: an MSISDN partyId is an E.164 number, which begins with its country code; ${invalidDataOf(c)}`),
      {
        body: () => ({ [party]: { partyIdType: 'MSISDN', partyId: '0733123456' } }),
        requirements: ['PARTY-ID-FORMAT'],
        ruleIn: {
          'mtn-sandbox': reading(
            `§2.1: an MSISDN partyId is an E.164 number; real-api-notes do not say whether the live service takes a number in its country's national form, so that it refuses one is our reading; ${invalidDataOf(c)}`,
          ),
        },
      },
    ),
    make(
      'invalid',
      `a ${party} e-mail address without a domain`,
      spec(`§2.1: an EMAIL partyId is a valid e-mail address; ${invalidDataOf(c)}`),
      {
        body: () => ({ [party]: { partyIdType: 'EMAIL', partyId: 'customer@' } }),
        requirements: ['PARTY-ID-FORMAT'],
      },
    ),
  ];
  const unknownKind = make(
    'invalid',
    `a kind of ${party} id the service does not know`,
    spec(`§2.1: partyIdType is MSISDN, EMAIL or PARTY_CODE; ${invalidDataOf(c)}`),
    { body: () => ({ [party]: { partyIdType: 'IBAN', partyId: 'SE4550000000058398257466' } }), requirements: ['PARTY-ID-TYPE-ENUM'] },
  );
  // Runs by default, as a warning, not only under --strict: a target that takes "msisdn" is worth telling of.
  const kindInLowerCase = make('invalid', `a kind of ${party} id written in lower case`, PARTY_KIND_CASE, {
    body: () => ({ [party]: { partyIdType: 'msisdn', partyId: TEST_NUMBERS.ordinary.msisdn } }),
    strict: false,
  });
  return { invalid, nearlyValid, unknownKind, kindInLowerCase };
}

/**
 * §2.1 requires both fields of a party, a string each: a validator that looks only at a field it is given, or makes a
 * string of a number, takes a party the table refuses.
 */
function incompleteParties(c: CreationInputs, party: string, make: CaseMaker): InputCase[] {
  const required = spec(`§2.1: partyIdType and partyId are both required, partyId a string; ${invalidDataOf(c)}`);
  return [
    make('invalid', `a ${party} without an id`, required, { body: () => ({ [party]: { partyIdType: 'MSISDN' } }) }),
    make('invalid', `a ${party} without a kind of id`, required, { body: () => ({ [party]: { partyId: TEST_NUMBERS.ordinary.msisdn } }) }),
    make('invalid', `a ${party} with neither id nor kind`, required, { body: () => ({ [party]: {} }) }),
    make('invalid', `a ${party} id given as a number, not a string`, required, {
      body: () => ({ [party]: { partyIdType: 'MSISDN', partyId: Number(TEST_NUMBERS.ordinary.msisdn) } }),
    }),
  ];
}

/** Each party kind with an id of its format; and, by our reading, an e-mail address with a sub-address. */
function validParties(c: CreationInputs, party: string, make: CaseMaker) {
  const valid = PARTY_FORMS.map((form) =>
    make(
      'valid',
      `a ${party} ${form.valid.words}`,
      spec(`§2.1: partyIdType ${form.kind} with a partyId of its format is a party; ${c.listing}: 202 accepted`),
      {
        body: () => ({ [party]: { partyIdType: form.kind, partyId: form.valid.partyId() } }),
        requirements: ['PARTY-ID-TYPES-ACCEPTED'],
      },
    ),
  );
  // An address with a sub-address (RFC 5322 allows "+" in the local part), as customers' often have. §2.1 says only
  // "valid e-mail format", and the live service refuses some special characters in texts: taking it is our reading,
  // run by default as a warning.
  const subAddress = make('valid', `a ${party} identified by an e-mail address with a sub-address`, EMAIL_SUB_ADDRESS, {
    body: () => ({ [party]: { partyIdType: 'EMAIL', partyId: `customer.${randomUUID().slice(0, 8)}+shop@example.com` } }),
    strict: false,
  });
  return { valid, subAddress };
}

/** The body's other UUID fields that are not one, and its texts over 160 characters (the live bound, observed). */
function fieldCases(c: CreationInputs): InputCase[] {
  const make = caseMakerOf(c);
  return [
    ...c.uuidFields.map((field) =>
      make('invalid', `a ${wordsOf(field)} that is not a UUID`, spec(`${c.bodyClause}: ${field} is a UUID; ${invalidDataOf(c)}`), {
        body: () => ({ [field]: 'order-42' }),
      }),
    ),
    // A number where the body takes a string, as for the amount: invalid data, not a string to be made of it.
    ...c.stringFields.map((field) =>
      make(
        'invalid',
        `${/^[aeiou]/.test(wordsOf(field)) ? 'an' : 'a'} ${wordsOf(field)} given as a number, not a string`,
        spec(`${c.bodyClause}: ${field} is a string; ${invalidDataOf(c)}`),
        {
          body: () => ({ [field]: 12345 }),
        },
      ),
    ),
    // Runs by default, as a warning, not only under --strict: a target that takes "eur" is worth telling of.
    make('invalid', 'a currency written in lower case', CURRENCY_CASE, {
      body: (currency) => ({ currency: currency.toLowerCase() }),
      strict: false,
    }),
    ...c.texts.map((field) =>
      make('invalid', `a ${wordsOf(field)} longer than 160 characters`, TEXT_BOUND, { body: () => ({ [field]: 'x'.repeat(161) }) }),
    ),
    // The bound's other side: 160 characters are within it; and it counts characters, not the bytes UTF-8 writes them in.
    ...c.texts.map((field) =>
      make('valid', `a ${wordsOf(field)} of exactly 160 characters`, TEXT_BOUND, { body: () => ({ [field]: 'x'.repeat(160) }) }),
    ),
    ...c.texts.map((field) =>
      make('valid', `a ${wordsOf(field)} of 100 accented letters`, TEXT_BOUND, { body: () => ({ [field]: 'é'.repeat(100) }) }),
    ),
  ];
}

/** The requirement of a creation's status query, which holds the record to what was asked: COL-RTP-STATUS-QUERY. */
const STATUS_QUERY_REQUIREMENTS: Partial<Record<OperationId, string>> = {
  requestToPay: 'COL-RTP-STATUS-QUERY',
  refund: 'DIS-REFUND-STATUS-QUERY',
  deposit: 'DIS-DEPOSIT-STATUS-QUERY',
};
export function ownStatusQuery(c: CreationInputs): string {
  const id = STATUS_QUERY_REQUIREMENTS[c.id];
  if (!id) throw new Error(`No status-query requirement for ${c.id} in harness/checks/inputs.ts`);
  return id;
}

/** Each header §4 lists as required, left out. */
function missingHeaderCases(c: CreationInputs): InputCase[] {
  const make = caseMakerOf(c);
  return c.requiredHeaders.map((header) =>
    make(
      'missing-header',
      HEADER_WORDS[header]!,
      spec(`§4.1, ${c.listing}: ${header === 'x-reference-id' ? 'X-Reference-Id' : 'X-Target-Environment'} is required`),
      { omit: header as InputCase['omit'], requirements: ['TXN-REQUIRED-HEADERS'] },
    ),
  );
}

/**
 * A callback address over https, on the host the API user registered. §4.1 types X-Callback-Url only as a URL and §6
 * leaves which callback addresses a service rejects to it: that https is taken is our reading, run by default as a
 * warning (a service that calls back over the internet is likelier to ask for https than to refuse it).
 */
const HTTPS_CALLBACK = reading(
  '§4.1: X-Callback-Url is a URL, of no scheme in particular, and §6 leaves which ones a service rejects to it: that one over https on the registered host is taken is our reading',
);

function callbackCases(c: CreationInputs): InputCase[] {
  if (!OPERATIONS[c.id].headers.optional.includes('x-callback-url')) return [];
  const make = caseMakerOf(c);
  return [make('valid', 'a callback address over https', HTTPS_CALLBACK, { callbackScheme: 'https', strict: false })];
}

/** What only the strict readings refuse: amounts that are not positive decimals, and the fields they require. */
function strictReadingCases(c: CreationInputs): InputCase[] {
  const make = caseMakerOf(c);
  const strictAmounts: [string, unknown][] = [
    ['an amount of zero', '0'],
    ['a negative amount', '-5'],
    ['an amount that is not a number', 'ten'],
    // Forms a programming language's number parser takes and a decimal amount is not.
    ['an amount in exponent notation', '1e3'],
    ['an amount of infinity', 'Infinity'],
  ];
  return [
    ...strictAmounts.map(([phrase, amount]) =>
      make('invalid', phrase, AMOUNT_VALUE, { body: () => ({ amount }), requirements: ['AMOUNT-POSITIVE-DECIMAL'] }),
    ),
    ...c.strictlyRequired.map((field) =>
      make('invalid', `no ${wordsOf(field)}`, REQUIRED_FIELDS, {
        body: () => ({ [field]: undefined }),
        requirements: ['BODY-REQUIRED-FIELDS'],
      }),
    ),
  ];
}

/**
 * A creation under the reference id of an earlier one of the same kind (§2.5, §7 rule 1: 409 RESOURCE_ALREADY_EXIST,
 * the earlier one unchanged), whatever became of the earlier one, and however the id is written: the earlier one
 * ended SUCCESSFUL or FAILED (a creation naming a party decides by its test number; a refund follows the payment it
 * refunds), and the id is sent again as it was or in upper case.
 */
export interface ReuseCase {
  creation: OperationId;
  /** The party of the earlier creation, in the features' words: "a customer who rejects the payment". */
  earlier: string;
  /** The reference id sent again in upper case: the same UUID (RFC 9562 §4: case-insensitive on input). */
  upperCase: boolean;
}

export function reuseCasesOf(c: CreationInputs): ReuseCase[] {
  const who = c.party === 'payee' ? 'a payee' : 'a customer';
  const outcomes = c.party ? ['who approves', 'who rejects the payment'] : ['who approves'];
  return [
    ...outcomes.filter((o) => o !== 'who approves').map((o) => ({ creation: c.id, earlier: `${who} ${o}`, upperCase: false })),
    { creation: c.id, earlier: `${who} who approves`, upperCase: true },
  ];
}

/**
 * A reference id reused in upper case is a duplicate by our reading: RFC 9562 §4 reads a UUID case-insensitively, so it
 * names the same transaction (409, or 400 from a server that refuses upper case). The spec does not say how ids compare,
 * and an independent server takes them exactly as written in its live mode, so a new creation is only a warning.
 */
export const UPPER_CASE_REUSE = reading(
  'the spec does not say how reference ids compare; RFC 9562 §4 reads a UUID case-insensitively, so a reuse in upper case is a duplicate (409), or refused as invalid (400)',
);

/**
 * A creation under a reference id another API user already used names a transaction that exists (§2.5: a reuse is
 * refused with 409). The spec does not say whether reference ids are one space or one per API user, and a target may
 * keep each user's transactions apart (reading another's is a reading too, STATUS-OWNER-404), so a new creation is
 * only a warning.
 */
export const OTHER_USER_REUSE = reading(
  '§2.5 refuses a request that reuses an existing reference id, and does not say whose: a reference id another API user used already names a transaction, so its reuse is refused as a duplicate (409)',
);

/**
 * A request the spec makes invalid without saying which of the operation's refusals answers it (a creation without a
 * required header, a currency code in lower case): 400 invalid data is our reading; any refusal conforms.
 */
export const REFUSED_AS_INVALID = reading(
  'the spec does not say which of its refusals answers this request; 400 invalid data (§7) is our reading of it',
);

/** A refused creation creates nothing, so the reference id it sent names no transaction and a valid creation may use it. */
export const REFUSED_REFERENCE_LEFT_FREE = spec(
  '§2.5, §7 rule 1: a refused request creates nothing; only a reference id a transaction was created under is taken',
);

/** §5 rules 2–3: the Authorization header follows the Basic and Bearer standards, whose scheme is case-insensitive. */
export const AUTH_SCHEME_ANY_CASE = spec(
  '§5 rules 2–3: Authorization follows the Basic and Bearer standards; RFC 9110 §11.1: the auth-scheme is case-insensitive',
);

/** Every input case of every spec creation. */
export const INPUT_CASES: readonly InputCase[] = specCreations().flatMap(inputCasesOf);

/** The spec's creation a feature names by its label ("request to pay"); an error that says which there are when none. */
export function creationLabelled(label: string): CreationInputs {
  const creation = specCreations().find((c) => c.label === label);
  if (!creation)
    throw new Error(
      `"${label}" is not a creation of the spec: ${specCreations()
        .map((c) => c.label)
        .join(', ')}`,
    );
  return creation;
}

/** The case a feature's words name, for a creation given by its label; an error that says what there is when none. */
export function inputCase(creationLabel: string, phrase: string): InputCase {
  const creation = creationLabelled(creationLabel);
  const found = INPUT_CASES.find((c) => c.creation === creation.id && c.phrase === phrase);
  if (!found)
    throw new Error(
      `No input case "${phrase}" for a ${creationLabel}; harness/checks/inputs.ts has: ${INPUT_CASES.filter(
        (c) => c.creation === creation.id,
      )
        .map((c) => c.phrase)
        .join('; ')}`,
    );
  return found;
}
