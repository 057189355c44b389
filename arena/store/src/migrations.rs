//! The schema migrations, embedded in the binary.
//!
//! Each backend has its own folder under `arena/store/migrations/`, with the same files: migrations
//! are append-only (never edit one that may have been applied; add `0002_<what>.sql` instead,
//! in both folders, and list it below). They are embedded by hand with `include_str!` rather
//! than with `sqlx::migrate!`, which would pull in sqlx's proc-macro crate and build both
//! database drivers a second time; the version and description are taken from the file name
//! exactly as `sqlx::migrate!` and the `sqlx` CLI take them, so either can be used later.

use std::borrow::Cow;

use sqlx::SqlSafeStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// One embedded migration: its file name and its text.
type Embedded = (&'static str, &'static str);

/// The SQLite migrations, oldest first.
pub(crate) const SQLITE: &[Embedded] = &[
    (
        "0001_init.sql",
        include_str!("../migrations/sqlite/0001_init.sql"),
    ),
    (
        "0002_compressed_logs.sql",
        include_str!("../migrations/sqlite/0002_compressed_logs.sql"),
    ),
    (
        "0003_seat_outcomes.sql",
        include_str!("../migrations/sqlite/0003_seat_outcomes.sql"),
    ),
    (
        "0004_instances.sql",
        include_str!("../migrations/sqlite/0004_instances.sql"),
    ),
    (
        "0005_bot_identity.sql",
        include_str!("../migrations/sqlite/0005_bot_identity.sql"),
    ),
    (
        "0007_match_seats.sql",
        include_str!("../migrations/sqlite/0007_match_seats.sql"),
    ),
    (
        "0008_leagues.sql",
        include_str!("../migrations/sqlite/0008_leagues.sql"),
    ),
    (
        "0009_fair_dice.sql",
        include_str!("../migrations/sqlite/0009_fair_dice.sql"),
    ),
    (
        "0010_arena_keys.sql",
        include_str!("../migrations/sqlite/0010_arena_keys.sql"),
    ),
    (
        "0011_outcomes_without_zero_fill.sql",
        include_str!("../migrations/sqlite/0011_outcomes_without_zero_fill.sql"),
    ),
    (
        "0012_luck_adjusted_scores.sql",
        include_str!("../migrations/sqlite/0012_luck_adjusted_scores.sql"),
    ),
    (
        "0013_seats_stored_once.sql",
        include_str!("../migrations/sqlite/0013_seats_stored_once.sql"),
    ),
    (
        "0014_match_seats_fillfactor.sql",
        include_str!("../migrations/sqlite/0014_match_seats_fillfactor.sql"),
    ),
];

/// The PostgreSQL migrations, oldest first.
pub(crate) const POSTGRES: &[Embedded] = &[
    (
        "0001_init.sql",
        include_str!("../migrations/postgres/0001_init.sql"),
    ),
    (
        "0002_compressed_logs.sql",
        include_str!("../migrations/postgres/0002_compressed_logs.sql"),
    ),
    (
        "0003_seat_outcomes.sql",
        include_str!("../migrations/postgres/0003_seat_outcomes.sql"),
    ),
    (
        "0004_instances.sql",
        include_str!("../migrations/postgres/0004_instances.sql"),
    ),
    (
        "0005_bot_identity.sql",
        include_str!("../migrations/postgres/0005_bot_identity.sql"),
    ),
    (
        "0007_match_seats.sql",
        include_str!("../migrations/postgres/0007_match_seats.sql"),
    ),
    (
        "0008_leagues.sql",
        include_str!("../migrations/postgres/0008_leagues.sql"),
    ),
    (
        "0009_fair_dice.sql",
        include_str!("../migrations/postgres/0009_fair_dice.sql"),
    ),
    (
        "0010_arena_keys.sql",
        include_str!("../migrations/postgres/0010_arena_keys.sql"),
    ),
    (
        "0011_outcomes_without_zero_fill.sql",
        include_str!("../migrations/postgres/0011_outcomes_without_zero_fill.sql"),
    ),
    (
        "0012_luck_adjusted_scores.sql",
        include_str!("../migrations/postgres/0012_luck_adjusted_scores.sql"),
    ),
    (
        "0013_seats_stored_once.sql",
        include_str!("../migrations/postgres/0013_seats_stored_once.sql"),
    ),
    (
        "0014_match_seats_fillfactor.sql",
        include_str!("../migrations/postgres/0014_match_seats_fillfactor.sql"),
    ),
];

/// A migrator running `files` (those up to version `until` only, if it is given).
pub(crate) fn migrator(files: &[Embedded], until: Option<i64>) -> Migrator {
    let migrations = files
        .iter()
        .map(|&(file, sql)| (parse_file_name(file), sql))
        .filter(|((version, _), _)| until.is_none_or(|until| *version <= until))
        .map(|((version, description), sql)| {
            Migration::new(
                version,
                Cow::Owned(description),
                MigrationType::Simple,
                sql.into_sql_str(),
                false,
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

/// The version and description of a migration file named `<version>_<description>.sql`.
fn parse_file_name(file: &str) -> (i64, String) {
    let stem = file
        .strip_suffix(".sql")
        .expect("migration files end in .sql");
    let (version, description) = stem
        .split_once('_')
        .expect("migration files are named <version>_<description>.sql");
    let version = version.parse().expect("migration versions are numbers");
    (version, description.replace('_', " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every file in the folder is embedded, in order, with distinct versions.
    fn check(folder: &str, embedded: &[Embedded]) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("migrations")
            .join(folder);
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        on_disk.sort();
        let listed: Vec<String> = embedded.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(
            on_disk, listed,
            "migrations/{folder} and the embedded list differ"
        );
        let versions: Vec<i64> = embedded.iter().map(|(n, _)| parse_file_name(n).0).collect();
        assert!(
            versions.windows(2).all(|w| w[0] < w[1]),
            "versions must increase"
        );
    }

    #[test]
    fn every_migration_file_is_embedded() {
        check("sqlite", SQLITE);
        check("postgres", POSTGRES);
        let sqlite: Vec<_> = SQLITE.iter().map(|(n, _)| *n).collect();
        let postgres: Vec<_> = POSTGRES.iter().map(|(n, _)| *n).collect();
        assert_eq!(sqlite, postgres, "both backends need the same migrations");
    }

    #[test]
    fn file_names_parse_like_sqlx() {
        assert_eq!(parse_file_name("0001_init.sql"), (1, "init".to_owned()));
        assert_eq!(
            parse_file_name("0012_add_bot_owner.sql"),
            (12, "add bot owner".to_owned())
        );
    }
}
