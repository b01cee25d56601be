/**
 * The API process's public face, for the tools outside it (scripts/, bench/): the app itself and
 * what it is built from. The identity services a command line needs are identity/'s own face.
 */
export { createApp } from './app';
export type { ApiDeps } from '../api/deps';
export { resealKeptAnswers } from '../api/middleware/idempotency-reseal';
export { resealPersonalData } from '../api/personal/reseal';
