// GET /playground and its static files (src/http/playground/: HTML, CSS and ES modules: charts.js draws SVG
// by our own code, markets.js makes the markets' rows, fair prices and CSV; nothing is loaded from
// elsewhere). `npm run build` copies the folder beside the compiled routes (scripts/copy-shaders.mjs). The page calls this service's API with the key pasted in.
import { readFileSync } from 'node:fs';
import type { App } from '../app-types.js';

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'playground.css': 'text/css; charset=utf-8',
  'playground.js': 'text/javascript; charset=utf-8',
  'charts.js': 'text/javascript; charset=utf-8',
  'markets.js': 'text/javascript; charset=utf-8',
  'projection.js': 'text/javascript; charset=utf-8',
  'market-fit.js': 'text/javascript; charset=utf-8',
  'path.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

const folder = new URL('../playground/', import.meta.url);

export function registerPlaygroundRoutes(app: App) {
  const bodies = new Map(
    Object.keys(FILES).map((name) => [name, readFileSync(new URL(name, folder), 'utf8')]),
  );
  const send = (name: string) => ({
    config: { access: 'public' as const },
    schema: { hide: true },
    handler: async (_request: unknown, reply: import('fastify').FastifyReply) =>
      reply.type(FILES[name]!).header('Cache-Control', 'no-cache').send(bodies.get(name)),
  });
  app.get('/playground', send('index.html'));
  // Browsers ask every site for its icon: the playground's and the docs' pages name none, so this answers.
  app.get('/favicon.ico', send('favicon.svg'));
  for (const name of Object.keys(FILES).filter((file) => file !== 'index.html')) {
    app.get(`/playground/${name}`, send(name));
  }
}
