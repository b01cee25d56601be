/** The spec's two behaviour sets; a deployment picks one (BEHAVIOUR_SET, lib/config.ts). */
export const BEHAVIOUR_SETS = ['A', 'B'] as const;
export type BehaviourSet = (typeof BEHAVIOUR_SETS)[number];
