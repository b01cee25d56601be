import { isIP } from 'node:net';
import { badRequest } from '../../lib/errors';

/**
 * spec §4.3 register/update: deliveries go over https; plain http only to loopback and only when
 * WEBHOOK_ALLOW_INSECURE_LOOPBACK is on (local development and tests).
 */
export function checkWebhookUrl(raw: string, allowInsecureLoopback: boolean): string {
  const url = new URL(raw);
  if (url.username || url.password)
    throw invalidUrl('credentials in the URL are not allowed; authenticate by the signature');
  if (url.protocol === 'https:') return url.toString();
  if (url.protocol === 'http:' && isLoopback(url.hostname)) {
    if (allowInsecureLoopback) return url.toString();
    throw invalidUrl('plain http is allowed only to loopback in development; use https');
  }
  throw invalidUrl('the URL must use https');
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return isIP(host) === 6 && host === '::1';
}

const invalidUrl = (why: string) => badRequest('INVALID_WEBHOOK_URL', `Invalid webhook url: ${why}`);
