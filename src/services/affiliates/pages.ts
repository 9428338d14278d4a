import type { FastifyInstance } from 'fastify';
import { PathParams } from '../../platform/http/schemas.js';
import { RedirectQuery } from './schemas.js';
import type { AffiliatesService } from './service.js';

const CodeParams = PathParams({ code: { type: 'string', minLength: 1, maxLength: 32, pattern: '^[A-Za-z0-9_-]+$' } as never });

function messagePage(title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${message}</p></body></html>`;
}

/**
 * The public referral link `/r/{code}`, served at the root without an API key: it records a
 * click and a referral, then redirects (302) to the programme's landing URL with the referral
 * id as `affiliate_referral_id`, for the site to keep as its own first-party value.
 */
export function affiliatesPages(service: AffiliatesService) {
  return async function registerAffiliatesPages(app: FastifyInstance): Promise<void> {
    function sendMessage(reply: import('fastify').FastifyReply, status: number, title: string, message: string) {
      return reply
        .code(status)
        .header('Content-Type', 'text/html; charset=utf-8')
        .header('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'no-store')
        .send(messagePage(title, message));
    }

    app.setErrorHandler((error: { validationContext?: string; statusCode?: number }, request, reply) => {
      if (error.validationContext === 'params' || error.validationContext === 'querystring') return sendMessage(reply, 404, 'Link not found', 'This referral link is not valid.');
      request.log.error({ err: error }, 'referral link failed');
      return sendMessage(reply, 500, 'Something went wrong', 'Try the link again later.');
    });

    app.get<{ Params: { code: string }; Querystring: { a?: string } }>(
      '/r/:code',
      { schema: { hide: true, params: CodeParams, querystring: RedirectQuery }, exposeHeadRoute: false },
      async (request, reply) => {
        const outcome = await service.click(request.params.code, request.query.a);
        if ('location' in outcome) {
          return reply.code(302).header('Location', outcome.location).header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer').send();
        }
        return outcome.missing === 'code'
          ? sendMessage(reply, 404, 'Link not found', 'No partner uses this referral link.')
          : sendMessage(reply, 404, 'No landing page', 'This referral link has nowhere to go yet.');
      },
    );
  };
}
