/**
 * The API's public face, for the processes and tools outside it (scripts/, bench/): the app
 * itself, and the few identity services a command line needs. Everything else in api/ is private.
 */
export { createApp } from './app';
export type { ApiDeps } from './deps';
export { AccessTokens } from './identity/access-tokens';
export { createApiKey, listApiKeys, revokeApiKey, toApiKeyView } from './identity/api-keys';
export { providerSignature } from './identity/provider-signature';
