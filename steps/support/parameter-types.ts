import { defineParameterType } from '@cucumber/cucumber';
import { PRODUCTS } from '../../src/products.ts';

defineParameterType({ name: 'product', regexp: new RegExp(PRODUCTS.join('|')), transformer: (s: string) => s });

/** Amounts as the API carries them: decimal strings. */
defineParameterType({ name: 'amount', regexp: /\d+(?:\.\d+)?/, transformer: (s: string) => s });

defineParameterType({ name: 'status', regexp: /SUCCESSFUL|FAILED|PENDING/, transformer: (s: string) => s });

/** An error or failure-reason code of §7, e.g. RESOURCE_ALREADY_EXIST. */
defineParameterType({ name: 'code', regexp: /[A-Z][A-Z_]+\.?/, transformer: (s: string) => s });
