import { schemaId } from '../schema-ids.ts';

/**
 * The request headers of §4.1 that operations list (besides Authorization, Content-Type and the subscription
 * key, which every operation's credential, body and product decide). Names are lower case, as HTTP compares them.
 */
export const HEADERS = {
  'x-reference-id': {
    name: 'X-Reference-Id',
    description: 'UUID v4 chosen by the caller: the id of the resource to create (§2.5).',
    schema: { $ref: schemaId('uuid-v4') },
  },
  'x-target-environment': {
    name: 'X-Target-Environment',
    description: 'The wallet platform that processes the request, e.g. "sandbox".',
    schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' },
  },
  'x-callback-url': {
    name: 'X-Callback-Url',
    description: "Where the final status record is sent; its host must be the API user's providerCallbackHost.",
    schema: { type: 'string', maxLength: 2048, format: 'uri', pattern: '^https?://[^/?#\\s]+' },
  },
  language: {
    name: 'Language',
    description: 'ISO 639-1 or 639-3 code of the notification template.',
    schema: { type: 'string', pattern: '^[a-zA-Z]{2,3}$' },
  },
} as const;

export type HeaderName = keyof typeof HEADERS;

/** The subscription key every operation needs (§5.1): the gateway answers its own 401 without it. */
export const SUBSCRIPTION_KEY_HEADER = 'Ocp-Apim-Subscription-Key';
