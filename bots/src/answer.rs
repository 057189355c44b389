//! The answers of a [`BotPolicy`]: the policy's action for every decision request, or,
//! misbehaving as configured, what the mode calls for.

use knobel_engine::{Action, Observation};
use knobel_proto::v1 as pb;
use tracing::warn;

use crate::codec::Outgoing;
use crate::misbehave::{self, Misbehave};
use crate::policy::BotPolicy;
use crate::session::{Responder, Step};

/// Answers decision requests with a policy (see [`crate::Bot`]).
pub(crate) struct PolicyResponder<P> {
    policy: P,
    misbehave: Option<Misbehave>,
    /// Decisions answered over the whole run.
    answered: u64,
    /// Whether a once-per-run misbehaviour (disconnect, garbage, oversized) has happened.
    misbehaved: bool,
    /// Which illegal kind to try next.
    rotation: usize,
}

impl<P: BotPolicy> PolicyResponder<P> {
    /// Answers with `policy`, misbehaving as `misbehave` says.
    pub(crate) fn new(policy: P, misbehave: Option<Misbehave>) -> PolicyResponder<P> {
        PolicyResponder {
            policy,
            misbehave,
            answered: 0,
            misbehaved: false,
            rotation: 0,
        }
    }

    /// The policy's answer to `request` as a wire action: the request's default action
    /// when the observation cannot be read or the policy picks an action that is not legal.
    fn decide(&mut self, request: &pb::DecisionRequest) -> (pb::Action, Vec<Action>) {
        let fallback = request
            .default_action
            .clone()
            .or_else(|| request.legal_actions.first().cloned())
            .unwrap_or_else(|| Action::STOP.into());
        let legal: Vec<Action> = request
            .legal_actions
            .iter()
            .filter_map(|a| Action::try_from(a).ok())
            .collect();
        let observation = match request.observation.as_ref() {
            Some(observation) => Observation::try_from(observation),
            None => {
                warn!(
                    request_id = request.request_id,
                    "a decision request without an observation; sending the default action"
                );
                return (fallback, legal);
            }
        };
        let action = match observation {
            Ok(observation) => {
                let action = self.policy.decide(&observation, &legal);
                if legal.contains(&action) {
                    action.into()
                } else {
                    warn!(%action, "the policy chose an action that is not legal; sending the default action");
                    fallback
                }
            }
            Err(error) => {
                warn!(error = %error, "cannot read the observation; sending the default action");
                fallback
            }
        };
        (action, legal)
    }

    /// What to send for `request`, misbehaving as configured.
    fn answer(&mut self, request: &pb::DecisionRequest) -> Vec<Step> {
        let id = request.request_id;
        let decision = |request_id: u64, action: pb::Action| {
            Outgoing::from(pb::bot_message::Kind::Decision(pb::Decision {
                request_id,
                action: Some(action),
            }))
        };
        let once = !self.misbehaved;
        let steps = match self.misbehave {
            Some(Misbehave::NeverAnswer) => Vec::new(),
            Some(Misbehave::DisconnectAfter(n)) if once && self.answered >= u64::from(n) => {
                self.misbehaved = true;
                vec![Step::Drop]
            }
            Some(Misbehave::Garbage) if once => {
                self.misbehaved = true;
                vec![Step::Send(Outgoing::Raw(misbehave::GARBAGE.to_vec()))]
            }
            Some(Misbehave::Oversized) if once => {
                self.misbehaved = true;
                let padded = pb::Action {
                    kind: Some(pb::action::Kind::Reroll(pb::Reroll {
                        dice: vec![0; misbehave::OVERSIZED_SLOTS],
                        turn: Vec::new(),
                    })),
                };
                vec![Step::Send(decision(id, padded))]
            }
            Some(Misbehave::Illegal) => {
                let (action, legal) = self.decide(request);
                let illegal = misbehave::illegal_action(&legal, self.rotation);
                self.rotation += 1;
                vec![Step::Send(decision(
                    id,
                    illegal.map_or(action, pb::Action::from),
                ))]
            }
            Some(Misbehave::Late(delay)) => {
                let (action, _) = self.decide(request);
                vec![Step::SendAfter(delay, decision(id, action))]
            }
            Some(Misbehave::Stale) => {
                let (action, _) = self.decide(request);
                vec![
                    Step::Send(decision(id.wrapping_sub(1), action.clone())),
                    Step::Send(decision(id, action)),
                ]
            }
            _ => {
                let (action, _) = self.decide(request);
                vec![Step::Send(decision(id, action))]
            }
        };
        if steps
            .iter()
            .any(|s| matches!(s, Step::Send(_) | Step::SendAfter(..)))
        {
            self.answered += 1;
        }
        steps
    }
}

impl<P: BotPolicy> Responder for PolicyResponder<P> {
    fn raw_stream(&self) -> bool {
        matches!(self.misbehave, Some(Misbehave::Garbage)) && !self.misbehaved
    }

    fn on_message(&mut self, message: &pb::ArenaMessage) -> Vec<Step> {
        match &message.kind {
            Some(pb::arena_message::Kind::DecisionRequest(request)) => self.answer(request),
            Some(pb::arena_message::Kind::MatchStart(start)) => {
                // The policy learns the match's rules (the expert plans with them).
                if let Some(rules) = crate::session::start_rules(start) {
                    self.policy.begin_match(&rules);
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}
