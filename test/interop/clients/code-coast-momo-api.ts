import momo from 'code-coast-momo-api';
import { sparkplugClient } from './sparkplug.ts';

// A fork of mtn-momo with the same API; its isPayerActive returns the result as a boolean.
export const client = sparkplugClient('code-coast-momo-api', momo as unknown as Parameters<typeof sparkplugClient>[1]);
