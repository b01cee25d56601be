import type Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { commitIdentityChange, verifyProviderSignature, type accreditations, type KycModel } from '../../identity';
import { ok } from '../respond';
import { providerNotification, AccreditationView, KycCaseView, KycSessionView } from './schema';
import { z } from 'zod';

/**
 * The verification provider's notifications (HMAC-signed, see provider-signature.ts). They move
 * KYC and accreditation records exactly as staff decisions do, through the same models.
 */
export function providerRoutes(
  router: Router,
  deps: ApiDeps,
  models: { kyc: KycModel; accreditation: ReturnType<typeof accreditations> },
): void {
  router.post(
    '/identity/provider/notifications',
    async (ctx, next) => {
      const rawBody = (ctx.request as { rawBody?: string }).rawBody ?? '';
      verifyProviderSignature(
        deps.config.IDENTITY_PROVIDER_WEBHOOK_SECRET,
        { timestamp: ctx.get('x-provider-timestamp'), signature: ctx.get('x-provider-signature') },
        rawBody,
      );
      await next();
    },
    validate(
      {
        body: providerNotification(models.kyc.actions),
        response: z.union([KycCaseView, KycSessionView, AccreditationView]),
        summary: "The verification provider's signed KYC or accreditation notification",
      },
      async (ctx, input) => {
        const n = input.body;
        const result = await commitIdentityChange(deps, null, (em) =>
          n.kind === 'kyc'
            ? models.kyc.apply(em, { id: n.id }, n.action, 'provider', n.reason)
            : models.accreditation.decide(em, { id: n.id }, n.action, 'provider', n.reason),
        );
        ok(ctx, result);
      },
    ),
  );
}
