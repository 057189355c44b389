//! The public record of a match (served while a match's full log is withheld): exactly the
//! public events each seat received, in order, and nothing of the truth behind them.

use knobel_engine::policy::by_name;
use knobel_engine::{Event, LogEntry, Match, RECORD_FORMAT_VERSION, Rules, Seat};

/// Plays a match with random players, collecting every event `apply` gave to the table.
fn play(preset: &str, seed: u64, seats: usize) -> (Match, Vec<Event>) {
    let mut m = Match::new_with_log(Rules::preset(preset).unwrap(), seed, seats).unwrap();
    let mut players: Vec<_> = (0..seats)
        .map(|s| by_name("random", seed ^ s as u64).unwrap())
        .collect();
    for p in &mut players {
        p.begin_match(m.rules());
    }
    let mut told: Vec<Event> = m
        .log()
        .unwrap()
        .entries
        .iter()
        .filter_map(|e| match e {
            LogEntry::Event { event } => Some(*event),
            _ => None,
        })
        .collect();
    let mut legal = Vec::new();
    while !m.is_over() {
        let seat: Seat = m.to_act().iter().next().unwrap();
        let observation = m.observe(seat);
        legal.clear();
        legal.extend(m.legal_actions(seat));
        let action = players[seat.index()].decide(&observation, &legal);
        told.extend_from_slice(m.apply(seat, action).unwrap());
    }
    (m, told)
}

#[test]
fn the_record_is_the_public_events_and_nothing_else() {
    for (preset, seats) in [("schocken", 4), ("sjokken", 3), ("zokken", 2)] {
        for seed in 0..6u64 {
            let (m, told) = play(preset, seed, seats);
            let log = m.log().unwrap();
            let record = log.public_record();
            assert_eq!(record.format_version, RECORD_FORMAT_VERSION);
            assert_eq!((&record.rules, record.seats), (&log.rules, seats as u8));
            assert_eq!(
                record.events, told,
                "{preset} seed {seed}: the events the table got"
            );
            let json: serde_json::Value = serde_json::from_str(&record.to_json()).unwrap();
            let keys: Vec<&str> = json
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(
                keys,
                ["events", "format_version", "rules", "seats"],
                "no seed, no entries"
            );
            // Every hidden die of the truth is hidden in the record until its reveal.
            let hidden = record.events.iter().filter(
                |e| matches!(e, Event::Thrown { dice, .. } if dice.iter().any(Option::is_none)),
            );
            if preset != "zokken" {
                assert!(
                    hidden.count() > 0,
                    "{preset}: a cup or a blind throw in {seed}"
                );
            }
        }
    }
}
