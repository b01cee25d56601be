import { z } from 'zod';
import { MAX_CUSTOM_HEADER_BYTES, MAX_CUSTOM_HEADERS, refusedHeaderName, refusedHeaderValue } from '../../webhooks';

/**
 * An endpoint's static headers as given (docs/decisions/0400-custom-headers-per-endpoint.md): an
 * object of header name to `{ value, secret }`. Every refusal is a 422 whose path and message name
 * the header. `keeping`: on PATCH a secret header may leave out its value to keep the stored one.
 */
export function CustomHeaders(keeping: boolean) {
  const value = z.string().max(1024).describe('The header value: visible ASCII, spaces only between characters');
  return z
    .record(
      z.string().max(200),
      z.strictObject({
        value: keeping ? value.optional().describe('Left out on a secret header: it keeps the value it has') : value,
        secret: z
          .boolean()
          .default(false)
          .describe('Sealed at rest and never shown again: answers, audit entries and attempt records mask it'),
      }),
    )
    .superRefine((headers, ctx) => {
      const names = Object.keys(headers);
      if (names.length > MAX_CUSTOM_HEADERS)
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: `at most ${MAX_CUSTOM_HEADERS} headers per endpoint (${names.length} given)`,
        });
      const seen = new Map<string, string>();
      let bytes = 0;
      for (const name of names) {
        const h = headers[name]!;
        const issue = (why: string) =>
          ctx.addIssue({ code: 'custom', path: [name], message: `header ${name}: ${why}` });
        const refusedName = refusedHeaderName(name);
        if (refusedName) {
          issue(`may not be given: ${refusedName}`);
          continue;
        }
        const other = seen.get(name.toLowerCase());
        if (other !== undefined) issue(`given twice (as ${other} too): header names are case-insensitive`);
        seen.set(name.toLowerCase(), name);
        if (h.value !== undefined) {
          const refusedValue = refusedHeaderValue(h.value);
          if (refusedValue) issue(refusedValue);
        }
        bytes += name.length + (h.value?.length ?? 0);
      }
      if (bytes > MAX_CUSTOM_HEADER_BYTES)
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: `the headers' names and values come to ${bytes} bytes; at most ${MAX_CUSTOM_HEADER_BYTES}`,
        });
    })
    .describe(
      `Static headers every POST to the endpoint carries (at most ${MAX_CUSTOM_HEADERS}, ${MAX_CUSTOM_HEADER_BYTES} bytes of names and values). ` +
        'Names are HTTP tokens; hop-by-hop headers, Host, Content-*, Authorization, Cookie, User-Agent and the headers the service sets (X-Service-*, webhook-*, traceparent) are refused',
    );
}
