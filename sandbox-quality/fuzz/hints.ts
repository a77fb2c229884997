import fc from 'fast-check';
import { TEST_NUMBERS } from '../../core/test-numbers.ts';
import type { SandboxSettings } from '../../sandbox/domain/settings.ts';

/**
 * What the document cannot say but a valid request needs to get past the business rules: the currencies,
 * target environments and scopes this sandbox was started with, the test numbers that choose an outcome,
 * and a callback URL on the host the fuzzer's API users registered (its receiver). Each is mixed with the schema's own
 * values (4 to 1), so valid requests reach both the success paths and the documented refusals.
 */
/**
 * Where a generated callback URL points until the episode puts its receiver's address in: plans stay the
 * same from one process to the next, so a seed and path replay anywhere.
 */
export const CALLBACK_PLACEHOLDER = 'http://fuzz-callback-receiver';

export function domainHints(settings: SandboxSettings): Map<string, fc.Arbitrary<unknown>> {
  const testNumbers = Object.values(TEST_NUMBERS).flatMap((n) => [n.msisdn, `+${n.msisdn}`]);
  const msisdn = fc.constantFrom(...testNumbers);
  return new Map<string, fc.Arbitrary<unknown>>([
    ['currency', fc.constantFrom(...settings.currencies)],
    ['x-target-environment', fc.constantFrom(...settings.targetEnvironments)],
    ['x-callback-url', fc.uuid({ version: 4 }).map((id) => `${CALLBACK_PLACEHOLDER}/callbacks/${id}`)],
    ['scope', fc.subarray(settings.scopes, { minLength: 1 }).map((scopes) => scopes.join(' '))],
    ['login_hint', msisdn.map((n) => `ID:${n}/MSISDN`)],
    ['partyId', msisdn],
    ['accountHolderId', fc.oneof(msisdn, fc.emailAddress(), fc.uuid({ version: 4 }))],
    ['accountHolderMSISDN', msisdn],
    ['amount', fc.constantFrom('1', '5', '10', '12.50', '100', '0.01')],
    ['language', fc.constantFrom('en', 'fr', 'sv', 'eng')],
    ['providerCallbackHost', fc.constantFrom('127.0.0.1', 'callbacks.example.com', 'localhost:8090')],
  ]);
}
