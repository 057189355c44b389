//! The bot registry.

use super::error::is_unique_violation;
use super::{BotRecord, Store, StoreError, now_ms};
use knobel_proto::names::{self, NameError, name_key};

/// A bot row: id, name, created_at_ms, revoked_at_ms.
type BotRow = (i64, String, i64, Option<i64>);

fn bot_from_row((id, name, created_at_ms, revoked_at_ms): BotRow) -> BotRecord {
    BotRecord {
        id,
        name,
        created_at_ms,
        revoked_at_ms,
    }
}

/// Whether `hash` looks like the arena's `auth::hash_token`'s output: 64 lowercase hex digits.
/// Checked so that a clear token passed by mistake is refused rather than stored.
fn looks_like_token_hash(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Store {
    /// Registers a bot named `name` whose token hashes to `token_hash` (from
    /// the arena's `auth::hash_token`; the clear token is never stored).
    ///
    /// Names are unique for good, revoked bots included, so that results stay attributable,
    /// and unique regardless of case and look-alike characters (their
    /// [`name_key`] is unique): a taken name gives [`StoreError::NameTaken`], naming the bot
    /// that holds it. A name must follow the one name rule
    /// ([`knobel_proto::names::check_name`], else [`StoreError::InvalidBotName`]); a
    /// `token_hash` that is not 64 lowercase hex digits is refused
    /// ([`StoreError::InvalidTokenHash`]).
    pub async fn add_bot(&self, name: &str, token_hash: &str) -> Result<BotRecord, StoreError> {
        check_bot_name(name)?;
        if !looks_like_token_hash(token_hash) {
            return Err(StoreError::InvalidTokenHash);
        }
        let created_at_ms = now_ms();
        let key = name_key(name);
        let inserted: Result<i64, sqlx::Error> = with_writer!(self, pool => {
            sqlx::query_scalar(
                "INSERT INTO bots (name, token_hash, created_at_ms, name_key) \
                 VALUES ($1, $2, $3, $4) RETURNING id",
            )
            .bind(name)
            .bind(token_hash)
            .bind(created_at_ms)
            .bind(&key)
            .fetch_one(pool)
            .await
        });
        match inserted {
            Ok(id) => Ok(BotRecord {
                id,
                name: name.to_owned(),
                created_at_ms,
                revoked_at_ms: None,
            }),
            Err(e) if is_unique_violation(&e) => {
                if let Some(holder) = self.bot_by_name_key(name).await? {
                    Err(StoreError::NameTaken {
                        name: name.to_owned(),
                        existing: holder.name,
                    })
                } else {
                    Err(StoreError::TokenTaken)
                }
            }
            Err(e) => Err(StoreError::db("registering a bot")(e)),
        }
    }

    /// All registered bots, revoked ones included, oldest first.
    pub async fn list_bots(&self) -> Result<Vec<BotRecord>, StoreError> {
        let rows: Vec<BotRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT id, name, created_at_ms, revoked_at_ms FROM bots ORDER BY id",
            )
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("listing bots"))?;
        Ok(rows.into_iter().map(bot_from_row).collect())
    }

    /// The bot named `name`, revoked or not.
    pub async fn bot_by_name(&self, name: &str) -> Result<Option<BotRecord>, StoreError> {
        let row: Option<BotRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT id, name, created_at_ms, revoked_at_ms FROM bots WHERE name = $1",
            )
            .bind(name)
            .fetch_optional(pool)
            .await
        })
        .map_err(StoreError::db("looking up a bot by name"))?;
        Ok(row.map(bot_from_row))
    }

    /// The bot whose name counts as `name` (the same [`name_key`]: equal up to case and
    /// look-alike characters), revoked or not; else the bot of exactly that name (one
    /// registered before the key was kept, whose key an older bot holds).
    pub async fn bot_by_name_key(&self, name: &str) -> Result<Option<BotRecord>, StoreError> {
        let row: Option<BotRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT id, name, created_at_ms, revoked_at_ms FROM bots \
                 WHERE name_key = $1 OR name = $2 ORDER BY id LIMIT 1",
            )
            .bind(name_key(name))
            .bind(name)
            .fetch_optional(pool)
            .await
        })
        .map_err(StoreError::db("looking up a bot by name key"))?;
        Ok(row.map(bot_from_row))
    }

    /// Of the bots `ids`, those whose token is revoked: one query, for the arena to end the
    /// streams of bots revoked by another process (`knobel bot revoke`).
    pub async fn revoked_among(&self, ids: &[i64]) -> Result<Vec<i64>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut revoked = Vec::new();
        // In chunks well within both databases' parameter limits.
        for chunk in ids.chunks(1_000) {
            let found: Vec<i64> = with_pool!(self, pool => {
                let mut query = sqlx::QueryBuilder::new(
                    "SELECT id FROM bots WHERE revoked_at_ms IS NOT NULL AND id IN (",
                );
                let mut list = query.separated(", ");
                for id in chunk {
                    list.push_bind(*id);
                }
                list.push_unseparated(")");
                query.build_query_scalar().fetch_all(pool).await
            })
            .map_err(StoreError::db("checking for revoked bots"))?;
            revoked.extend(found);
        }
        Ok(revoked)
    }

    /// Fills in the name key of bots registered before keys were kept (migration 0005),
    /// oldest first. A bot whose key an older bot holds keeps no key (and its name): it is
    /// logged, and returned by name.
    pub(super) async fn backfill_name_keys(&self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(i64, String)> = with_writer!(self, pool => {
            sqlx::query_as("SELECT id, name FROM bots WHERE name_key IS NULL ORDER BY id")
                .fetch_all(pool)
                .await
        })
        .map_err(StoreError::db("reading bots without a name key"))?;
        let mut clashes = Vec::new();
        for (id, name) in rows {
            let key = name_key(&name);
            let updated = with_writer!(self, pool => {
                sqlx::query("UPDATE bots SET name_key = $1 WHERE id = $2")
                    .bind(&key)
                    .bind(id)
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected())
            });
            match updated {
                Ok(_) => {}
                Err(e) if is_unique_violation(&e) => {
                    tracing::warn!(
                        bot_id = id,
                        bot = %name.escape_debug(),
                        "this bot's name looks like an older bot's (same name key): it keeps its name, and no new bot can take it"
                    );
                    clashes.push(name);
                }
                Err(e) => return Err(StoreError::db("filling in a bot's name key")(e)),
            }
        }
        Ok(clashes)
    }

    /// Revokes the token of the bot named `name`. Returns whether a valid token was revoked:
    /// `false` if there is no such bot or it was revoked already. The name stays taken.
    pub async fn revoke_bot(&self, name: &str) -> Result<bool, StoreError> {
        let done = with_writer!(self, pool => {
            sqlx::query(
                "UPDATE bots SET revoked_at_ms = $2 WHERE name = $1 AND revoked_at_ms IS NULL",
            )
            .bind(name)
            .bind(now_ms())
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::db("revoking a bot"))?;
        Ok(done > 0)
    }

    /// The bot whose token hashes to `token_hash`, if it is registered and not revoked: the
    /// look-up that authenticates a bot.
    pub async fn bot_by_token_hash(
        &self,
        token_hash: &str,
    ) -> Result<Option<BotRecord>, StoreError> {
        let row: Option<BotRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT id, name, created_at_ms, revoked_at_ms FROM bots \
                 WHERE token_hash = $1 AND revoked_at_ms IS NULL",
            )
            .bind(token_hash)
            .fetch_optional(pool)
            .await
        })
        .map_err(StoreError::db("looking up a bot by token"))?;
        Ok(row.map(bot_from_row))
    }
}

/// A bot name that cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid bot name \"{name}\": {error}")]
pub struct BotNameError {
    /// The name refused, with control and invisible characters escaped.
    pub name: String,
    /// The rule it breaks.
    pub error: NameError,
}

/// Checks that `name` may name a bot: the one name rule of registered and Hello names,
/// [`knobel_proto::names::check_name`] (its text for people: [`knobel_proto::names::rule`]).
/// [`Store::add_bot`] checks it too.
pub fn check_bot_name(name: &str) -> Result<(), BotNameError> {
    names::check_name(name).map_err(|error| BotNameError {
        name: escape_name(name),
        error,
    })
}

/// `name` for a message: at most 40 characters, control and invisible characters escaped
/// (so a refused name cannot reorder or hide the text around it).
fn escape_name(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == 40 {
            out.push('…');
            break;
        }
        if c == '"' || c == '\\' || names::forbidden_class(c).is_some() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_hash_shape() {
        assert!(looks_like_token_hash(&"ab12".repeat(16)));
        assert!(!looks_like_token_hash(&"AB12".repeat(16)));
        assert!(!looks_like_token_hash("knb_0123"));
        assert!(!looks_like_token_hash(&format!("knb_{}", "a".repeat(60))));
    }

    #[test]
    fn bot_names() {
        assert!(check_bot_name("zocker-3000").is_ok());
        assert!(check_bot_name("Würfel Bot").is_ok());
        assert!(check_bot_name(&"x".repeat(32)).is_ok());
        for bad in [
            "",
            " lead",
            "trail ",
            "tab\tbed",
            "new\nline",
            &"x".repeat(33),
            "builtin-heuristic-1",
            "a\u{202E}b",
        ] {
            assert!(check_bot_name(bad).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(
            check_bot_name("").unwrap_err().to_string(),
            "invalid bot name \"\": a bot name cannot be empty: it has 1..=32 characters"
        );
        // The refused character is escaped in the quoted name, and named.
        assert_eq!(
            check_bot_name("evil\u{202E}gnp").unwrap_err().to_string(),
            "invalid bot name \"evil\\u{202e}gnp\": a bot name cannot contain a bidirectional control: character 4 is U+202E RIGHT-TO-LEFT OVERRIDE"
        );
    }
}
