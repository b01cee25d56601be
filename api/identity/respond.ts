/** The success envelope (spec §1): one helper for the whole API. */
export { ok } from '../respond';
