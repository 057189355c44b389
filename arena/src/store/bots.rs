//! The bot registry.

use super::error::is_unique_violation;
use super::{BotRecord, Store, StoreError, now_ms};
use crate::auth::check_bot_name;

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

/// Whether `hash` looks like [`crate::auth::hash_token`]'s output: 64 lowercase hex digits.
/// Checked so that a clear token passed by mistake is refused rather than stored.
fn looks_like_token_hash(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Store {
    /// Registers a bot named `name` whose token hashes to `token_hash` (from
    /// [`crate::auth::hash_token`]; the clear token is never stored).
    ///
    /// Names are unique for good, revoked bots included, so that results stay attributable:
    /// a taken name gives [`StoreError::NameTaken`]. A name is 1 to 64 bytes without control
    /// characters or surrounding whitespace ([`StoreError::InvalidBotName`]); a `token_hash`
    /// that is not 64 lowercase hex digits is refused ([`StoreError::InvalidTokenHash`]).
    pub async fn add_bot(&self, name: &str, token_hash: &str) -> Result<BotRecord, StoreError> {
        check_bot_name(name)?;
        if !looks_like_token_hash(token_hash) {
            return Err(StoreError::InvalidTokenHash);
        }
        let created_at_ms = now_ms();
        let inserted: Result<i64, sqlx::Error> = with_writer!(self, pool => {
            sqlx::query_scalar(
                "INSERT INTO bots (name, token_hash, created_at_ms) VALUES ($1, $2, $3) \
                 RETURNING id",
            )
            .bind(name)
            .bind(token_hash)
            .bind(created_at_ms)
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
                if self.bot_by_name(name).await?.is_some() {
                    Err(StoreError::NameTaken {
                        name: name.to_owned(),
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
}
