import { defineParameterType } from '@cucumber/cucumber';
import { PRODUCTS } from '../../core/products.ts';

defineParameterType({ name: 'product', regexp: new RegExp(PRODUCTS.join('|')), transformer: (s: string) => s });

/** Amounts as the API carries them: decimal strings. */
defineParameterType({ name: 'amount', regexp: /\d+(?:\.\d+)?/, transformer: (s: string) => s });

defineParameterType({ name: 'status', regexp: /SUCCESSFUL|FAILED|PENDING/, transformer: (s: string) => s });

/** An error or failure-reason code of §7, e.g. RESOURCE_ALREADY_EXIST. */
defineParameterType({ name: 'code', regexp: /[A-Z][A-Z_]+\.?/, transformer: (s: string) => s });

/** The kind of an account holder's id, in words, as the path names it (§4.2 #8: msisdn, email, party_code). */
const ID_KINDS: Record<string, string> = { 'a phone number': 'msisdn', 'an e-mail address': 'email', 'a party code': 'party_code' };
defineParameterType({ name: 'id kind', regexp: new RegExp(Object.keys(ID_KINDS).join('|')), transformer: (s: string) => ID_KINDS[s]! });

/** A language by its English name, as the Language header codes it: §4.1 takes ISO 639-1 or ISO 639-3 codes. */
const LANGUAGES: Record<string, string> = {
  English: 'en',
  French: 'fr',
  Swedish: 'sv',
  'Swedish, by its three-letter code': 'swe',
};
defineParameterType({
  name: 'language',
  regexp: new RegExp(
    Object.keys(LANGUAGES)
      .sort((a, b) => b.length - a.length)
      .join('|'),
  ),
  transformer: (s: string) => LANGUAGES[s]!,
});
