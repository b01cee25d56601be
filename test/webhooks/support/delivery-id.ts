import { createHash } from 'node:crypto';

/**
 * The id of the delivery of one event to one endpoint, as the publishing statement derives it in SQL
 * (`webhook_delivery_id`, db/migrations/0016-delivery-queue.ts): a v8 UUID over SHA-256 of both ids,
 * so a retried publish derives the same id. The service never needs it outside that statement; tests
 * use this twin to name a delivery before they have read it (docs/decisions/0183-delivery-ids-v8.md).
 */
export function deliveryIdFor(eventId: string, endpointId: string): string {
  const hash = createHash('sha256').update(`${eventId}:${endpointId}`, 'utf8').digest();
  const hex = hash.subarray(0, 16).toString('hex').split('');
  hex[12] = '8';
  hex[16] = '89ab'[hash[8]! & 3]!;
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
