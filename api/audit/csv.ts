import type { AuditRow } from '../../db/audit-log';

const COLUMNS = [
  'seq',
  'occurred_at',
  'actor_user_id',
  'actor_roles',
  'actor_api_key_id',
  'actor_session',
  'client_address',
  'action',
  'subject_type',
  'subject_id',
  'outcome',
  'error_code',
  'request_id',
  'before',
  'after',
  'id',
  'hash',
  'prev_hash',
] as const;

/**
 * One CSV field (RFC 4180). A value a spreadsheet would run as a formula (=, +, -, @ first) gets a
 * leading apostrophe: reasons and URLs come from users, and the file is opened by people.
 */
function field(value: unknown): string {
  let text =
    value === null || value === undefined
      ? ''
      : value instanceof Date
        ? value.toISOString()
        : Array.isArray(value)
          ? value.join(' ')
          : typeof value === 'object'
            ? JSON.stringify(value)
            : String(value as string | number);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvHeader = () => `${COLUMNS.join(',')}\r\n`;
export const csvLine = (r: AuditRow) => `${COLUMNS.map((c) => field(r[c])).join(',')}\r\n`;
