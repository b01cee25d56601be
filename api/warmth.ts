/** The parts an API warms before /ready answers 200, in the order they run. */
export const WARM_PARTS = ['database_pool', 'publish_statement', 'temporal', 'request_path', 'worker'] as const;
export type WarmPart = (typeof WARM_PARTS)[number];

/** What /ready reads: the parts warmed so far, and whether all have run. */
export class Warmth {
  readonly warmed: WarmPart[] = [];
  get done(): boolean {
    return this.warmed.length === WARM_PARTS.length;
  }
  get pending(): WarmPart[] {
    return WARM_PARTS.filter((p) => !this.warmed.includes(p));
  }
}
