//! The pages: leagues, a league's standings (live), its ratings over time, a bot, a match
//! and its log.

use std::convert::Infallible;

use askama::Template;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::response::sse::{Event, KeepAlive, Sse};
use knobel_engine::Game;

use super::format::{bounds, num, percent, signed, signed_number, time};
use super::query::{self, one_of, params};
use super::svg;
use super::{PageResult, Web, WebError, html};
use crate::disclosure::{EndedLog, ended_log, withheld};
use crate::league::LeagueConfig;
use crate::league::service::{Forfeits, LeagueInfo, LeagueView};
use crate::league::standings::{BotStanding, GameStandings, ScoreBasis, rating_history};
use crate::server::logs_busy;
use crate::store::{BotTotals, LeagueRecord, MatchCursor, MatchFilter, MatchSummary};

/// Matches listed per page of a bot.
pub const BOT_MATCHES_PER_PAGE: u32 = 50;

/// A path parameter, or the 400 page.
pub(super) fn segment(path: Result<Path<String>, PathRejection>) -> Result<String, WebError> {
    path.map(|Path(value)| value)
        .map_err(|e| WebError::BadRequest(format!("bad path: {}", e.body_text())))
}

/// The page's URL path for `name` under `prefix` (the name percent-encoded).
pub(super) fn href(prefix: &str, name: &str) -> String {
    let encoded: String = form_urlencoded::byte_serialize(name.as_bytes())
        .collect::<String>()
        .replace('+', "%20");
    format!("{prefix}{encoded}")
}

pub(super) fn game_title(game: Game) -> &'static str {
    match game {
        Game::Schocken => "Schocken",
        Game::Sjokken => "Sjokken",
        Game::Zokken => "Zokken",
    }
}

// -------------------------------------------------------------------------------------
// Leagues
// -------------------------------------------------------------------------------------

struct LeagueRow {
    name: String,
    href: String,
    status: &'static str,
    finished: u64,
    total: u64,
    playing: usize,
    waiting_for: String,
    created: String,
    dice: String,
}

#[derive(Template)]
#[template(path = "leagues.html")]
struct LeaguesPage {
    title: String,
    leagues: Vec<LeagueRow>,
}

pub(super) async fn leagues(State(web): State<Web>, RawQuery(raw): RawQuery) -> PageResult {
    params(raw.as_deref(), &[])?;
    let leagues = web
        .leagues
        .leagues()
        .await?
        .into_iter()
        .map(|LeagueInfo { record, live, .. }| LeagueRow {
            href: href("/leagues/", &record.name),
            status: record.status.as_str(),
            finished: record.finished_matches,
            total: record.total_matches,
            playing: live.playing,
            waiting_for: live.waiting_for.join(", "),
            created: time(record.created_at_ms),
            dice: if record.seed_source.is_public() {
                format!("{}, public dice", record.dice.as_str())
            } else {
                record.dice.as_str().to_owned()
            },
            name: record.name,
        })
        .collect();
    html(&LeaguesPage {
        title: "Leagues".to_owned(),
        leagues,
    })
}

// -------------------------------------------------------------------------------------
// Standings
// -------------------------------------------------------------------------------------

struct StandingRow {
    rank: usize,
    bot: String,
    href: String,
    mu: String,
    sigma: String,
    conservative: String,
    mean_place: String,
    stat: String,
    /// The luck-adjusted score with its interval ("–" without one).
    adjusted: String,
    matches: u64,
    forfeits: u64,
}

/// Two neighbours of a game's standings and their verdict.
struct NeighbourRow {
    above: String,
    below: String,
    sets: u64,
    difference: String,
    sequence: String,
    /// "separated", "equivalent" or "open".
    verdict: &'static str,
}

/// A game's neighbours: how far its order is known.
struct NeighbourTable {
    /// "percentage points of loss rate" or "chips per 100 rounds".
    unit: &'static str,
    margin: String,
    settled: bool,
    rows: Vec<NeighbourRow>,
}

struct Matrix {
    bots: Vec<String>,
    /// Per row bot: its name and per column "wins–losses" (row above column).
    rows: Vec<(String, Vec<String>)>,
}

struct Section {
    id: String,
    title: String,
    matches: u64,
    stat_header: &'static str,
    /// What the section is ranked by.
    ranked_by: &'static str,
    rows: Vec<StandingRow>,
    matrix: Option<Matrix>,
    neighbours: Option<NeighbourTable>,
}

/// The part of the standings page that live updates replace.
#[derive(Template)]
#[template(path = "standings_live.html")]
struct LiveSection {
    status: &'static str,
    finished: u64,
    total: u64,
    playing: usize,
    waiting_for: String,
    sections: Vec<Section>,
}

fn rows(bots: &[BotStanding], game: Option<Game>, forfeits: &Forfeits) -> Vec<StandingRow> {
    bots.iter()
        .enumerate()
        .map(|(i, b)| StandingRow {
            rank: i + 1,
            href: href("/bots/", &b.bot),
            mu: num(b.mu),
            sigma: num(b.sigma),
            conservative: num(b.conservative),
            mean_place: num(b.mean_place),
            stat: match (b.loss_rate, b.chips_per_100_rounds) {
                (Some(rate), _) => percent(rate),
                (_, Some(chips)) => signed(chips, 1.0),
                _ => String::new(),
            },
            adjusted: match (b.adjusted, b.chips_per_100_rounds) {
                (None, _) => "–".to_owned(),
                (Some(adjusted), None) => percent(adjusted),
                (Some(adjusted), Some(_)) => signed(adjusted, 1.0),
            },
            matches: b.matches,
            forfeits: forfeits.get(&(game, b.bot.clone())).copied().unwrap_or(0),
            bot: b.bot.clone(),
        })
        .collect()
}

fn matrix(g: &GameStandings) -> Matrix {
    let bots: Vec<String> = g.bots.iter().map(|b| b.bot.clone()).collect();
    let rows = bots
        .iter()
        .map(|row| {
            let cells = bots
                .iter()
                .map(|col| match g.pair(row, col) {
                    Some(p) if row != col => {
                        let (above, below) = if p.a == *row {
                            (p.a_above, p.b_above)
                        } else {
                            (p.b_above, p.a_above)
                        };
                        format!("{above}–{below}")
                    }
                    _ => "–".to_owned(),
                })
                .collect();
            (row.clone(), cells)
        })
        .collect();
    Matrix { bots, rows }
}

/// The scale a game's differences are shown on, and its unit: percentage points of loss
/// rate, or chips per 100 rounds.
fn difference_unit(game: Game) -> (f64, &'static str) {
    match game {
        Game::Zokken => (1.0, "chips per 100 rounds"),
        Game::Schocken | Game::Sjokken => (100.0, "percentage points of loss rate"),
    }
}

fn neighbour_table(g: &GameStandings) -> Option<NeighbourTable> {
    if g.neighbours.is_empty() {
        return None;
    }
    let (scale, unit) = difference_unit(g.game);
    Some(NeighbourTable {
        unit,
        margin: format!("±{:.1}", scale * g.margin),
        settled: g.settled(),
        rows: g
            .neighbours
            .iter()
            .map(|n| NeighbourRow {
                above: n.above.clone(),
                below: n.below.clone(),
                sets: n.sets,
                difference: signed_number(n.difference, scale),
                sequence: bounds(n.sequence, scale),
                verdict: n.verdict.name(),
            })
            .collect(),
    })
}

/// What a game's standings are ranked by, as the page's caption says it.
fn ranked_by(g: &GameStandings) -> &'static str {
    match (g.basis, g.game) {
        (ScoreBasis::Adjusted, Game::Zokken) => "luck-adjusted net chips per 100 rounds",
        (ScoreBasis::Adjusted, _) => "luck-adjusted loss rate",
        (ScoreBasis::Raw, Game::Zokken) => "net chips per 100 rounds",
        (ScoreBasis::Raw, _) => "mean place",
    }
}

/// The live part of a league's standings page, rendered (also what live updates send).
pub(super) fn live_section(view: &LeagueView) -> Result<String, WebError> {
    let forfeits = &view.played.forfeits;
    let mut sections: Vec<Section> = view
        .played
        .standings
        .games
        .iter()
        .map(|g| Section {
            id: g.game.name().to_owned(),
            title: game_title(g.game).to_owned(),
            matches: g.matches,
            stat_header: match g.game {
                Game::Zokken => "Net chips per 100 rounds (95% CI)",
                _ => "Loss rate (95% CI)",
            },
            ranked_by: ranked_by(g),
            rows: rows(&g.bots, Some(g.game), forfeits),
            matrix: Some(matrix(g)),
            neighbours: neighbour_table(g),
        })
        .collect();
    if !view.played.standings.overall.is_empty() {
        sections.push(Section {
            id: "overall".to_owned(),
            title: "Overall".to_owned(),
            matches: view.played.results.len() as u64,
            stat_header: "",
            ranked_by: "mean place",
            rows: rows(&view.played.standings.overall, None, forfeits),
            matrix: None,
            neighbours: None,
        });
    }
    Ok(LiveSection {
        status: view.info.record.status.as_str(),
        finished: view.info.record.finished_matches,
        total: view.info.record.total_matches,
        playing: view.info.live.playing,
        waiting_for: view.info.live.waiting_for.join(", "),
        sections,
    }
    .render()?)
}

struct PairLine {
    game: &'static str,
    matches: u64,
    a_above: u64,
    b_above: u64,
    sets: u64,
    difference: String,
    unit: &'static str,
}

struct Pair {
    a: String,
    b: String,
    lines: Vec<PairLine>,
}

#[derive(Template)]
#[template(path = "standings.html")]
struct StandingsPage {
    title: String,
    league: String,
    events: String,
    ratings: String,
    live: String,
    bots: Vec<String>,
    chosen: (String, String),
    pair: Option<Pair>,
    dice: DiceNotice,
}

/// What a league page says of its dice (docs/fair-play.md).
struct DiceNotice {
    /// "independent" or "duplicate".
    mode: String,
    /// Public dice: its seed is known (not for a contest).
    public: bool,
    /// The commitment published at creation ("" for a legacy league).
    commitment: String,
    /// The secret, once the league has ended.
    secret: String,
}

impl DiceNotice {
    fn of(league: &LeagueRecord) -> DiceNotice {
        let (commitment, secret) = league.shown_dice();
        DiceNotice {
            mode: league.dice.as_str().to_owned(),
            public: league.seed_source.is_public(),
            commitment,
            secret,
        }
    }
}

async fn league_view(web: &Web, name: &str) -> Result<LeagueView, WebError> {
    query::name("league", name)?;
    web.leagues
        .league_standings_within(name, super::STANDINGS_MAX_AGE)
        .await?
        .ok_or_else(|| {
            WebError::NotFound(format!("no league named {name:?}: see the leagues at /"))
        })
}

pub(super) async fn standings(
    State(web): State<Web>,
    league: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = segment(league)?;
    let params = params(raw.as_deref(), &["a", "b"])?;
    let view = league_view(&web, &name).await?;
    let bots = view.info.record.bots.clone();
    let legal: Vec<&str> = bots.iter().map(String::as_str).collect();
    let pick = |key: &str| -> Result<Option<String>, WebError> {
        match params.get(key) {
            None => Ok(None),
            Some(value) => one_of(key, value, &legal).map(|b| Some(b.to_owned())),
        }
    };
    let pair = match (pick("a")?, pick("b")?) {
        (None, None) => None,
        (Some(a), Some(b)) if a == b => {
            return Err(WebError::BadRequest(format!(
                "a = b = {a:?}: compare two different bots"
            )));
        }
        (Some(a), Some(b)) => Some(pair(&view, a, b)),
        _ => {
            return Err(WebError::BadRequest(
                "give both a and b (two bots of the league) or neither".to_owned(),
            ));
        }
    };
    // The form shows the pair compared, else the first two bots.
    let chosen = match &pair {
        Some(p) => (p.a.clone(), p.b.clone()),
        None => (
            bots.first().cloned().unwrap_or_default(),
            bots.get(1).cloned().unwrap_or_default(),
        ),
    };
    html(&StandingsPage {
        title: format!("{name}: standings"),
        events: format!("{}/events", href("/leagues/", &name)),
        ratings: format!("{}/ratings", href("/leagues/", &name)),
        live: live_section(&view)?,
        dice: DiceNotice::of(&view.info.record),
        league: name,
        bots,
        chosen,
        pair,
    })
}

fn pair(view: &LeagueView, a: String, b: String) -> Pair {
    let lines = view
        .played
        .standings
        .games
        .iter()
        .filter_map(|g| {
            let p = g.pair(&a, &b)?;
            let d = g.paired_difference(&a, &b)?;
            let (a_above, b_above) = if p.a == a {
                (p.a_above, p.b_above)
            } else {
                (p.b_above, p.a_above)
            };
            let zokken = g.game == Game::Zokken;
            Some(PairLine {
                game: game_title(g.game),
                matches: p.matches,
                a_above,
                b_above,
                sets: p.sets,
                difference: signed(d, if zokken { 1.0 } else { 100.0 }),
                unit: if zokken {
                    "chips per 100 rounds (higher is better)"
                } else {
                    "percentage points of loss rate (lower is better)"
                },
            })
        })
        .collect();
    Pair { a, b, lines }
}

pub(super) async fn events(
    State(web): State<Web>,
    league: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = segment(league)?;
    params(raw.as_deref(), &[])?;
    query::name("league", &name)?;
    if web.store.league(&name).await?.is_none() {
        return Err(WebError::NotFound(format!(
            "no league named {name:?}: see the leagues at /"
        )));
    }
    let updates = web.live.subscribe(&name);
    let stop = web.stop.subscribe();
    let stream =
        futures_util::stream::unfold((updates, stop), |(mut updates, mut stop)| async move {
            if *stop.borrow() {
                return None;
            }
            tokio::select! {
                changed = updates.changed() => {
                    changed.ok()?;
                    let html = updates.borrow_and_update().clone();
                    let event = Event::default().event("standings").data(html.as_str());
                    Some((Ok::<_, Infallible>(event), (updates, stop)))
                }
                _ = stop.changed() => None,
            }
        });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

// -------------------------------------------------------------------------------------
// Ratings over time
// -------------------------------------------------------------------------------------

struct RatingRow {
    bot: String,
    colour: &'static str,
    mu: String,
    sigma: String,
    conservative: String,
}

struct GameLink {
    name: &'static str,
    title: &'static str,
    current: bool,
}

#[derive(Template)]
#[template(path = "ratings.html")]
struct RatingsPage {
    title: String,
    league: String,
    league_href: String,
    games: Vec<GameLink>,
    chart: String,
    rows: Vec<RatingRow>,
    matches: usize,
}

/// The choices of the ratings page for a league of `config`: "overall", then each game the
/// league plays.
pub(super) fn game_choices(config: &LeagueConfig) -> Vec<&'static str> {
    let played: Vec<Game> = config.games.iter().map(|plan| plan.game).collect();
    std::iter::once("overall")
        .chain(
            Game::ALL
                .iter()
                .filter(|g| played.contains(g))
                .map(|g| g.name()),
        )
        .collect()
}

pub(super) async fn ratings(
    State(web): State<Web>,
    league: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = segment(league)?;
    let params = params(raw.as_deref(), &["game"])?;
    let view = league_view(&web, &name).await?;
    let choices = game_choices(&view.info.record.config);
    let choice = match params.get("game") {
        Some(value) => one_of("game", value, &choices)?,
        None => "overall",
    };
    let game: Option<Game> = choice.parse().ok();
    let series = rating_history(&view.played.results, game);
    let matches = view
        .played
        .results
        .iter()
        .filter(|m| game.is_none_or(|g| m.game == g))
        .count();
    let label = game.map_or("all games", game_title);
    let chart = svg::rating_chart(
        &series,
        "chart-ratings",
        &format!("Rating μ of each bot after each match of {name}, {label}"),
        false,
    );
    let rows = series
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let (_, last) = s.points.last()?;
            Some(RatingRow {
                bot: s.bot.clone(),
                colour: svg::colour(i),
                mu: num(last.mu),
                sigma: num(last.sigma),
                conservative: num(last.conservative()),
            })
        })
        .collect();
    html(&RatingsPage {
        title: format!("{name}: ratings over time, {label}"),
        league_href: href("/leagues/", &name),
        league: name,
        games: choices
            .iter()
            .map(|&g| GameLink {
                name: g,
                title: g.parse::<Game>().map_or("Overall", game_title),
                current: g == choice,
            })
            .collect(),
        chart,
        rows,
        matches,
    })
}

// -------------------------------------------------------------------------------------
// A bot
// -------------------------------------------------------------------------------------

/// A seat's strikes, timeouts and forfeit as shown (empty without an outcome).
#[derive(Default)]
pub(super) struct Penalties {
    pub(super) strikes: String,
    pub(super) timeouts: String,
    pub(super) forfeit: String,
}

pub(super) fn penalties(
    outcome: Option<&knobel_engine::Outcome>,
    seat: Option<usize>,
) -> Penalties {
    let (Some(o), Some(i)) = (outcome, seat) else {
        return Penalties::default();
    };
    Penalties {
        strikes: o.strikes.get(i).copied().unwrap_or(0).to_string(),
        timeouts: o.timeouts.get(i).copied().unwrap_or(0).to_string(),
        forfeit: o
            .forfeits
            .get(i)
            .copied()
            .flatten()
            .map(|r| r.name().replace('_', " "))
            .unwrap_or_default(),
    }
}

struct BotMatch {
    id: String,
    href: String,
    game: String,
    status: &'static str,
    started: String,
    seat: String,
    place: String,
    penalties: Penalties,
}

struct BotChart {
    league: String,
    href: String,
    chart: String,
    mu: String,
    conservative: String,
}

#[derive(Template)]
#[template(path = "bot.html")]
struct BotPage {
    title: String,
    bot: String,
    matches: Vec<BotMatch>,
    /// Over all its finished matches.
    totals: BotTotals,
    next: Option<String>,
    charts: Vec<BotChart>,
}

pub(super) async fn bot(
    State(web): State<Web>,
    bot: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let name = segment(bot)?;
    query::name("bot", &name)?;
    let params = params(raw.as_deref(), &["page"])?;
    let after = page_after(&web, params.get("page"))?;
    let leagues = web.leagues.leagues().await?;
    let in_leagues: Vec<String> = leagues
        .iter()
        .filter(|l| l.record.bots.contains(&name))
        .map(|l| l.record.name.clone())
        .collect();
    let filter = MatchFilter {
        bot_name: Some(name.clone()),
        limit: BOT_MATCHES_PER_PAGE,
        after,
        ..MatchFilter::default()
    };
    let (found, more) = web.store.list_matches_page(&filter).await?;
    // A bot is known if it is registered, in a league, or in a match (a built-in player).
    if in_leagues.is_empty() && found.is_empty() && web.store.bot_by_name(&name).await?.is_none() {
        return Err(WebError::NotFound(format!(
            "no bot named {name:?}: see the standings of the leagues at /"
        )));
    }
    let next = match found.last() {
        Some(last) if more => Some(format!(
            "{}?page={}",
            href("/bots/", &name),
            web.page_tokens.encode(&MatchCursor::of(last))
        )),
        _ => None,
    };
    // The totals cover every finished match of the bot, not only this page's.
    let totals = web.store.bot_totals(&name).await?;
    let matches = found.iter().map(|m| bot_match(m, &name)).collect();
    let charts = bot_charts(&web, &name, in_leagues).await?;
    html(&BotPage {
        title: format!("Bot {name}"),
        bot: name,
        matches,
        totals,
        next,
        charts,
    })
}

/// The matches after the page token `page` (the first page without one).
fn page_after(web: &Web, page: Option<&String>) -> Result<Option<MatchCursor>, WebError> {
    Ok(match page {
        None => None,
        Some(token) => Some(web.page_tokens.decode(token).map_err(|e| {
            WebError::BadRequest(format!(
                "page = {} is not legal: {e} (use the page links)",
                knobel_engine::quoted(token)
            ))
        })?)
        .flatten(),
    })
}

/// Match `m` as a row of bot `name`'s page.
fn bot_match(m: &MatchSummary, name: &str) -> BotMatch {
    let seat = m.seat_names.iter().position(|s| *s == name);
    let outcome = m.outcome.as_ref();
    BotMatch {
        href: href("/matches/", &m.id),
        id: m.id.clone(),
        game: m.game.clone(),
        status: m.status.as_str(),
        started: time(m.started_at_ms),
        seat: seat.map(|s| s.to_string()).unwrap_or_default(),
        place: match (outcome, seat) {
            (Some(o), Some(i)) => o.placings[i].to_string(),
            _ => String::new(),
        },
        penalties: penalties(outcome, seat),
    }
}

/// Bot `name`'s rating chart in each of `in_leagues` where it has a rating.
async fn bot_charts(
    web: &Web,
    name: &str,
    in_leagues: Vec<String>,
) -> Result<Vec<BotChart>, WebError> {
    let mut charts = Vec::new();
    for (i, league) in in_leagues.into_iter().enumerate() {
        let Some(view) = web
            .leagues
            .league_standings_within(&league, super::STANDINGS_MAX_AGE)
            .await?
        else {
            continue;
        };
        let Some(series) = rating_history(&view.played.results, None)
            .into_iter()
            .find(|s| s.bot == name)
        else {
            continue;
        };
        let Some((_, last)) = series.points.last().copied() else {
            continue;
        };
        charts.push(BotChart {
            chart: svg::rating_chart(
                std::slice::from_ref(&series),
                &format!("chart-{}", i + 1),
                &format!("Rating of {name} in {league} after each match (dashed: μ − 3σ)"),
                true,
            ),
            href: format!("{}/ratings", href("/leagues/", &league)),
            league,
            mu: num(last.mu),
            conservative: num(last.conservative()),
        });
    }
    Ok(charts)
}

pub(super) async fn log_json(
    State(web): State<Web>,
    id: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let id = super::match_page::match_id(id)?;
    params(raw.as_deref(), &[])?;
    let serving = web
        .logs_in_flight
        .clone()
        .try_acquire_owned()
        .map_err(|_| WebError::Busy(logs_busy()))?;
    let json = match ended_log(&web.store, &id).await? {
        EndedLog::Log(json) => json,
        EndedLog::Unknown => return Err(WebError::NotFound(format!("no match {id:?}"))),
        EndedLog::Running => {
            return Err(WebError::Running(format!(
                "match {id} is still running: its log (with every hidden die) is available once it has ended"
            )));
        }
        EndedLog::Missing => {
            return Err(WebError::NotFound(format!(
                "match {id} ended without a log"
            )));
        }
        EndedLog::Withheld { league, .. } | EndedLog::SetPlaying { league, .. } => {
            return Err(WebError::Withheld(withheld(&id, &league)));
        }
    };
    drop(serving);
    Ok(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}

#[cfg(test)]
mod template_tests {
    use askama::Template;

    use super::{LeaguesPage, LiveSection, Section};

    fn section(matches: u64) -> Section {
        Section {
            id: "schocken".to_owned(),
            title: "Schocken".to_owned(),
            matches,
            stat_header: "Loss rate (95% CI)",
            ranked_by: "mean place",
            rows: Vec::new(),
            matrix: None,
            neighbours: None,
        }
    }

    #[test]
    fn a_heading_counts_one_match_in_the_singular() {
        let live = |matches| {
            LiveSection {
                status: "running",
                finished: 1,
                total: 2,
                playing: 0,
                waiting_for: String::new(),
                sections: vec![section(matches)],
            }
            .render()
            .unwrap()
        };
        assert!(live(1).contains("(1 match)"), "{}", live(1));
        assert!(live(2).contains("(2 matches)"), "{}", live(2));
    }

    #[test]
    fn the_leagues_page_links_every_match_and_bot_even_without_leagues() {
        let page = LeaguesPage {
            title: "Leagues".to_owned(),
            leagues: Vec::new(),
        }
        .render()
        .unwrap();
        assert!(page.contains("No leagues yet"), "{page}");
        let main = &page[page.find("<main").unwrap()..];
        assert!(main.contains("href=\"/matches\""), "{page}");
        assert!(main.contains("href=\"/bots\""), "{page}");
    }
}
