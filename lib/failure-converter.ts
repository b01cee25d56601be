import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Failure messages and stack traces travel as an encoded payload, which the payload codec seals
 * like any other (docs/decisions/0324-failure-messages-sealed.md). Loaded by path (FAILURE_CONVERTER_PATH in
 * lib/runtime/payload-codec.ts): bundled into the workflow sandbox, and by every client and worker.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
