// Security headers of the pages people open in a browser: /playground (where API keys are pasted), /docs
// and the endpoint references that Scalar draws at /docs/reference/ and /docs/admin/ (docs/api.md §7,
// docs/decisions.md §9). Every page may load only this service's own scripts, styles, images and API:
// its inline <script> and <style> elements are allowed by their SHA-256 hashes, computed from the page
// as sent. Scalar adds its styles at run time, so on its pages styles alone may be inline; scripts never.
// No page may be framed (clickjacking), content types are not sniffed, and no page sends a Referer.
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** Paths whose pages Scalar draws in the browser, styling them as it goes. */
const SCALAR_PAGES = ['/docs/reference', '/docs/admin'];

const INLINE_ELEMENT = /<(script|style)\b([^>]*)>([\s\S]*?)<\/\1>/gi;

function inlineHashes(html: string): { scripts: string[]; styles: string[] } {
  const scripts: string[] = [];
  const styles: string[] = [];
  for (const [, tag, attributes, body] of html.matchAll(INLINE_ELEMENT)) {
    if (tag!.toLowerCase() === 'script' && /\bsrc\s*=/i.test(attributes!)) continue;
    const hash = `'sha256-${createHash('sha256').update(body!).digest('base64')}'`;
    (tag!.toLowerCase() === 'script' ? scripts : styles).push(hash);
  }
  return { scripts, styles };
}

/** The Content-Security-Policy of a page: its own origin and its own inline elements, nothing else. */
export function contentSecurityPolicy(html: string, path: string): string {
  const { scripts, styles } = inlineHashes(html);
  const scalar = SCALAR_PAGES.some((prefix) => path.startsWith(prefix));
  return [
    "default-src 'none'",
    ["script-src 'self'", ...scripts].join(' '),
    // A hash beside 'unsafe-inline' would switch 'unsafe-inline' off, so Scalar's pages get no hashes.
    scalar ? "style-src 'self' 'unsafe-inline'" : ["style-src 'self'", ...styles].join(' '),
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Sets the headers on a page and on the files it loads; a page's CSP is read from its HTML. */
export function setPageSecurityHeaders(reply: FastifyReply, path: string, payload: unknown): void {
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Referrer-Policy', 'no-referrer');
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !type.startsWith('text/html') || typeof payload !== 'string') return;
  reply.header('Content-Security-Policy', contentSecurityPolicy(payload, path));
  // For browsers that predate frame-ancestors.
  reply.header('X-Frame-Options', 'DENY');
}

/** Whether a request path is one of the pages or the files they load. */
export function isPagePath(path: string): boolean {
  return (
    path === '/playground' || path.startsWith('/playground/') || path === '/docs' || path.startsWith('/docs/')
  );
}
