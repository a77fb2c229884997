import { TEST_NUMBERS } from '../../../core/test-numbers.ts';
import { check, type InteropClient } from '../support/types.ts';

export const client: InteropClient = {
  name: 'mtn-momo-sdk',
  // It reads its whole configuration from the environment when it is loaded.
  prepare: (env) => {
    Object.assign(process.env, {
      MTN_MOMO_ENV: 'sandbox',
      LOCAL_CURRENCY: 'EUR',
      MOMO_API_BASE_URL_SANDBOX: env.baseUrl,
      X_TARGET_ENVIRONMENT_SANDBOX: 'sandbox',
      SUBSCRIPTION_KEY_SANDBOX: env.keys.collection,
      // It registers this as providerCallbackHost and sends it as X-Callback-Url: a URL, as its README shows; a
      // listener of the suite answers there, so the client report judges the client, not a missing listener.
      PROVIDER_CALLBACK_HOST_SANDBOX: env.callbackUrl,
      DEFAULT_POLL_RETRIES: '20',
      DEFAULT_POLL_DELAY_MS: '50',
    });
  },
  flows: {
    'collection: provisions, pays and polls until the payment is final': async () => {
      const { processPayment } = await import('mtn-momo-sdk');
      const result = await processPayment('10', TEST_NUMBERS.ordinary.msisdn, 'Invoice #12345');
      check(result.status === 'SUCCESSFUL', `the payment ended ${result.status}`);
    },
  },
};
