// The wire shapes of the fixture routes, built from fixture records (src/fixtures). Each view builds
// its fields in the order of its schema (src/http/schemas/fixtures.ts).
import { creditsNumber, formatCredits } from '../../billing/amounts.js';
import { lineupsPublished } from '../../fixtures/expected-lineup-content.js';
import type { ExpectedLineupDelivery } from '../../fixtures/expected-lineup-sales.js';
import type { Side } from '../../fixtures/fixture-inputs.js';
import type { FixtureListItem, FixtureSummary } from '../../fixtures/fixture-list.js';
import type { FixtureRecord, FixtureWithInputs } from '../../fixtures/fixture-record.js';
import { SUPPORTED_FORMATIONS } from '../../fixtures/formations.js';
import { freshnessOf } from '../../fixtures/freshness.js';

function competitionView(fixture: FixtureRecord) {
  const { competition_id, name, country, season, covered } = fixture.competition;
  return { competition_id, name, country, season, covered };
}

function summaryView(summary: FixtureSummary) {
  return {
    simulation_id: summary.simulationId,
    created_at: summary.createdAt.toISOString(),
    draws: summary.draws,
    home_win: summary.homeWin,
    draw: summary.draw,
    away_win: summary.awayWin,
    expected_goals: { home: summary.expectedGoalsHome, away: summary.expectedGoalsAway },
  };
}

function fixtureItemView({ fixture, summary }: FixtureListItem, now: Date) {
  return {
    fixture_id: fixture.fixtureId,
    kickoff: fixture.kickoff.toISOString(),
    home: fixture.home,
    away: fixture.away,
    competition: competitionView(fixture),
    state: fixture.state,
    score: fixture.score,
    data_version: fixture.dataVersion,
    summary: summary ? summaryView(summary) : null,
    freshness: freshnessOf(fixture, now),
  };
}

export function fixtureListView(list: { items: FixtureListItem[]; hasMore: boolean }, now: Date) {
  return {
    object: 'list' as const,
    has_more: list.hasMore,
    data: list.items.map((item) => fixtureItemView(item, now)),
  };
}

export function squadsView(fixture: FixtureWithInputs, now: Date) {
  const side = (name: Side) => ({
    team: { team_id: fixture[name].team_id, name: fixture[name].name },
    players: fixture.inputs[name].players.map((p) => ({
      player_id: p.player_id,
      name: p.name,
      position: p.position,
    })),
  });
  return {
    object: 'fixture_squads' as const,
    fixture_id: fixture.fixtureId,
    squad_version: fixture.squadVersion,
    data_version: fixture.dataVersion,
    as_of: fixture.inputsAsOf.toISOString(),
    lineups_announced: lineupsPublished(fixture),
    formations: [...SUPPORTED_FORMATIONS],
    home: side('home'),
    away: side('away'),
    freshness: freshnessOf(fixture, now),
  };
}

export function expectedLineupView(delivery: ExpectedLineupDelivery, requestId: string, priceMilli: number) {
  const charged = creditsNumber(delivery.chargedMilli);
  const receipt =
    delivery.balanceAfterMilli === null
      ? {}
      : {
          receipt: {
            request_id: requestId,
            price: formatCredits(priceMilli),
            credits_charged: charged,
            credits_remaining: creditsNumber(delivery.balanceAfterMilli),
          },
        };
  const first = delivery.firstDelivery;
  return {
    ...delivery.content,
    credits_charged: charged,
    replay: delivery.replay,
    ...(first
      ? {
          first_delivery: {
            request_id: first.requestId,
            delivered_at: first.deliveredAt.toISOString(),
            credits_charged: creditsNumber(first.chargedMilli),
          },
        }
      : {}),
    livemode: delivery.livemode,
    ...receipt,
  };
}
