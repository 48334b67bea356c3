// POST /v1/odds/implied (docs/api.md §4.13): one market's decimal odds to the probabilities they imply
// without the bookmaker's margin. Free, pure arithmetic (src/market/margin-removal.ts): no database, no
// credits, counted against data_rpm as the other free reads are.
import { removeMargin } from '../../market/margin-removal.js';
import type { App } from '../app-types.js';
import { impliedOddsBody, impliedOddsSchema } from '../schemas/odds.js';

export function registerOddsRoutes(app: App) {
  app.post(
    '/v1/odds/implied',
    {
      config: { access: 'api', scope: 'data.read', rateGroup: 'data' },
      schema: {
        operationId: 'impliedProbabilities',
        summary: "Remove a bookmaker's margin from one market's odds",
        description:
          'Free. The probabilities one market of decimal odds implies once the margin is taken out, by the ' +
          "method asked (default `shin`), with the overround and the method's parameter. Odds that no " +
          'market has answer 400 parameter_invalid naming the field (`odds`, or `odds.<i>` for one price).',
        tags: ['odds'],
        body: impliedOddsBody,
        response: { 200: impliedOddsSchema },
      },
    },
    async (request) => {
      const { odds, method } = request.body;
      const implied = removeMargin(odds, method);
      return {
        object: 'implied_probabilities' as const,
        method: implied.method,
        odds,
        probabilities: implied.probabilities,
        fair_odds: implied.probabilities.map((p) => 1 / p),
        overround: implied.overround,
        margin: implied.overround - 1,
        parameter: implied.parameter,
      };
    },
  );
}
