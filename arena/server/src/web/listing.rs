//! The lists of every match (`/matches`: league, pick-up and practice matches, filtered by
//! game, status and bot, newest first, in pages of ListMatches' keyset page tokens) and of
//! every registered bot (`/bots`).

use askama::Template;
use axum::extract::{RawQuery, State};
use knobel_engine::Game;

use super::format::time;
use super::pages::{game_title, href};
use super::query::{self, one_of, params};
use super::{PageResult, Web, WebError, html};
use crate::store::{MatchCursor, MatchFilter, MatchStatus, MatchSummary};

/// Matches listed per page of `/matches`.
pub const MATCHES_PER_PAGE: u32 = 50;

/// The statuses a match may be filtered by.
const STATUSES: [&str; 3] = ["running", "finished", "aborted"];

struct MatchRow {
    id: String,
    href: String,
    game: &'static str,
    preset: String,
    status: &'static str,
    started: String,
    /// Each seat's bot, its page and its place (empty until finished).
    seats: Vec<(String, String, String)>,
}

/// A choice of a filter's select.
struct Choice {
    value: &'static str,
    label: &'static str,
    selected: bool,
}

#[derive(Template)]
#[template(path = "matches.html")]
struct MatchesPage {
    title: String,
    games: Vec<Choice>,
    statuses: Vec<Choice>,
    bot: String,
    matches: Vec<MatchRow>,
    next: Option<String>,
    filtered: bool,
}

fn choices(legal: &[&'static str], chosen: Option<&str>) -> Vec<Choice> {
    std::iter::once(Choice {
        value: "",
        label: "any",
        selected: chosen.is_none(),
    })
    .chain(legal.iter().map(|&value| Choice {
        value,
        label: value,
        selected: chosen == Some(value),
    }))
    .collect()
}

/// A filter's value: `None` when absent or empty (the form's "any").
fn filter<'a>(
    params: &'a std::collections::BTreeMap<String, String>,
    key: &str,
) -> Option<&'a str> {
    params
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

pub(super) async fn matches(State(web): State<Web>, RawQuery(raw): RawQuery) -> PageResult {
    let params = params(raw.as_deref(), &["game", "status", "bot", "page"])?;
    let games: Vec<&'static str> = Game::ALL.iter().map(|g| g.name()).collect();
    let game = filter(&params, "game")
        .map(|g| one_of("game", g, &games))
        .transpose()?;
    let status = filter(&params, "status")
        .map(|s| one_of("status", s, &STATUSES))
        .transpose()?;
    let bot = filter(&params, "bot");
    if let Some(bot) = bot {
        query::name("bot", bot)?;
    }
    let after = match filter(&params, "page") {
        None => None,
        Some(token) => web.page_tokens.decode(token).map_err(|e| {
            WebError::BadRequest(format!(
                "page = {} is not legal: {e} (use the page links)",
                knobel_engine::quoted(token)
            ))
        })?,
    };
    let query = MatchFilter {
        game: game.map(str::to_owned),
        status: status.and_then(|s| s.parse::<MatchStatus>().ok()),
        bot_name: bot.map(str::to_owned),
        limit: MATCHES_PER_PAGE,
        after,
    };
    let (found, more) = web.store.list_matches_page(&query).await?;
    let next = match found.last() {
        Some(last) if more => {
            let mut link = form_urlencoded::Serializer::new(String::new());
            for (key, value) in [("game", game), ("status", status), ("bot", bot)] {
                if let Some(value) = value {
                    link.append_pair(key, value);
                }
            }
            link.append_pair("page", &web.page_tokens.encode(&MatchCursor::of(last)));
            Some(format!("/matches?{}", link.finish()))
        }
        _ => None,
    };
    let matches = found.into_iter().map(match_row).collect();
    html(&MatchesPage {
        title: "Matches".to_owned(),
        games: choices(&games, game),
        statuses: choices(&STATUSES, status),
        bot: bot.unwrap_or_default().to_owned(),
        matches,
        next,
        filtered: game.is_some() || status.is_some() || bot.is_some(),
    })
}

/// A match as `/matches` lists it.
fn match_row(m: MatchSummary) -> MatchRow {
    let places = m
        .outcome
        .as_ref()
        .map(|o| o.placings.clone())
        .or(m.placings);
    MatchRow {
        href: href("/matches/", &m.id),
        game: m.game.parse().map_or("?", game_title),
        preset: m.preset,
        status: m.status.as_str(),
        started: time(m.started_at_ms),
        seats: m
            .seat_names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let place = places
                    .as_ref()
                    .and_then(|p| p.get(i))
                    .map(|p| format!("place {p}"))
                    .unwrap_or_default();
                (name.clone(), href("/bots/", name), place)
            })
            .collect(),
        id: m.id,
    }
}

struct BotRow {
    name: String,
    href: String,
    matches_href: String,
    registered: String,
    revoked: bool,
}

#[derive(Template)]
#[template(path = "bots.html")]
struct BotsPage {
    title: String,
    bots: Vec<BotRow>,
}

pub(super) async fn bots(State(web): State<Web>, RawQuery(raw): RawQuery) -> PageResult {
    params(raw.as_deref(), &[])?;
    let bots = web
        .store
        .list_bots()
        .await?
        .into_iter()
        .map(|b| BotRow {
            href: href("/bots/", &b.name),
            matches_href: format!(
                "/matches?{}",
                form_urlencoded::Serializer::new(String::new())
                    .append_pair("bot", &b.name)
                    .finish()
            ),
            registered: time(b.created_at_ms),
            revoked: b.is_revoked(),
            name: b.name,
        })
        .collect();
    html(&BotsPage {
        title: "Bots".to_owned(),
        bots,
    })
}
