//! A match's page: its seats and result, then the table at one step (`?step=N`) with the
//! step's line beside it, links to every step, and the views the match allows: the public
//! view (its public events alone), and once its full log is public, the full view (hidden
//! dice shown) and each seat's view (what that seat saw, `?seat=N`).

use askama::Template;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use knobel_engine::{Game, MatchLog, Seat};

use super::format::time;
use super::pages::{Penalties, game_title, href, penalties, segment};
use super::query::{one_of, params};
use super::svg;
use super::{PageResult, Web, WebError, html};
use crate::disclosure::{EndedLog, check_match_id, ended_log};
use crate::match_text::{self, DieView, Lie, PublicRecord, Sight, Step, TableView, hand_name};
use crate::server::logs_busy;
use crate::store::{MatchStatus, MatchSummary};

/// Logs longer than this (bytes of JSON) are not stepped through on the page (their JSON
/// is linked): a page of every throw of a very long Zokken match would be huge.
pub const MAX_STEP_LOG_BYTES: usize = 4 * 1024 * 1024;

struct SeatRow {
    seat: usize,
    bot: String,
    href: String,
    place: String,
    score: String,
    penalties: Penalties,
}

/// One seat at the table, drawn.
struct SeatCard {
    seat: usize,
    bot: String,
    dice: String,
    throws: u8,
    score: String,
    status: &'static str,
    hand: String,
    acting: bool,
    viewer: bool,
}

/// The table at the step shown.
struct TableStep {
    number: usize,
    total: usize,
    text: String,
    round: String,
    pot: String,
    events: usize,
    seats: Vec<SeatCard>,
    first: String,
    prev: String,
    next: String,
    last: String,
}

/// A line of the list of steps.
struct LineLink {
    number: usize,
    href: String,
    text: String,
    heading: bool,
}

/// A view the match offers.
struct ViewLink {
    label: String,
    href: String,
    current: bool,
}

#[derive(Template)]
#[template(path = "match.html")]
struct MatchPage {
    title: String,
    id: String,
    game: String,
    preset: String,
    status: &'static str,
    running: bool,
    started: String,
    finished: String,
    abort_reason: String,
    score_header: &'static str,
    seats: Vec<SeatRow>,
    log_href: String,
    /// Why there is no step-through, if there is none.
    no_steps: String,
    sight: String,
    /// The kinds of dice drawn, each with an example.
    legend: Vec<(String, &'static str)>,
    views: Vec<ViewLink>,
    table: Option<TableStep>,
    lines: Vec<LineLink>,
}

fn seat_rows(m: &MatchSummary) -> Vec<SeatRow> {
    let zokken = m.game == Game::Zokken.name();
    m.seat_names
        .iter()
        .enumerate()
        .map(|(i, bot)| {
            let o = m.outcome.as_ref();
            let get = |f: &dyn Fn(&knobel_engine::Outcome) -> String| o.map(f).unwrap_or_default();
            SeatRow {
                seat: i,
                href: href("/bots/", bot),
                bot: bot.clone(),
                place: match (o, &m.placings) {
                    (Some(o), _) => o.placings.get(i).map(u8::to_string).unwrap_or_default(),
                    (None, Some(p)) => p.get(i).map(u8::to_string).unwrap_or_default(),
                    _ => String::new(),
                },
                score: get(&|o| {
                    if zokken {
                        o.chips.get(i).map(|c| format!("{c:+}")).unwrap_or_default()
                    } else {
                        o.tokens.get(i).map(i64::to_string).unwrap_or_default()
                    }
                }),
                penalties: penalties(o, Some(i)),
            }
        })
        .collect()
}

/// The match id of a match's path, or the 400 page.
pub(super) fn match_id(id: Result<Path<String>, PathRejection>) -> Result<String, WebError> {
    let id = segment(id)?;
    check_match_id(&id)
        .map_err(|e| WebError::BadRequest(format!("{}: {e}", knobel_engine::quoted(&id))))?;
    Ok(id)
}

/// What of an ended match may be shown: its public record, and its full log (seed, every
/// throw, hidden dice) when that is public.
struct Records {
    public: PublicRecord,
    full: Option<MatchLog>,
}

/// The records of the ended match `id`, or why there are none. The one place the match
/// page asks whether a match's full log is public (`ended_log`).
async fn records(web: &Web, id: &str) -> Result<Result<Records, String>, WebError> {
    let Ok(_serving) = web.logs_in_flight.clone().try_acquire_owned() else {
        return Ok(Err(format!(
            "The step-through is not available right now: {}.",
            logs_busy()
        )));
    };
    // With its league still playing, only the public record is built from the log.
    let (json, full_log_public) = match ended_log(&web.store, id).await? {
        EndedLog::Log(json) => (json, true),
        EndedLog::Withheld { log_json, .. } => (log_json, false),
        EndedLog::Missing => return Ok(Err("The match ended without a log.".to_owned())),
        EndedLog::Running | EndedLog::Unknown => {
            return Ok(Err("The match has no log yet.".to_owned()));
        }
        EndedLog::SetPlaying { league, set, left } => {
            return Ok(Err(format!(
                "Duplicate set {set} of league {league} has {left} seat orders still to play on \
                 the same dice: this match is shown once they have finished."
            )));
        }
    };
    if json.len() > MAX_STEP_LOG_BYTES {
        return Ok(Err(format!(
            "The log is {} bytes, too long to step through here (at most {MAX_STEP_LOG_BYTES}): \
             see its JSON.",
            json.len()
        )));
    }
    let log = MatchLog::from_json(&json).map_err(|e| WebError::Log {
        id: id.to_owned(),
        message: e.to_string(),
    })?;
    Ok(Ok(Records {
        public: log.public_record(),
        full: full_log_public.then_some(log),
    }))
}

/// The view asked for by `view` and `seat`: the full view by default when the full log is
/// public (`full`), else the public view.
pub(super) fn sight_of(
    view: Option<&String>,
    seat: Option<&String>,
    seats: usize,
    full: bool,
) -> Result<Sight, WebError> {
    let sight = match (view, seat) {
        (Some(_), Some(_)) => {
            return Err(WebError::BadRequest(
                "give view or seat, not both: a seat's view is its own".to_owned(),
            ));
        }
        (Some(v), None) => match one_of("view", v, &["full", "public"])? {
            "full" => Sight::Full,
            _ => Sight::Public,
        },
        (None, Some(s)) => {
            let legal: Vec<String> = (0..seats).map(|i| i.to_string()).collect();
            let legal: Vec<&str> = legal.iter().map(String::as_str).collect();
            Sight::Seat(Seat(one_of("seat", s, &legal)?.parse().unwrap_or(0)))
        }
        (None, None) if full => Sight::Full,
        (None, None) => Sight::Public,
    };
    if !full && sight != Sight::Public {
        return Err(WebError::NotFound(
            "this match's full log is not public yet (a match of a league that has not ended: \
             docs/fair-play.md): only its public view is shown (no hidden die, no seat's view)"
                .to_owned(),
        ));
    }
    Ok(sight)
}

/// The query of a view's page at step `number`.
fn query(number: usize, sight: Sight) -> String {
    match sight {
        Sight::Full => format!("?step={number}&view=full"),
        Sight::Public => format!("?step={number}&view=public"),
        Sight::Seat(s) => format!("?step={number}&seat={}", s.0),
    }
}

pub(super) async fn a_match(
    State(web): State<Web>,
    id: Result<Path<String>, PathRejection>,
    RawQuery(raw): RawQuery,
) -> PageResult {
    let id = match_id(id)?;
    let params = params(raw.as_deref(), &["step", "view", "seat"])?;
    let Some(record) = web.store.get_match(&id).await? else {
        return Err(WebError::NotFound(format!(
            "no match {id:?}: see the matches at /matches"
        )));
    };
    let m = record.summary;
    let game: Game = m.game.parse().unwrap_or(Game::Schocken);
    let mut page = MatchPage {
        title: format!("Match {id}"),
        log_href: format!("{}/log.json", href("/matches/", &id)),
        id: id.clone(),
        game: game_title(game).to_owned(),
        preset: m.preset.clone(),
        status: m.status.as_str(),
        running: m.status == MatchStatus::Running,
        started: time(m.started_at_ms),
        finished: m.finished_at_ms.map(time).unwrap_or_default(),
        abort_reason: m.abort_reason.clone().unwrap_or_default(),
        score_header: if game == Game::Zokken {
            "Net chips"
        } else {
            "Tokens"
        },
        seats: seat_rows(&m),
        no_steps: String::new(),
        sight: String::new(),
        legend: Vec::new(),
        views: Vec::new(),
        table: None,
        lines: Vec::new(),
    };
    if page.running {
        page.no_steps = "The match is running: its throws are shown once it has ended (until \
                         then its dice are hidden from everyone but their players)."
            .to_owned();
        return html(&page);
    }
    match records(&web, &id).await? {
        Err(reason) => page.no_steps = reason,
        Ok(records) => step_page(&mut page, &records, &m, game, &params)?,
    }
    html(&page)
}

/// Fills `page` with the table at the step asked for, in the view asked for.
fn step_page(
    page: &mut MatchPage,
    records: &Records,
    m: &MatchSummary,
    game: Game,
    params: &std::collections::BTreeMap<String, String>,
) -> Result<(), WebError> {
    let names = &m.seat_names;
    let sight = sight_of(
        params.get("view"),
        params.get("seat"),
        names.len(),
        records.full.is_some(),
    )?;
    let broken = |e: match_text::MatchTextError| WebError::Log {
        id: m.id.clone(),
        message: e.to_string(),
    };
    let steps = match (&records.full, sight) {
        (Some(log), Sight::Full | Sight::Seat(_)) => {
            match_text::steps(log, names, sight).map_err(broken)?
        }
        _ => match_text::public_steps(&records.public, names).map_err(broken)?,
    };
    if steps.is_empty() {
        page.no_steps = "The match ended before its first throw.".to_owned();
        return Ok(());
    }
    let total = steps.len();
    let number = match params.get("step") {
        None => 1,
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=total).contains(n))
            .ok_or_else(|| {
                WebError::BadRequest(format!(
                    "step = {s:?} is not legal: it must be a number from 1 to {total}"
                ))
            })?,
    };
    page.views = view_links(number, names, records.full.is_some(), sight);
    page.legend = legend(game);
    page.sight = match sight {
        Sight::Full if game == Game::Zokken => {
            "everything (every die of Zokken is public)".to_owned()
        }
        Sight::Full => "everything: the dice under the cup are shown".to_owned(),
        Sight::Public => "what everybody saw: dice under the cup stay covered".to_owned(),
        Sight::Seat(s) => format!(
            "what {} (seat {}) saw: its own dice under the cup, not the others'",
            names[s.index()],
            s.0
        ),
    };
    page.lines = steps
        .iter()
        .enumerate()
        .map(|(i, s)| LineLink {
            number: i + 1,
            href: query(i + 1, sight),
            text: s.text.clone(),
            heading: s.heading,
        })
        .collect();
    page.table = Some(table_step(&steps, number, sight, names, game));
    Ok(())
}

/// The dice of the table explained, each by an example.
fn legend(game: Game) -> Vec<(String, &'static str)> {
    let die = |face, lie| svg::table_die(DieView { face, lie });
    let mut kinds = vec![
        (die(Some(5), Lie::Rolled), "thrown"),
        (die(Some(5), Lie::Held), "set aside (kept)"),
    ];
    if game != Game::Zokken {
        kinds.extend([
            (die(Some(1), Lie::Turned), "a six turned into a one"),
            (die(None, Lie::Cup), "under the cup, covered"),
            (die(Some(5), Lie::Cup), "under the cup, seen by this view"),
        ]);
    }
    kinds.push((die(None, Lie::Empty), "not thrown yet"));
    kinds
}

fn view_links(number: usize, names: &[String], full: bool, sight: Sight) -> Vec<ViewLink> {
    let mut views = Vec::new();
    let mut add = |label: String, view: Sight| {
        views.push(ViewLink {
            label,
            href: query(number, view),
            current: view == sight,
        });
    };
    if full {
        add("Everything".to_owned(), Sight::Full);
    }
    add("Public".to_owned(), Sight::Public);
    if full {
        for (i, name) in names.iter().enumerate() {
            add(format!("Seat {i}: {name}"), Sight::Seat(Seat(i as u8)));
        }
    }
    views
}

/// The table at step `number` (from 1) of `steps`.
fn table_step(
    steps: &[Step],
    number: usize,
    sight: Sight,
    names: &[String],
    game: Game,
) -> TableStep {
    let step = &steps[number - 1];
    let t: &TableView = &step.table;
    let total = steps.len();
    let seats = t
        .seats
        .iter()
        .enumerate()
        .map(|(i, s)| SeatCard {
            seat: i,
            bot: names.get(i).cloned().unwrap_or_default(),
            dice: s.dice.iter().map(|&d| svg::table_die(d)).collect(),
            throws: s.throws,
            score: match game {
                Game::Zokken => format!("net chips {:+}", s.score),
                Game::Schocken => format!("mats {}", s.score),
                Game::Sjokken => format!("penalty points {}", s.score),
            },
            status: s.status.name(),
            hand: s.hand.map(hand_name).unwrap_or_default(),
            acting: t.actor.is_some_and(|a| a.index() == i),
            viewer: sight == Sight::Seat(Seat(i as u8)),
        })
        .collect();
    TableStep {
        number,
        total,
        text: step.text.clone(),
        round: round_line(t),
        pot: match game {
            Game::Zokken => format!("Pot: {} chips", t.pot),
            Game::Schocken => format!("Middle: {} mats", t.pot),
            Game::Sjokken => format!("Middle: {} penalty points", t.pot),
        },
        events: t.events,
        seats,
        first: query(1, sight),
        prev: query(number.saturating_sub(1).max(1), sight),
        next: query((number + 1).min(total), sight),
        last: query(total, sight),
    }
}

/// "Round 3 (half 1) · throw limit 2", "Opening throw-off".
fn round_line(t: &TableView) -> String {
    if t.round == 0 {
        return "Opening throw-off".to_owned();
    }
    let mut line = format!("Round {}", t.round);
    match t.half {
        0 => {}
        3 => line.push_str(" (the final)"),
        h => line.push_str(&format!(" (half {h})")),
    }
    if let Some(limit) = t.throw_limit {
        line.push_str(&format!(" · throw limit {limit}"));
    }
    line
}
