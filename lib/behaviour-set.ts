/** The spec's two behaviour sets; a deployment picks one (BEHAVIOUR_SET, lib/runtime/config.ts). */
export const BEHAVIOUR_SETS = ['A', 'B'] as const;
export type BehaviourSet = (typeof BEHAVIOUR_SETS)[number];
