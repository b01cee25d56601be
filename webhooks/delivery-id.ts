import { createHash } from 'node:crypto';

/**
 * The id of the delivery of one event to one endpoint: a v8 UUID over SHA-256 of both ids, so a
 * retried publish derives the same id. The publishing statement computes it in SQL
 * (`webhook_delivery_id`, db/migrations/0016-delivery-queue.ts); this is the same function, for
 * callers that need the id without a query.
 */
export function deliveryIdFor(eventId: string, endpointId: string): string {
  const hash = createHash('sha256').update(`${eventId}:${endpointId}`, 'utf8').digest();
  const hex = hash.subarray(0, 16).toString('hex').split('');
  hex[12] = '8';
  hex[16] = '89ab'[hash[8]! & 3]!;
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
