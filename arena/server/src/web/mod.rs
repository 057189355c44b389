//! The web viewer: a live leaderboard and match viewer on an HTTP port of its own
//! (`knobel serve --web-listen`, docs/web.md).
//!
//! Server-rendered HTML (askama templates in `arena/server/templates/`), a stylesheet and a small
//! script embedded in the binary; every page works without the script, which adds live
//! standings (server-sent events) and the step-through of a match. The pages read what the
//! read-only RPCs read, through the same functions (`Leagues::league_standings_within`,
//! `Leagues::leagues`, the store's match listing, `ended_log`), and show nothing they
//! would not: a running match shows its seats and status only, never a die or its seed.
//!
//! This file holds [`serve`], the routes and the error pages; `pages` the pages, `live`
//! the shared broadcaster of the live standings, `query` the validation of query
//! parameters, `svg` the dice and the rating chart, `format` numbers and times.

mod format;
mod listing;
mod live;
mod match_page;
mod pages;
mod query;
mod svg;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tracing::error;

use crate::league::service::Leagues;
use crate::league::snapshot::LeagueSnapshots;
use crate::net::WebListener;
use crate::store::{Store, StoreError};

/// How old a running league's standings may be on a page: they are computed again at most
/// this often, however many pages ask (GetStandings always has the latest). The metrics
/// share them.
pub const STANDINGS_MAX_AGE: std::time::Duration =
    crate::league::service::RUNNING_STANDINGS_MAX_AGE;

/// The stylesheet, embedded.
const STYLE_CSS: &str = include_str!("assets/style.css");
/// The script, embedded.
const APP_JS: &str = include_str!("assets/app.js");

/// What the pages read from.
#[derive(Clone)]
pub struct Web {
    store: Store,
    leagues: Leagues,
    /// The match logs being sent, shared with GetMatchLog and StreamMatchLog.
    logs_in_flight: Arc<Semaphore>,
    /// The page tokens of the match lists (ListMatches's).
    page_tokens: crate::page_token::PageTokens,
    live: Arc<live::Live>,
    /// Set to true when the server shuts down: live streams end.
    stop: Arc<watch::Sender<bool>>,
}

impl Web {
    /// The pages of the leagues and matches of `store`, with `leagues`' live progress; the
    /// live standings follow `snapshots` (the metrics' league snapshot); match logs count
    /// against `logs_in_flight` (GetMatchLog's bound).
    pub fn new(
        store: Store,
        leagues: Leagues,
        snapshots: LeagueSnapshots,
        logs_in_flight: Arc<Semaphore>,
        page_tokens: crate::page_token::PageTokens,
    ) -> Web {
        Web {
            live: Arc::new(live::Live::new(snapshots)),
            store,
            leagues,
            logs_in_flight,
            page_tokens,
            stop: Arc::new(watch::channel(false).0),
        }
    }
}

/// Why a page cannot be shown. Not found and bad input name the value and what is legal;
/// anything else is an internal error (logged with its cause, shown as "internal error").
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// No such league, bot, match or page.
    #[error("{0}")]
    NotFound(String),
    /// A path or query parameter is not legal.
    #[error("{0}")]
    BadRequest(String),
    /// The match is running: its log is not public yet.
    #[error("{0}")]
    Running(String),
    /// The match is of a league that has not ended: its full log is not public yet.
    #[error("{0}")]
    Withheld(String),
    /// Too many match logs are being sent.
    #[error("{0}")]
    Busy(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// A page did not render.
    #[error("rendering a page: {0}")]
    Render(#[from] askama::Error),
    /// A stored match log does not read or replay.
    #[error("match {id}: {message}")]
    Log {
        /// The match.
        id: String,
        /// What is wrong with its log.
        message: String,
    },
}

/// The error page.
#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    title: String,
    message: String,
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let (status, title, message) = match &self {
            WebError::NotFound(m) => (StatusCode::NOT_FOUND, "Not found", m.clone()),
            WebError::BadRequest(m) => (StatusCode::BAD_REQUEST, "Bad request", m.clone()),
            WebError::Running(m) => (StatusCode::CONFLICT, "Match still running", m.clone()),
            WebError::Withheld(m) => (
                StatusCode::CONFLICT,
                "Log withheld until its league ends",
                m.clone(),
            ),
            WebError::Busy(m) => (StatusCode::SERVICE_UNAVAILABLE, "Busy", m.clone()),
            WebError::Store(e) if e.is_unavailable() => {
                error!(error = %chain(&self), "web page failed: the database is unavailable");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Unavailable",
                    "the database is unavailable: retry in a moment".to_owned(),
                )
            }
            WebError::Store(_) | WebError::Render(_) | WebError::Log { .. } => {
                error!(error = %chain(&self), "web page failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal error",
                    "internal error".to_owned(),
                )
            }
        };
        let page = ErrorPage {
            title: title.to_owned(),
            message,
        };
        match page.render() {
            Ok(html) => (status, Html(html)).into_response(),
            Err(e) => {
                error!(error = %e, "the error page did not render");
                (status, "internal error").into_response()
            }
        }
    }
}

/// `error` and its sources, joined by ": ".
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A rendered page, or the error page.
type PageResult = Result<Response, WebError>;

/// `page` rendered as HTML.
fn html(page: &impl Template) -> PageResult {
    Ok(Html(page.render()?).into_response())
}

/// The routes of the web viewer.
pub fn router(web: Web) -> Router {
    Router::new()
        .route("/", get(pages::leagues))
        .route("/leagues/{league}", get(pages::standings))
        .route("/leagues/{league}/events", get(pages::events))
        .route("/leagues/{league}/ratings", get(pages::ratings))
        .route("/bots", get(listing::bots))
        .route("/bots/{bot}", get(pages::bot))
        .route("/matches", get(listing::matches))
        .route("/matches/{id}", get(match_page::a_match))
        .route("/matches/{id}/log.json", get(pages::log_json))
        .route(
            "/static/style.css",
            get(|| asset(STYLE_CSS, "text/css; charset=utf-8")),
        )
        .route(
            "/static/app.js",
            get(|| asset(APP_JS, "text/javascript; charset=utf-8")),
        )
        .fallback(|| async { WebError::NotFound("no such page: see the leagues at /".into()) })
        .layer(axum::middleware::map_response(security_headers))
        .with_state(web)
}

async fn asset(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}

/// Every response: scripts and styles from this server only, no framing, no sniffing.
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
             connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// Serves the web viewer on `listener` (connections bounded by [`WebListener`]) until
/// `shutdown` resolves; live streams end then too.
pub async fn serve(
    web: Web,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let stop = web.stop.clone();
    let ticker = tokio::spawn(web.live.clone().run(stop.subscribe()));
    let result = axum::serve(WebListener::new(listener), router(web))
        .with_graceful_shutdown(async move {
            shutdown.await;
            let _ = stop.send(true);
        })
        .await;
    ticker.abort();
    result
}
