//! Public events reach every seat in time, also while another seat thinks.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use knobel_engine::Rules;
use knobel_engine::policy::HeuristicPolicy;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::referee::{
    BotLink, EVENTS_MAX_DELAY, EventBatch, FromSeat, MatchInfo, Player, TimeControl, ToSeat,
    run_match,
};

/// What a fake bot received: when, how many events, and the message.
type Received = Arc<Mutex<Vec<(Instant, usize, Option<ToSeat>)>>>;

/// A bot link over channels; the test plays the bot.
struct FakeLink {
    received: Received,
    to_bot: mpsc::UnboundedSender<ToSeat>,
    answers: mpsc::UnboundedReceiver<FromSeat>,
}

impl BotLink for FakeLink {
    fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool {
        let count = events.iter().map(|batch| batch.events().len()).sum();
        let record = (Instant::now(), count, message.clone());
        self.received.lock().unwrap().push(record);
        match message {
            Some(message) => self.to_bot.send(message).is_ok(),
            None => true,
        }
    }
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<FromSeat> {
        self.answers
            .poll_recv(cx)
            .map(|answer| answer.unwrap_or(FromSeat::Disconnected))
    }
    fn release(self: Box<Self>) {}
}

/// A bot that answers every request with its default action after `think`, and notes
/// when it answered.
fn fake_bot(think: Duration, answered: Arc<Mutex<Vec<Instant>>>) -> (Player, Received) {
    let received = Received::default();
    let (to_bot, mut requests) = mpsc::unbounded_channel();
    let (answer, answers) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = requests.recv().await {
            if let ToSeat::Request(request) = message {
                tokio::time::sleep(think).await;
                answered.lock().unwrap().push(Instant::now());
                let decision = FromSeat::Decision {
                    request_id: request.request_id,
                    action: Ok(request.default_action),
                };
                if answer.send(decision).is_err() {
                    return;
                }
            }
        }
    });
    let link = FakeLink {
        received: received.clone(),
        to_bot,
        answers,
    };
    (Player::Bot(Box::new(link)), received)
}

/// Every event reaches every bot within [`EVENTS_MAX_DELAY`], also while another seat
/// thinks; events never come after the request they preceded.
#[tokio::test(start_paused = true)]
async fn events_reach_waiting_seats_within_the_max_delay() {
    let answered = Arc::new(Mutex::new(Vec::new()));
    let (slow, _) = fake_bot(Duration::from_millis(300), answered.clone());
    let (fast, fast_received) = fake_bot(Duration::ZERO, answered.clone());
    let info = Arc::new(MatchInfo {
        match_id: "m".to_owned(),
        preset: "schocken".to_owned(),
        rules: Rules::preset("schocken").unwrap(),
        seat_names: vec!["slow".into(), "fast".into(), "builtin".into()],
        seat_bot_ids: vec![Some(1), Some(2), None],
        time_control: TimeControl::default(),
    });
    let players = vec![slow, fast, Player::Builtin(Box::new(HeuristicPolicy))];
    let (_stop, shutdown) = watch::channel(false);
    let (report, announcement) = run_match(info, 11, players, shutdown).await.unwrap();
    announcement.send();
    assert!(report.outcome.is_some());
    assert_eq!(report.timeouts, 0);

    let received = fast_received.lock().unwrap();
    let answered = answered.lock().unwrap();
    assert!(answered.len() > 10);
    // Every action of a bot makes events: each must reach the fast bot within the delay.
    for &at in answered.iter() {
        assert!(
            received
                .iter()
                .any(|&(t, events, _)| events > 0 && t >= at && t <= at + EVENTS_MAX_DELAY),
            "events of the action at {at:?} did not arrive within {EVENTS_MAX_DELAY:?}"
        );
    }
    // Some of them came on their own, while the slow seat was thinking.
    assert!(
        received
            .iter()
            .any(|(_, events, message)| *events > 0 && message.is_none())
    );
}
