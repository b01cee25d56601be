/**
 * The identity services' public face, for the API's routes, the console, the process and the
 * command-line tools: access tokens and their exchange, API keys, ID-token verification and the
 * development identity provider, console sessions, and the KYC and accreditation records whose
 * state machines live here (docs/decisions/0330-rooms-and-walls.md). Everything else in identity/
 * is private to it.
 */
export { AccessTokens } from './access-tokens';
export { tokenLiveness } from './token-liveness';
export { tokenExchange } from './token-exchange';
export { createApiKey, listApiKeys, parseApiKey, revokeApiKey, toApiKeyView } from './api-keys';
export { providerSignature, verifyProviderSignature } from './provider-signature';
export { configuredIssuers, IdTokenVerifier } from './id-token-verifier';
export { DEV_IDP_AUDIENCE, devIdpOf, type DevIdp } from './dev-idp';
export { consoleSessions, statusOf, toConsoleSessionView } from './console-sessions';
export { kycEligibility } from './kyc-eligibility';
export { kycModel } from './kyc-model-of-set';
export type { KycModel } from './kyc-model';
export { accreditations } from './accreditations';
export { ACCREDITATION_DECISIONS, accreditationFlow } from './accreditation-flow';
export { commitIdentityChange } from './identity-change';
export { keepClearFileNames } from './personal-documents';
