// The clients below ship no TypeScript types; the interop suite calls them as their READMEs do.
declare module 'momo-api' {
  export function createApiUser(
    url: string,
    xReferenceId: string,
    subscriptionKey: string,
    targetEnvironment: string,
    providerCallbackHost: string,
  ): Promise<{ status: number }>;
  export function createApiKey(
    url: string,
    subscriptionKey: string,
    targetEnvironment: string,
    apiUserId: string,
    callbackHost: string,
  ): Promise<{ apiKey: string }>;
  export function colAccessToken(
    apiKey: string,
    momohost: string,
    subscriptionKey: string,
    apiUserId: string,
  ): Promise<{ access_token: string }>;
  export function disAccessToken(
    apiKey: string,
    momohost: string,
    subscriptionKey: string,
    apiUserId: string,
  ): Promise<{ access_token: string }>;
  export function remittAccessToken(
    apiKey: string,
    momohost: string,
    subscriptionKey: string,
    apiUserId: string,
  ): Promise<{ access_token: string }>;
  export function requestToPay(
    momoHost: string,
    subscriptionKey: string,
    callbackUrl: string | undefined,
    targetEnvironment: string,
    payer: object,
    payee: object,
    amount: string,
    currency: string,
    externalId: string,
    payeeNote: string,
    payerMessage: string,
    accessToken: string,
  ): Promise<unknown>;
  export function disburseTransfer(
    momoHost: string,
    subscriptionKey: string,
    targetEnvironment: string,
    payee: object,
    amount: string,
    currency: string,
    externalId: string,
    accessToken: string,
  ): Promise<unknown>;
  export function remittTransfer(
    momoHost: string,
    subscriptionKey: string,
    targetEnvironment: string,
    payee: object,
    amount: string,
    currency: string,
    externalId: string,
    accessToken: string,
  ): Promise<unknown>;
}

declare module 'mtn-momo-api' {
  export function makeRequest(options: {
    callbackHost: string;
    userApiKey: string;
    userId: string;
    primaryKey: string;
    amount: string;
    currency: string;
    externalId: string;
    partyIdType: string;
    partyId: string;
    payerMessage: string;
    payeeNote: string;
  }): Promise<{ response: { responseCode: number; referenceId: string }; status: Record<string, unknown> }>;
}

declare module 'mtn-momo-sdk' {
  export function processPayment(
    amount: string,
    phone: string,
    businessRef: string,
  ): Promise<{ status: string; data: Record<string, unknown> }>;
}

// mtn-momo-client ships types, but its package.json "exports" has no "types" condition, so TypeScript cannot
// find them under NodeNext resolution (a packaging bug, listed in docs/interop.md). What the suite calls:
declare module 'mtn-momo-client' {
  export enum TargetEnvironment {
    Sandbox = 'sandbox',
    Production = 'production',
  }
  export enum AccountHolderIdVariant {
    msisdn = 'msisdn',
    email = 'email',
    party_code = 'party_code',
  }
  type Party = { partyIdType: string; partyId: string };
  type Transaction = { amount: string; currency: string; externalId: string; payerMessage: string; payeeNote: string };
  type ProductOptions = { subscriptionKey: string; targetEnvironment: TargetEnvironment; userId: string; apiKey: string };
  type Record = { status: string; [field: string]: unknown };
  interface ProductAPI {
    getAccountBalance(): Promise<{ availableBalance: string; currency: string }>;
    getBasicUserInfo(options: {
      accountHolderMSISDN: string;
    }): Promise<{ givenName?: string; familyName?: string; [field: string]: unknown }>;
    validateAccountHolderStatus(options: { accountHolderIdType: AccountHolderIdVariant; accountHolderId: string }): Promise<boolean>;
  }
  export function createAPIUserAndKey(options: {
    subscriptionKey: string;
    providerCallbackHost: string;
  }): Promise<{ userId: string; apiKey: string; targetEnvironment: string; providerCallbackHost: string }>;
  export function createCollectionAPI(options: ProductOptions): ProductAPI & {
    requestToPay(options: Transaction & { payer: Party }): Promise<{ referenceId: string }>;
    requestToPayTransactionStatus(options: { referenceId: string }): Promise<Record>;
    requestToPayDeliveryNotification(options: { referenceId: string; notificationMessage: string; language?: string }): Promise<unknown>;
  };
  export function createDisbursementAPI(options: ProductOptions): ProductAPI & {
    transfer(options: Transaction & { payee: Party }): Promise<{ referenceId: string }>;
    getTransferStatus(options: { referenceId: string }): Promise<Record>;
  };
  export function createRemittanceAPI(options: ProductOptions): ProductAPI & {
    transfer(options: Transaction & { payee: Party }): Promise<{ referenceId: string }>;
    getTransferStatus(options: { referenceId: string }): Promise<Record>;
  };
}
