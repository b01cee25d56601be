/**
 * An accreditation's states (spec §6.2); its transitions live in identity/accreditation-flow.ts.
 * Set A starts at `submitted`; Set B starts at `created` and is submitted later.
 */
export type AccreditationStatus = 'created' | 'submitted' | 'more_info_needed' | 'approved' | 'denied';
