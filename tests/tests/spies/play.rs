//! A spy's Play stream: a normal league player (the engine's heuristic decides every move)
//! that keeps a [`TableView`] of each match, tells its [`Intel`] every die it sees, and at
//! the start of every round writes down a prediction of every die of that round it has not
//! seen, before any of them is thrown.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use knobel_e2e::authorized;
use knobel_engine::policy::{HeuristicPolicy, Policy};
use knobel_engine::{Action, Event, Game, Observation, Seat};
use knobel_proto::v1 as pb;
use pb::arena_message::Kind;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::ledger::Ledger;
use super::table::{TableView, key};

/// What a spy knows beyond its table, and how it uses it.
pub trait Intel: Send + Sync {
    /// The opening throw-off's first attempt is complete (`table.throw_off()` is `Some`).
    fn at_throw_off(&self, table: &TableView);
    /// The seat saw the die at `key` showing `face` (for the first time in this match).
    fn saw(&self, table: &TableView, key: knobel_engine::DiceKey, face: u8);
    /// The spy's informed prediction of the die at `key`, if it has one.
    fn predict(&self, table: &TableView, key: knobel_engine::DiceKey) -> Option<u8>;
}

/// One Play stream of a spy, as the bot registered with `token`.
pub struct Stream {
    /// The arena's URL.
    pub url: String,
    /// The spy's bot token.
    pub token: String,
    /// What it knows.
    pub intel: Arc<dyn Intel>,
    /// Where it writes its predictions.
    pub ledger: Arc<Mutex<Ledger>>,
}

impl Stream {
    /// Plays league matches until the arena ends the stream or the task is aborted.
    pub async fn play(self) {
        let channel = tonic::transport::Endpoint::from_shared(self.url.clone())
            .expect("valid url")
            .connect()
            .await
            .expect("connect to the arena");
        let mut client = pb::arena_client::ArenaClient::new(channel);
        let (tx, rx) = mpsc::channel(16);
        send(&tx, hello()).await;
        let mut inbound = client
            .play(authorized(ReceiverStream::new(rx), &self.token))
            .await
            .expect("play")
            .into_inner();
        let mut table = None;
        let mut policy = HeuristicPolicy;
        while let Ok(Some(message)) = inbound.message().await {
            if let Some(Kind::MatchStart(start)) = &message.kind {
                table = Some(table_of(start));
            }
            let Some(table) = table.as_mut() else {
                continue;
            };
            for event in &message.events {
                let event = Event::try_from(event).expect("a valid event");
                self.take_in(table, &event);
            }
            if let Some(Kind::DecisionRequest(request)) = message.kind {
                let action = self.decide(table, &mut policy, &request);
                let decision = pb::Decision {
                    request_id: request.request_id,
                    action: Some(pb::Action::from(action)),
                };
                if !send(&tx, pb::bot_message::Kind::Decision(decision)).await {
                    return;
                }
            }
        }
    }

    /// One public event: first the predictions of a round that starts, then the dice it
    /// shows, then (once the throw-off is in) the spy's look at the throw-off.
    fn take_in(&self, table: &mut TableView, event: &Event) {
        if let Event::RoundStarted { round, seats, .. } = *event {
            self.predict_round(table, round, seats.iter());
        }
        let had_throw_off = table.throw_off().is_some();
        for (key, face) in table.apply(event) {
            self.intel.saw(table, key, face);
        }
        if !had_throw_off && table.throw_off().is_some() {
            self.intel.at_throw_off(table);
        }
    }

    /// Writes down every die of `round` of `seats` (three throws, three slots) that the
    /// spy has not seen: informed where its intel has a prediction, else guessed.
    fn predict_round(&self, table: &TableView, round: u32, seats: impl Iterator<Item = Seat>) {
        let mut ledger = self.ledger.lock().unwrap();
        for seat in seats {
            for throw in 1..=3 {
                for slot in 0..3 {
                    let key = key(seat, round, throw, slot);
                    if !table.has_seen(&key) {
                        let informed = self.intel.predict(table, key);
                        ledger.predict(&table.match_id, key, informed, seat == table.me);
                    }
                }
            }
        }
    }

    /// The heuristic's move, after noting the dice the observation shows.
    fn decide(
        &self,
        table: &mut TableView,
        policy: &mut HeuristicPolicy,
        request: &pb::DecisionRequest,
    ) -> Action {
        let observation = request.observation.as_ref().expect("an observation");
        let observation = Observation::try_from(observation).expect("a valid observation");
        for (key, face) in table.observe(&observation) {
            self.intel.saw(table, key, face);
        }
        let legal: Vec<Action> = request
            .legal_actions
            .iter()
            .map(|action| Action::try_from(action).expect("a valid action"))
            .collect();
        policy.decide(&observation, &legal)
    }
}

fn hello() -> pb::bot_message::Kind {
    pb::bot_message::Kind::Hello(pb::Hello {
        name: "spy".into(),
        games: vec![pb::Game::Schocken as i32, pb::Game::Sjokken as i32],
        client_version: "fair-play e2e".into(),
        preset: None,
        max_matches: 0,
    })
}

/// Sends one message; false if the stream is gone (the arena ended it).
async fn send(tx: &mpsc::Sender<pb::BotMessage>, kind: pb::bot_message::Kind) -> bool {
    let sent = tokio::time::timeout(
        Duration::from_secs(30),
        tx.send(pb::BotMessage { kind: Some(kind) }),
    )
    .await;
    matches!(sent, Ok(Ok(())))
}

fn table_of(start: &pb::MatchStart) -> TableView {
    let game = pb::Game::try_from(start.game).expect("a known game");
    let game = Game::try_from(game).expect("a game");
    TableView::new(
        start.match_id.clone(),
        game,
        start.seats as u8,
        Seat(start.your_seat as u8),
    )
}
