/** spec: a deployment runs Set A or Set B. Mirrors lib/config's enum without pulling zod into workflows. */
export type BehaviourSet = 'A' | 'B';
