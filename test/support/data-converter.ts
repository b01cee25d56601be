import { dataConverterFromEnv } from '../../lib/runtime/payload-codec';

/**
 * The data converter of the processes under test, from the payload keyring scripts/with-stack.ts
 * puts in the environment: a test's own Temporal client reads and writes what the workers seal.
 */
export const testDataConverter = () => dataConverterFromEnv(process.env);
