//! Engine to wire (what the arena sends, and what a Rust bot sends back; cannot fail): the
//! `From` impls for engine values and the builders of the arena's messages
//! ([`match_start`], [`decision_request`], [`arena_message`], [`match_result`]). Events are
//! in [`events`].

use std::collections::HashMap;

use knobel_engine::{
    Action, DieMask, Event, ForfeitReason, Game, Hand, Match, Observation, Outcome, Rules, Seat,
    Seats, ShakeDecision, ShakeObservation, TurnView, ZokkenObservation, ZokkenPhase,
    ZokkenSeatStatus, ZokkenSeatView,
};

use super::{BotDecision, BotHello};
use crate::v1 as pb;

mod events;

// ---------------------------------------------------------------------------------------
// Small values
// ---------------------------------------------------------------------------------------

/// A set of seats as a wire list of seat numbers, ascending.
pub fn seats_to_wire(seats: Seats) -> Vec<u32> {
    seats.iter().map(|s| u32::from(s.0)).collect()
}

/// A set of die slots as a wire list of slots, ascending.
pub fn mask_to_wire(mask: DieMask) -> Vec<u32> {
    mask.slots().map(|s| s as u32).collect()
}

pub(crate) fn seat_list(seats: &[Seat]) -> Vec<u32> {
    seats.iter().map(|s| u32::from(s.0)).collect()
}

pub(crate) fn dice_to_wire(dice: [u8; 3]) -> Vec<u32> {
    dice.iter().map(|&d| u32::from(d)).collect()
}

pub(crate) fn dice_view_to_wire(dice: [Option<u8>; 3]) -> Vec<pb::Die> {
    dice.into_iter().map(pb::Die::from).collect()
}

impl From<Option<u8>> for pb::Die {
    fn from(value: Option<u8>) -> pb::Die {
        pb::Die {
            value: value.map(u32::from),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Game and Action
// ---------------------------------------------------------------------------------------

impl From<Game> for pb::Game {
    fn from(game: Game) -> pb::Game {
        match game {
            Game::Schocken => pb::Game::Schocken,
            Game::Sjokken => pb::Game::Sjokken,
            Game::Zokken => pb::Game::Zokken,
        }
    }
}

impl From<Action> for pb::Action {
    fn from(action: Action) -> pb::Action {
        use pb::action::Kind;
        let kind = match action {
            Action::Stop { turn } => Kind::Stop(pb::Stop {
                turn: mask_to_wire(turn),
            }),
            Action::Reroll { dice, turn } => Kind::Reroll(pb::Reroll {
                dice: mask_to_wire(dice),
                turn: mask_to_wire(turn),
            }),
            Action::Check => Kind::Check(pb::Check {}),
            Action::Bet => Kind::Bet(pb::Bet {}),
            Action::Call => Kind::Call(pb::Call {}),
            Action::Raise => Kind::Raise(pb::Raise {}),
            Action::Fold => Kind::Fold(pb::Fold {}),
        };
        pb::Action { kind: Some(kind) }
    }
}

// ---------------------------------------------------------------------------------------
// What a bot sends: Hello and Decision
// ---------------------------------------------------------------------------------------

impl From<&BotHello> for pb::Hello {
    fn from(hello: &BotHello) -> pb::Hello {
        pb::Hello {
            name: hello.name.clone(),
            games: hello
                .games
                .iter()
                .map(|&g| pb::Game::from(g) as i32)
                .collect(),
            client_version: hello.client_version.clone(),
            preset: hello.preset.clone(),
            max_matches: hello.max_matches.unwrap_or(0),
        }
    }
}

impl From<BotDecision> for pb::Decision {
    fn from(decision: BotDecision) -> pb::Decision {
        pb::Decision {
            request_id: decision.request_id,
            action: Some(decision.action.into()),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Hand
// ---------------------------------------------------------------------------------------

impl From<Hand> for pb::Hand {
    fn from(hand: Hand) -> pb::Hand {
        use pb::HandKind as K;
        let one = |x: u8| vec![u32::from(x)];
        let (kind, values) = match hand {
            Hand::SchockOut => (K::SchockOut, vec![]),
            Hand::Jule => (K::Jule, vec![]),
            Hand::Schock(x) => (K::Schock, one(x)),
            Hand::General(x) => (K::General, one(x)),
            Hand::Straight(x) => (K::Straight, one(x)),
            Hand::Number(n) => (K::Number, vec![u32::from(n)]),
            Hand::Sjok1 => (K::Sjok1, vec![]),
            Hand::Sjok(x) => (K::Sjok, one(x)),
            Hand::Harde(x) => (K::Harde, one(x)),
            Hand::Straat(x) => (K::Straat, one(x)),
            Hand::Hoog(sum) => (K::Hoog, one(sum)),
            Hand::Kelm => (K::Kelm, vec![]),
            Hand::Tinn(d) => (K::Tinn, dice_to_wire(d)),
            Hand::Strasse(x) => (K::Strasse, one(x)),
            Hand::Plus(d) => (K::Plus, dice_to_wire(d)),
            Hand::Pasch(d) => (K::Pasch, dice_to_wire(d)),
            Hand::Sonst(d) => (K::Sonst, dice_to_wire(d)),
        };
        pb::Hand {
            kind: kind as i32,
            values,
            name: hand.to_string(),
            strength: hand.strength(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Observation
// ---------------------------------------------------------------------------------------

impl From<&TurnView> for pb::TurnView {
    fn from(turn: &TurnView) -> pb::TurnView {
        pb::TurnView {
            dice: dice_view_to_wire(turn.dice),
            throws: turn.throws.into(),
            rolled: mask_to_wire(turn.rolled),
            turned: mask_to_wire(turn.turned),
            done: turn.done,
            hand: turn.hand.map(pb::Hand::from),
        }
    }
}

impl From<&ShakeDecision> for pb::ShakeDecision {
    fn from(d: &ShakeDecision) -> pb::ShakeDecision {
        pb::ShakeDecision {
            max_throws: d.max_throws.into(),
            can_reroll: d.can_reroll,
            turnable: mask_to_wire(d.turnable),
            max_turn: d.max_turn.into(),
            turn_needs_reroll: d.turn_needs_reroll,
            locked: mask_to_wire(d.locked),
        }
    }
}

impl From<&ShakeObservation> for pb::ShakeObservation {
    fn from(o: &ShakeObservation) -> pb::ShakeObservation {
        pb::ShakeObservation {
            game: pb::Game::from(o.game) as i32,
            seat: o.seat.0.into(),
            seats: o.seats.into(),
            half: o.half.into(),
            round: o.round,
            pot: o.pot.into(),
            removed: o.removed.into(),
            tokens: o.tokens.iter().map(|&t| u32::from(t)).collect(),
            in_play: seats_to_wire(o.in_play),
            half_losers: seat_list(&o.half_losers),
            starter: o.starter.0.into(),
            throw_limit: o.throw_limit.map(u32::from),
            to_act: o.to_act.map(|s| u32::from(s.0)),
            turn_order: seat_list(&o.turn_order),
            turns: o.turns.iter().map(pb::TurnView::from).collect(),
            decision: o.decision.as_ref().map(pb::ShakeDecision::from),
        }
    }
}

impl From<ZokkenPhase> for pb::ZokkenPhase {
    fn from(phase: ZokkenPhase) -> pb::ZokkenPhase {
        let (kind, number) = match phase {
            ZokkenPhase::Betting(n) => (pb::ZokkenPhaseKind::Betting, n),
            ZokkenPhase::Choosing(n) => (pb::ZokkenPhaseKind::Choosing, n),
            ZokkenPhase::Over => (pb::ZokkenPhaseKind::Over, 0),
        };
        pb::ZokkenPhase {
            kind: kind as i32,
            number: number.into(),
        }
    }
}

impl From<ZokkenSeatStatus> for pb::ZokkenSeatStatus {
    fn from(status: ZokkenSeatStatus) -> pb::ZokkenSeatStatus {
        match status {
            ZokkenSeatStatus::InRound => pb::ZokkenSeatStatus::InRound,
            ZokkenSeatStatus::Folded => pb::ZokkenSeatStatus::Folded,
            ZokkenSeatStatus::SittingOut => pb::ZokkenSeatStatus::SittingOut,
        }
    }
}

impl From<&ZokkenSeatView> for pb::ZokkenSeatView {
    fn from(v: &ZokkenSeatView) -> pb::ZokkenSeatView {
        pb::ZokkenSeatView {
            dice: dice_to_wire(v.dice),
            figure: Some(v.figure.into()),
            status: pb::ZokkenSeatStatus::from(v.status) as i32,
            put_in: v.put_in,
            staked: v.staked,
            net: v.net,
        }
    }
}

impl From<&ZokkenObservation> for pb::ZokkenObservation {
    fn from(o: &ZokkenObservation) -> pb::ZokkenObservation {
        pb::ZokkenObservation {
            seat: o.seat.0.into(),
            round: o.round,
            rounds: o.rounds,
            replay: o.replay.into(),
            phase: Some(o.phase.into()),
            seats: o.seats.iter().map(pb::ZokkenSeatView::from).collect(),
            pot: o.pot,
            current_bet: o.current_bet,
            to_call: o.to_call,
            bets: o.bets.into(),
            max_bets: o.max_bets.into(),
            bet_size: o.bet_size,
            to_act: seats_to_wire(o.to_act),
            chosen: o.chosen,
        }
    }
}

impl From<&Observation> for pb::Observation {
    fn from(o: &Observation) -> pb::Observation {
        use pb::observation::Kind;
        let kind = match o {
            Observation::Shake(s) => Kind::Shake(s.into()),
            Observation::Zokken(z) => Kind::Zokken(z.into()),
        };
        pb::Observation { kind: Some(kind) }
    }
}

impl From<Observation> for pb::Observation {
    fn from(o: Observation) -> pb::Observation {
        pb::Observation::from(&o)
    }
}

// ---------------------------------------------------------------------------------------
// Outcome and match messages
// ---------------------------------------------------------------------------------------

impl From<ForfeitReason> for pb::ForfeitReason {
    fn from(reason: ForfeitReason) -> pb::ForfeitReason {
        match reason {
            ForfeitReason::Strikes => pb::ForfeitReason::Strikes,
            ForfeitReason::Disconnected => pb::ForfeitReason::Disconnected,
            ForfeitReason::NotReading => pb::ForfeitReason::NotReading,
            ForfeitReason::Revoked => pb::ForfeitReason::Revoked,
            ForfeitReason::Absent => pb::ForfeitReason::Absent,
        }
    }
}

/// The wire form of an outcome. The proto leaves empty the lists a game does not have
/// (the engine holds zeros there): tokens in Zokken, halves lost in Sjokken and Zokken,
/// chips in Schocken and Sjokken. The game is told by the outcome itself, by the engine's
/// invariants: only Schocken and Sjokken have a loser, and only in Schocken does the loser
/// hold lost halves (it lost at least the last half).
impl From<&Outcome> for pb::Outcome {
    fn from(o: &Outcome) -> pb::Outcome {
        let shake = o.loser.is_some();
        let schocken = shake && o.halves_lost.iter().any(|&h| h > 0);
        pb::Outcome {
            placings: o.placings.iter().map(|&p| u32::from(p)).collect(),
            loser: o.loser.map(|s| u32::from(s.0)),
            tokens: if shake { o.tokens.clone() } else { Vec::new() },
            halves_lost: if schocken {
                o.halves_lost.iter().map(|&h| u32::from(h)).collect()
            } else {
                Vec::new()
            },
            chips: if shake { Vec::new() } else { o.chips.clone() },
            strikes: o.strikes.clone(),
            timeouts: o.timeouts.clone(),
            forfeits: o
                .forfeits
                .iter()
                .map(|f| f.map_or(pb::ForfeitReason::None, pb::ForfeitReason::from) as i32)
                .collect(),
        }
    }
}

impl From<Outcome> for pb::Outcome {
    fn from(o: Outcome) -> pb::Outcome {
        pb::Outcome::from(&o)
    }
}

/// The rules' numeric settings by name, as [`pb::MatchStart::settings`] carries them.
pub fn rules_settings(rules: &Rules) -> HashMap<String, u32> {
    rules
        .numbers()
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
}

/// The [`pb::MatchStart`] for the bot in `your_seat` of a match of `rules` (started from
/// the preset `preset`), with `seat_names` indexed by seat.
pub fn match_start(
    match_id: &str,
    preset: &str,
    rules: &Rules,
    seat_names: &[String],
    your_seat: Seat,
    time_control: pb::TimeControl,
) -> pb::MatchStart {
    pb::MatchStart {
        match_id: match_id.to_owned(),
        game: pb::Game::from(rules.game()) as i32,
        preset: preset.to_owned(),
        variants: rules.variants_on().into_iter().map(str::to_owned).collect(),
        settings: rules_settings(rules),
        seats: seat_names.len() as u32,
        seat_names: seat_names.to_vec(),
        your_seat: your_seat.0.into(),
        time_control: Some(time_control),
    }
}

/// The [`pb::DecisionRequest`] for `seat` in `m` now: its observation, legal actions and
/// default action. `None` when `seat` need not act.
pub fn decision_request(
    m: &Match,
    seat: Seat,
    request_id: u64,
    deadline_ms: u32,
    time_bank_ms: u32,
) -> Option<pb::DecisionRequest> {
    let default_action = m.default_action(seat)?;
    Some(decision_request_from(
        request_id,
        &m.observe(seat),
        &m.legal_actions(seat),
        default_action,
        deadline_ms,
        time_bank_ms,
    ))
}

/// The [`pb::DecisionRequest`] made of its parts: what the seat sees, its legal actions,
/// the action applied if it does not answer in time, and its time.
pub fn decision_request_from(
    request_id: u64,
    observation: &Observation,
    legal_actions: &[Action],
    default_action: Action,
    deadline_ms: u32,
    time_bank_ms: u32,
) -> pb::DecisionRequest {
    pb::DecisionRequest {
        request_id,
        observation: Some(observation.into()),
        legal_actions: legal_actions
            .iter()
            .copied()
            .map(pb::Action::from)
            .collect(),
        default_action: Some(default_action.into()),
        deadline_ms,
        time_bank_ms,
    }
}

/// The [`pb::ArenaMessage`] carrying `events` (oldest first) and then `kind`, if any.
pub fn arena_message(events: &[Event], kind: Option<pb::arena_message::Kind>) -> pb::ArenaMessage {
    pb::ArenaMessage {
        events: events.iter().map(pb::Event::from).collect(),
        kind,
    }
}

/// The [`pb::MatchResult`] for the bot in `your_seat`: `FINISHED` with the outcome, or
/// `ABORTED` when there is none.
pub fn match_result(match_id: &str, outcome: Option<&Outcome>, your_seat: Seat) -> pb::MatchResult {
    let your_place = outcome
        .and_then(|o| o.placings.get(your_seat.index()))
        .map_or(0, |&p| u32::from(p));
    pb::MatchResult {
        match_id: match_id.to_owned(),
        status: if outcome.is_some() {
            pb::MatchStatus::Finished
        } else {
            pb::MatchStatus::Aborted
        } as i32,
        outcome: outcome.map(pb::Outcome::from),
        your_seat: your_seat.0.into(),
        your_place,
    }
}

/// Wraps a message kind into an [`pb::ArenaMessage`].
impl From<pb::arena_message::Kind> for pb::ArenaMessage {
    fn from(kind: pb::arena_message::Kind) -> pb::ArenaMessage {
        pb::ArenaMessage {
            events: Vec::new(),
            kind: Some(kind),
        }
    }
}

/// Wraps a message kind into a [`pb::BotMessage`].
impl From<pb::bot_message::Kind> for pb::BotMessage {
    fn from(kind: pb::bot_message::Kind) -> pb::BotMessage {
        pb::BotMessage { kind: Some(kind) }
    }
}
