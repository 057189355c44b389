//! Strikes and forfeits: the report, the log, the result and the events all agree.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use knobel_engine::policy::HeuristicPolicy;
use knobel_engine::{Event, ForfeitReason, LogEntry, Rules, Seat, StrikeReason};
use tokio::sync::watch;

use crate::referee::{
    AbsentBot, BotLink, DecisionOutcome, EventBatch, FromSeat, MatchInfo, MatchReport, Player,
    SeatDecisions, TimeControl, ToSeat, run_match,
};

/// What a silent bot received: every event and every message.
#[derive(Default)]
struct Inbox {
    events: Vec<Event>,
    messages: Vec<ToSeat>,
}

/// A bot that reads everything and never answers; `full` refuses every send after the
/// first `n` (a bot whose queue is full).
struct SilentLink {
    inbox: Arc<Mutex<Inbox>>,
    accept: Option<usize>,
}

impl BotLink for SilentLink {
    fn send(&mut self, events: &[Arc<EventBatch>], message: Option<ToSeat>) -> bool {
        if let Some(left) = self.accept.as_mut() {
            if *left == 0 {
                return false;
            }
            *left -= 1;
        }
        let mut inbox = self.inbox.lock().unwrap();
        for batch in events {
            inbox.events.extend_from_slice(batch.events());
        }
        inbox.messages.extend(message);
        true
    }
    fn poll_recv(&mut self, _: &mut Context<'_>) -> Poll<FromSeat> {
        Poll::Pending
    }
    fn release(self: Box<Self>) {}
    fn gone_reason(&self) -> ForfeitReason {
        ForfeitReason::NotReading
    }
}

async fn play(preset: &str, accept: Option<usize>) -> (MatchReport, Arc<Mutex<Inbox>>) {
    let inbox = Arc::new(Mutex::new(Inbox::default()));
    let link = SilentLink {
        inbox: inbox.clone(),
        accept,
    };
    let mut rules = Rules::preset(preset).unwrap();
    if preset == "zokken" {
        rules.set_number("rounds", 5).unwrap();
    }
    let info = Arc::new(MatchInfo {
        match_id: "m".to_owned(),
        preset: preset.to_owned(),
        rules,
        seat_names: vec!["silent".into(), "a".into(), "b".into()],
        seat_bot_ids: vec![Some(1), None, None],
        time_control: TimeControl {
            decision: Duration::from_millis(100),
            time_bank: Duration::from_millis(50),
        },
    });
    let players = vec![
        Player::Bot(Box::new(link)),
        Player::Builtin(Box::new(HeuristicPolicy)),
        Player::Builtin(Box::new(HeuristicPolicy)),
    ];
    let (_stop, shutdown) = watch::channel(false);
    let (report, announcement) = run_match(info, 3, players, shutdown).await.unwrap();
    announcement.send();
    (report, inbox)
}

/// A bot that never answers: three timeouts, each a strike, then it forfeits. The
/// report, the log, the result and the events it received all say so, alike.
#[tokio::test(start_paused = true)]
async fn three_timeouts_forfeit_and_everything_agrees() {
    for preset in knobel_engine::PRESETS {
        let (report, inbox) = play(preset, None).await;
        let outcome = report.outcome.clone().expect("finished");
        assert_eq!(outcome.strikes, [3, 0, 0], "{preset}");
        assert_eq!(outcome.timeouts, [3, 0, 0], "{preset}");
        assert_eq!(outcome.forfeits, [Some(ForfeitReason::Strikes), None, None]);
        assert_eq!(
            outcome.placings[0], 3,
            "{preset}: the forfeited seat is last"
        );
        assert_eq!((report.timeouts, report.forfeits), (3, 1));
        // The metrics' view: three timeouts, each waited for the deadline (the first also
        // the bank), and nothing for the built-in seats.
        let decisions = &report.seats[0];
        assert_eq!(decisions.count(DecisionOutcome::Timeout), 3, "{preset}");
        assert_eq!(decisions.counts.iter().sum::<u64>(), 3, "{preset}");
        let waited: Vec<u64> = decisions
            .seconds
            .iter()
            .map(|s| (s * 1000.0).round() as u64)
            .collect();
        assert_eq!(waited, [150, 100, 100], "{preset}");
        assert_eq!(report.seats[1], SeatDecisions::default());
        assert_eq!(
            report.forfeit_reasons,
            [Some(ForfeitReason::Strikes), None, None]
        );
        let log = &report.log;
        let strikes = log
            .entries
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    LogEntry::Strike {
                        seat: Seat(0),
                        reason: StrikeReason::Timeout
                    }
                )
            })
            .count();
        assert_eq!(strikes, 3, "{preset}");
        assert!(log.entries.contains(&LogEntry::Forfeit {
            seat: Seat(0),
            reason: ForfeitReason::Strikes
        }));
        assert_eq!(log.replay().unwrap().outcome(), Some(outcome.clone()));

        let inbox = inbox.lock().unwrap();
        let Some(ToSeat::Result { outcome: sent }) = inbox.messages.last() else {
            panic!("{preset}: no result: {:?}", inbox.messages.last());
        };
        assert_eq!(sent, &outcome);
        let notices: Vec<_> = inbox
            .messages
            .iter()
            .filter_map(|m| match m {
                ToSeat::Notice(n) => Some((n.strikes, n.forfeited)),
                _ => None,
            })
            .collect();
        assert_eq!(notices, [(1, false), (2, false), (3, true)], "{preset}");
        assert!(inbox.events.contains(&Event::Forfeited {
            seat: Seat(0),
            reason: ForfeitReason::Strikes
        }));
        match inbox.events.last() {
            Some(Event::MatchOver { placings }) => {
                assert_eq!(placings.as_slice(), outcome.placings, "{preset}")
            }
            other => panic!("{preset}: last event {other:?}"),
        }
    }
}

/// A bot whose queue is full forfeits as not reading; one that is gone before the match
/// as absent.
#[tokio::test(start_paused = true)]
async fn a_full_queue_forfeits_as_not_reading() {
    let (report, _) = play("sjokken", Some(1)).await;
    let outcome = report.outcome.unwrap();
    assert_eq!(outcome.forfeits[0], Some(ForfeitReason::NotReading));
    assert_eq!(outcome.placings[0], 3);
    assert_eq!(outcome.strikes, [0, 0, 0]);

    let info = Arc::new(MatchInfo {
        match_id: "m".to_owned(),
        preset: "schocken".to_owned(),
        rules: Rules::preset("schocken").unwrap(),
        seat_names: vec!["a".into(), "gone".into()],
        seat_bot_ids: vec![None, Some(2)],
        time_control: TimeControl::default(),
    });
    let players = vec![
        Player::Builtin(Box::new(HeuristicPolicy)),
        Player::Bot(Box::new(AbsentBot)),
    ];
    let (_stop, shutdown) = watch::channel(false);
    let (report, _) = run_match(info, 5, players, shutdown).await.unwrap();
    let outcome = report.outcome.unwrap();
    assert_eq!(outcome.forfeits, [None, Some(ForfeitReason::Absent)]);
    assert_eq!(outcome.placings, [1, 2]);
}

/// Rules a match cannot be played with (here: one seat, as a stored league match edited by
/// hand might say) are refused before anything is sent, not a panic after the match's start
/// was recorded.
#[tokio::test]
async fn a_match_that_cannot_be_set_up_is_refused() {
    let inbox = Arc::new(Mutex::new(Inbox::default()));
    let link = SilentLink {
        inbox: inbox.clone(),
        accept: None,
    };
    let info = Arc::new(MatchInfo {
        match_id: "m".to_owned(),
        preset: "schocken".to_owned(),
        rules: Rules::preset("schocken").unwrap(),
        seat_names: vec!["alone".into()],
        seat_bot_ids: vec![Some(1)],
        time_control: TimeControl::default(),
    });
    let (_stop, shutdown) = watch::channel(false);
    let refused = run_match(info, 3, vec![Player::Bot(Box::new(link))], shutdown).await;
    let Err(error) = refused else {
        panic!("a match of one seat was played");
    };
    assert!(
        error.to_string().contains("cannot seat 1 players"),
        "{error}"
    );
    let inbox = inbox.lock().unwrap();
    assert!(
        inbox.events.is_empty() && inbox.messages.is_empty(),
        "nothing was sent"
    );
}
