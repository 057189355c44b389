use super::WebError;
use super::format::{bounds, percent, signed, time};
use super::query::{one_of, params};
use super::svg::{escape, rating_chart, table_die};
use crate::league::standings::Interval;
use crate::match_text::{DieView, Lie};

#[test]
fn query_parameters_are_checked_by_name_and_once() {
    let p = params(Some("a=x&b=y%20z"), &["a", "b"]).unwrap();
    assert_eq!(p["b"], "y z");
    let err = params(Some("c=1"), &["a", "b"]).unwrap_err();
    assert!(
        matches!(&err, WebError::BadRequest(m) if m == "unknown query parameter \"c\": this page takes a, b"),
        "{err}"
    );
    let err = params(Some("a=1&a=2"), &["a"]).unwrap_err();
    assert!(err.to_string().contains("given twice"), "{err}");
    let err = params(Some("x"), &[]).unwrap_err();
    assert!(
        err.to_string().contains("takes no query parameters"),
        "{err}"
    );
    let err = one_of("game", "<b>", &["overall", "zokken"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "game = \"<b>\" is not legal: it must be one of overall, zokken"
    );
}

#[test]
fn text_in_svg_is_escaped_and_dice_are_numbers_only() {
    assert_eq!(
        escape("<script>\"a\" & 'b'</script>"),
        "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
    );
    let die = |face, lie| table_die(DieView { face, lie });
    let svg: String = [(6, Lie::Rolled), (1, Lie::Turned), (9, Lie::Held)]
        .map(|(face, lie)| die(Some(face), lie))
        .concat();
    assert_eq!(svg.matches("<svg").count(), 3);
    assert_eq!(svg.matches("<circle").count(), 7, "six pips and one");
    assert!(svg.contains(">9</text>"), "a Miwin face shows its number");
    // A die under the cup: covered (no face at all) unless the view may see it.
    let covered = die(None, Lie::Cup);
    assert!(!covered.contains("data-face") && !covered.contains("<circle"));
    assert!(covered.contains("aria-label=\"under the cup, covered\""));
    let seen = die(Some(5), Lie::Cup);
    assert!(seen.contains("data-face=\"5\"") && seen.contains("aria-label=\"5, under the cup\""));
    assert!(die(None, Lie::Empty).contains("data-lie=\"empty\""));
}

#[test]
fn numbers_and_times_read_well() {
    assert_eq!(time(0), "1970-01-01 00:00:00 UTC");
    assert_eq!(time(1_796_218_127_000), "2026-12-02 13:28:47 UTC");
    assert_eq!(time(951_782_400_000), "2000-02-29 00:00:00 UTC");
    let i = Interval {
        estimate: 0.125,
        low: 0.08,
        high: 0.2,
    };
    assert_eq!(percent(i), "12.5% (8.0–20.0)");
    assert_eq!(signed(i, 100.0), "+12.5 (+8.0…+20.0)");
    assert_eq!(signed(Interval::mean(&[3.0]), 1.0), "+3.0 (−∞…+∞)");
    let sequence = |low, high| crate::league::confidence::Bounds { low, high };
    assert_eq!(bounds(sequence(0.01, 0.2), 100.0), "+1.0…+20.0");
    assert_eq!(bounds(sequence(f64::NEG_INFINITY, 0.2), 100.0), "−∞…+20.0");
    let unbounded = sequence(f64::NEG_INFINITY, f64::INFINITY);
    assert_eq!(bounds(unbounded, 1.0), "none before 16 sets");
}

#[test]
fn the_ratings_page_offers_the_games_the_league_plays() {
    use super::pages::game_choices;
    // A stored league's file always reads: the store refuses one that does not
    // (arena/server/tests/store.rs, `a_league_file_is_read_once_by_the_store`).
    let choices = |file: &str| game_choices(&crate::league::LeagueConfig::from_toml(file).unwrap());
    let file = "name = \"l\"\nbots = [\"a\", \"b\"]\n[games.zokken]\n[games.schocken]\n";
    assert_eq!(choices(file), ["overall", "schocken", "zokken"]);
    let every = "name = \"l\"\nbots = [\"a\", \"b\"]\n[games.sjokken]\n[games.zokken]\n\
                 [games.schocken]\n";
    assert_eq!(choices(every), ["overall", "schocken", "sjokken", "zokken"]);
}

#[test]
fn each_chart_has_ids_of_its_own() {
    let first = rating_chart(&[], "chart-1", "one", true);
    let second = rating_chart(&[], "chart-2", "two", true);
    assert!(
        first.contains("id=\"chart-1\"") && first.contains("aria-labelledby=\"chart-1-title\""),
        "{first}"
    );
    assert!(
        second.contains("<title id=\"chart-2-title\">two</title>"),
        "{second}"
    );
    let page = format!("{first}{second}");
    let ids: Vec<&str> = page
        .split(" id=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    let unique: std::collections::HashSet<&&str> = ids.iter().collect();
    assert_eq!(
        unique.len(),
        ids.len(),
        "no id twice in a page of two charts: {ids:?}"
    );
}

#[test]
fn a_match_view_is_one_of_its_legal_ones_and_hidden_dice_need_the_full_log() {
    use super::match_page::sight_of;
    use crate::match_text::Sight;
    use knobel_engine::Seat;
    let one = |s: &str| Some(s.to_owned());
    assert_eq!(sight_of(None, None, 3, true).unwrap(), Sight::Full);
    assert_eq!(sight_of(None, None, 3, false).unwrap(), Sight::Public);
    assert_eq!(
        sight_of(one("public").as_ref(), None, 3, true).unwrap(),
        Sight::Public
    );
    assert_eq!(
        sight_of(None, one("2").as_ref(), 3, true).unwrap(),
        Sight::Seat(Seat(2))
    );
    let err = sight_of(None, one("3").as_ref(), 3, true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "seat = \"3\" is not legal: it must be one of 0, 1, 2"
    );
    let err = sight_of(one("all").as_ref(), None, 3, true).unwrap_err();
    assert!(matches!(err, WebError::BadRequest(_)), "{err}");
    let err = sight_of(one("full").as_ref(), one("0").as_ref(), 3, true).unwrap_err();
    assert!(err.to_string().contains("not both"), "{err}");
    // Without the full log: the public view only.
    for (view, seat) in [(one("full"), None), (None, one("1"))] {
        let err = sight_of(view.as_ref(), seat.as_ref(), 3, false).unwrap_err();
        assert!(
            matches!(&err, WebError::NotFound(m) if m.contains("full log is not public")),
            "{err}"
        );
    }
}

/// A league view of `played`, as the standings page gets it.
fn league_view(played: Vec<crate::league::PlayedMatch>) -> crate::league::service::LeagueView {
    use crate::league::service::{LeagueView, Played};
    use crate::store::{LeagueRecord, LeagueStatus};
    let config_toml = "name = \"cup\"\nbots = [\"ada\", \"bob\", \"cleo\"]\n[games.schocken]\n";
    let record = LeagueRecord {
        id: 1,
        name: "cup".to_owned(),
        config_toml: config_toml.to_owned(),
        config: std::sync::Arc::new(crate::league::LeagueConfig::from_toml(config_toml).unwrap()),
        bots: vec!["ada".to_owned(), "bob".to_owned(), "cleo".to_owned()],
        status: LeagueStatus::Running,
        created_at_ms: 0,
        total_matches: played.len() as u64,
        finished_matches: played.len() as u64,
        playing: 0,
        dice: crate::league::DiceMode::Independent,
        seed_source: crate::league::SeedSource::LeagueFile,
        commitment: None,
        secret: crate::store::HeldSecret::none(),
    };
    LeagueView {
        info: crate::league::service::LeagueInfo {
            record,
            live: Default::default(),
            stop: crate::league::Stop::Fixed,
            budget: None,
        },
        played: std::sync::Arc::new(Played {
            standings: crate::league::standings(&played),
            results: played,
            forfeits: Default::default(),
        }),
    }
}

#[test]
fn the_standings_show_adjusted_scores_and_each_neighbours_verdict() {
    use crate::league::{PlayedMatch, PlayedSeat};
    use knobel_engine::Game;
    // Schocken at tables of two: ada beats bob in every set (adjusted 0.3 or 0.4 against
    // 0.7 or 0.6); cleo played bob twice, without adjusted scores.
    let duel = |ordinal: u32, (winner, loser): (&str, &str), adjusted: Option<(f64, f64)>| {
        let seat = |bot: &str, place: u8, adjusted: Option<f64>| PlayedSeat {
            bot: bot.to_owned(),
            place,
            chips: None,
            adjusted,
        };
        PlayedMatch {
            ordinal,
            game: Game::Schocken,
            set: ordinal,
            rounds: 1,
            seats: vec![
                seat(winner, 1, adjusted.map(|a| a.0)),
                seat(loser, 2, adjusted.map(|a| a.1)),
            ],
        }
    };
    let separated: Vec<PlayedMatch> = (0..40)
        .map(|i| {
            let luck = [0.0, 0.1][i as usize % 2];
            duel(i, ("ada", "bob"), Some((0.3 + luck, 0.7 - luck)))
        })
        .collect();
    let page = super::pages::live_section(&league_view(separated.clone())).unwrap();
    assert!(page.contains("ranked by luck-adjusted loss rate"), "{page}");
    assert!(page.contains("<th scope=\"col\">Luck-adjusted (95% CI)</th>"));
    let row = |bot: &str| {
        let start = page
            .find(&format!("<tr class=\"standing\" data-bot=\"{bot}\""))
            .unwrap_or_else(|| panic!("no row of {bot}: {page}"));
        &page[start..start + page[start..].find("</tr>").unwrap()]
    };
    assert!(
        row("ada").contains("<td class=\"adjusted\">35.0% ("),
        "{}",
        row("ada")
    );
    let neighbours =
        r#"<tr class="neighbour" data-above="ada" data-below="bob" data-verdict="separated">"#;
    assert!(page.contains(neighbours), "{page}");
    assert!(page.contains("data-settled=\"true\""), "{page}");
    assert!(page.contains("margin ±2.0"), "{page}");

    // Matches without adjusted scores: ranked by mean place (ada, cleo, bob), "–" for the
    // adjusted score, and cleo and bob have too few sets for a verdict.
    let mut mixed = separated;
    mixed.push(duel(40, ("bob", "cleo"), None));
    mixed.push(duel(41, ("cleo", "bob"), None));
    let page = super::pages::live_section(&league_view(mixed)).unwrap();
    assert!(page.contains("ranked by mean place"), "{page}");
    assert!(page.contains("<td class=\"adjusted\">–</td>"), "{page}");
    assert!(
        page.contains(r#"data-above="cleo" data-below="bob" data-verdict="open">"#),
        "{page}"
    );
    assert!(page.contains("data-settled=\"false\""), "{page}");
}
