//! Where a league's dice come from: a secret, the match seeds derived from it, and the
//! commitment published before the first match (docs/fair-play.md is the reference, exact
//! enough to recompute every seed).
//!
//! - **The secret**: 256 bits from the operating system's random source when the league is
//!   created ([`LeagueSecret::from_os`]), or, for a league file that names a `seed` (a
//!   reproducible research run, "public dice"), `SHA-256("knobel/v1/public-dice/{seed}")`.
//! - **Match seeds**: the first 8 bytes (big-endian) of HMAC-SHA-256 keyed with the secret
//!   over an ASCII message naming the match's place in the schedule: with independent dice
//!   `knobel/v1/match-seed/independent/{ordinal}/{attempt}` (every attempt at a match its
//!   own dice: a match cut short by the arena is replayed on fresh dice), with duplicate
//!   sets `knobel/v1/match-seed/duplicate/{set}` (every seat order and attempt of a set the
//!   same dice). Without the secret, knowing any number of seeds does not help to find
//!   another (HMAC is a pseudorandom function).
//! - **The commitment**: `SHA-256("knobel/v1/commitment/{league id}/{league name}/{secret
//!   as 64 lowercase hex digits}")`, published at creation; the secret itself is published
//!   once the league has ended, and anyone can then check both.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use knobel_engine::{Game, quoted};

/// How a league's matches get their dice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiceMode {
    /// Every match (and every attempt at it) has its own secret seed: the default. Nothing a
    /// bot remembers from one match tells it anything about another.
    Independent,
    /// Duplicate sets: every seat order of a table's set plays the same seed, so a seat
    /// position gets the same dice whoever sits there. Only for fields that cannot remember
    /// across matches (built-in players, bots the organiser trusts): a bot that remembers
    /// the dice of one seat order knows hidden dice of the next.
    Duplicate,
}

impl DiceMode {
    /// Every mode.
    pub const ALL: [DiceMode; 2] = [DiceMode::Independent, DiceMode::Duplicate];

    /// The name in league files, the store and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            DiceMode::Independent => "independent",
            DiceMode::Duplicate => "duplicate",
        }
    }
}

impl std::fmt::Display for DiceMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for DiceMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DiceMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown dice {}: legal are \"independent\" (the default: every match its \
                     own secret seed) and \"duplicate\" (seat orders of a set share their dice; \
                     only for trusted fields)",
                    quoted(s)
                )
            })
    }
}

/// Where a league's secret came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeedSource {
    /// The operating system's random source: secret until the league ends.
    Secret,
    /// The league file's `seed`: reproducible, and known to whoever has the file ("public
    /// dice"; not for a contest).
    LeagueFile,
    /// Created before leagues had secrets: its stored schedule's seeds follow from the league
    /// file's seed by a public chain ("public dice").
    Legacy,
}

impl SeedSource {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            SeedSource::Secret => "secret",
            SeedSource::LeagueFile => "league-file",
            SeedSource::Legacy => "legacy",
        }
    }

    /// Whether anybody may know the dice before the league ends.
    pub fn is_public(self) -> bool {
        self != SeedSource::Secret
    }
}

impl std::str::FromStr for SeedSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            SeedSource::Secret,
            SeedSource::LeagueFile,
            SeedSource::Legacy,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
        .ok_or_else(|| format!("unknown seed source {}", quoted(s)))
    }
}

/// A league's 256-bit dice secret.
#[derive(Clone, PartialEq, Eq)]
pub struct LeagueSecret([u8; 32]);

impl std::fmt::Debug for LeagueSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LeagueSecret(..)")
    }
}

/// A secret that does not read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("a league secret is 64 hexadecimal digits: {found} is not")]
pub struct SecretError {
    /// What was found, quoted (a bounded prefix of it).
    pub found: String,
}

impl LeagueSecret {
    /// A secret of these bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> LeagueSecret {
        LeagueSecret(bytes)
    }

    /// A fresh secret from the operating system's random source.
    pub fn from_os() -> LeagueSecret {
        use rand::TryRng;
        let mut bytes = [0u8; 32];
        rand::rngs::SysRng
            .try_fill_bytes(&mut bytes)
            .expect("the operating system's random source works");
        LeagueSecret(bytes)
    }

    /// The public secret of a league file's `seed`: `SHA-256("knobel/v1/public-dice/{seed}")`.
    pub fn from_public_seed(seed: u64) -> LeagueSecret {
        LeagueSecret(Sha256::digest(format!("knobel/v1/public-dice/{seed}").as_bytes()).into())
    }

    /// Reads 64 hexadecimal digits.
    pub fn from_hex(text: &str) -> Result<LeagueSecret, SecretError> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text.trim(), &mut bytes).map_err(|_| SecretError {
            found: quoted(text),
        })?;
        Ok(LeagueSecret(bytes))
    }

    /// The secret as 64 lowercase hexadecimal digits.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The commitment to this secret for league `league_id` named `name`: 64 lowercase hex
    /// digits of `SHA-256("knobel/v1/commitment/{league_id}/{name}/{secret hex}")`.
    pub fn commitment(&self, league_id: i64, name: &str) -> String {
        let text = format!("knobel/v1/commitment/{league_id}/{name}/{}", self.to_hex());
        hex::encode(Sha256::digest(text.as_bytes()))
    }

    /// The seed of a match: of `ordinal`'s `attempt` (from 1) with independent dice, of
    /// duplicate set `set` with duplicate sets.
    pub fn match_seed(&self, mode: DiceMode, ordinal: u32, set: u32, attempt: u32) -> u64 {
        match mode {
            DiceMode::Independent => self.derive(&format!(
                "knobel/v1/match-seed/independent/{ordinal}/{attempt}"
            )),
            DiceMode::Duplicate => self.derive(&format!("knobel/v1/match-seed/duplicate/{set}")),
        }
    }

    /// The seed of the shuffle that seats a balanced design of `game`'s tables.
    pub fn relabel_seed(&self, game: Game) -> u64 {
        self.derive(&format!("knobel/v1/relabel/{}", game.name()))
    }

    /// The first 8 bytes, big-endian, of HMAC-SHA-256 keyed with the secret over `message`.
    fn derive(&self, message: &str) -> u64 {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .expect("HMAC takes a key of any length");
        mac.update(message.as_bytes());
        let tag = mac.finalize().into_bytes();
        u64::from_be_bytes(tag[..8].try_into().expect("a SHA-256 tag has 32 bytes"))
    }
}

/// The dice of a league: its secret and how matches share it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeagueDice {
    /// The secret.
    pub secret: LeagueSecret,
    /// Independent or duplicate.
    pub mode: DiceMode,
}

impl LeagueDice {
    /// Public dice from `seed`: reproducible, for research runs, benches and tests.
    pub fn public(seed: u64, mode: DiceMode) -> LeagueDice {
        LeagueDice {
            secret: LeagueSecret::from_public_seed(seed),
            mode,
        }
    }

    /// The dice of a league made from `config`: from its `seed` (public dice), else from a
    /// fresh secret of the operating system's random source.
    pub fn for_config(config: &super::LeagueConfig) -> (LeagueDice, SeedSource) {
        let (secret, source) = match config.seed {
            Some(seed) => (LeagueSecret::from_public_seed(seed), SeedSource::LeagueFile),
            None => (LeagueSecret::from_os(), SeedSource::Secret),
        };
        let dice = LeagueDice {
            secret,
            mode: config.dice,
        };
        (dice, source)
    }

    /// The seed of attempt `attempt` (from 1) at the match `ordinal` of duplicate set `set`.
    pub fn match_seed(&self, ordinal: u32, set: u32, attempt: u32) -> u64 {
        self.secret.match_seed(self.mode, ordinal, set, attempt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worked_example_of_docs_fair_play_holds() {
        // docs/fair-play.md, "Worked example": these values, and the page shows them.
        let secret = LeagueSecret::from_public_seed(7);
        let doc = include_str!("../../../docs/fair-play.md");
        let values = [
            secret.to_hex(),
            secret.commitment(1, "example"),
            secret
                .match_seed(DiceMode::Independent, 0, 0, 1)
                .to_string(),
            secret
                .match_seed(DiceMode::Independent, 0, 0, 2)
                .to_string(),
            secret.match_seed(DiceMode::Duplicate, 0, 0, 1).to_string(),
            secret.relabel_seed(Game::Schocken).to_string(),
        ];
        assert_eq!(
            values,
            [
                "f41b2b7424e6c322893c153a185f67086245a9deebc07c0fedae0454263a1316",
                "5515b745898122dea5ca078c9f8e82f7039f2a89a8ec5989843533531df74aa2",
                "16334875291682981552",
                "6569512488466285815",
                "12520942801861053229",
                "16904354515298867559",
            ]
        );
        for value in &values {
            assert!(
                doc.contains(value.as_str()),
                "docs/fair-play.md lacks {value}"
            );
        }
        assert_eq!(LeagueSecret::from_hex(&secret.to_hex()).unwrap(), secret);
        // Duplicate sets share a seed across seat orders and attempts.
        assert_eq!(
            secret.match_seed(DiceMode::Duplicate, 0, 3, 1),
            secret.match_seed(DiceMode::Duplicate, 5, 3, 2)
        );
    }

    #[test]
    fn bad_input_is_named_and_bounded() {
        let e = "dublicate".parse::<DiceMode>().unwrap_err();
        assert!(
            e.contains("\"dublicate\"") && e.contains("\"duplicate\""),
            "{e}"
        );
        let long = "x".repeat(10_000);
        let e = long.parse::<DiceMode>().unwrap_err();
        assert!(e.len() < 400, "{e}");
        assert!(LeagueSecret::from_hex("12").is_err());
        assert!(LeagueSecret::from_hex(&"g".repeat(64)).is_err());
    }

    #[test]
    fn os_secrets_differ() {
        assert_ne!(LeagueSecret::from_os(), LeagueSecret::from_os());
    }
}
