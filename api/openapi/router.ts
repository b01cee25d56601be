import Router from '@koa/router';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buildOpenApi, type DocumentInfo } from './document';
import { validate } from '../middleware/validate';
import type { BehaviourSet } from '../../lib/behaviour-set';

/** The only swagger-ui-dist files the page needs; anything else under /docs is a 404. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tranche API</title>
<link rel="icon" href="/docs/favicon-32x32.png"><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="docs"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`;

// A file, not an inline script, so the page works under a strict Content-Security-Policy.
const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#docs', deepLinking: true, persistAuthorization: false });`;

/**
 * GET /openapi.json (built once from the routers the app serves) and GET /docs, a Swagger UI page
 * whose assets come from the swagger-ui-dist package and are served by this process: no CDN.
 */
export function openApiRouter(routers: Router[], info: DocumentInfo, set: BehaviourSet): Router {
  const router = new Router();
  let document: unknown;
  const assetDir = dirname(require.resolve('swagger-ui-dist/package.json'));

  router.get(
    '/openapi.json',
    validate({ summary: 'This document (OpenAPI 3.1)' }, (ctx) => {
      document ??= buildOpenApi(routers, info, set);
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = document;
    }),
  );
  router.get(
    '/docs',
    validate({ summary: 'This document as a page (Swagger UI)' }, (ctx) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = PAGE;
    }),
  );
  router.get(
    '/docs/init.js',
    validate({ summary: "The docs page's start-up script" }, (ctx) => {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = INIT;
    }),
  );
  router.get(
    '/docs/:asset',
    validate({ summary: "The docs page's stylesheet, script and icon" }, async (ctx) => {
      const type = ASSETS[ctx.params.asset!];
      if (!type) return; // falls through to the envelope's 404
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = await readFile(join(assetDir, ctx.params.asset!));
    }),
  );
  return router;
}
