//! Arena instances and their leases: several arenas may share one database, and each
//! aborts only the running matches of arenas that are gone.
//!
//! Each arena process is an instance with a random id. It holds a lease in
//! `arena_instances`, renewed by a heartbeat well before it runs out, and records the
//! matches it starts as its own (`matches.owner_instance`). A running match whose owner's
//! lease has run out (its arena crashed, was killed, or has been cut off from the database
//! for longer than its lease) cannot go on: any arena aborts it
//! ([`Store::abort_orphaned_matches`]). Lease times are the database's clock in unix
//! milliseconds ([`Store::db_now_ms`]): arenas sharing a database agree on when a lease has
//! run out whatever their own clocks say.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rand::RngExt;

use super::{Store, StoreError};

/// The id of an arena instance: 16 random hex digits, new for every process. Cheap to
/// clone.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstanceId(Arc<str>);

impl InstanceId {
    /// A new random id.
    pub fn random() -> InstanceId {
        let random: u64 = rand::rng().random();
        InstanceId(format!("{random:016x}").into())
    }

    /// An id given as text (e.g. read back from the database).
    pub fn new(id: impl Into<Arc<str>>) -> InstanceId {
        InstanceId(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InstanceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An instance's lease, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The instance.
    pub instance: InstanceId,
    /// When the instance started, in unix milliseconds.
    pub started_at_ms: i64,
    /// When the lease was last renewed, in unix milliseconds.
    pub heartbeat_at_ms: i64,
    /// How long a renewal holds, in milliseconds: the lease runs out at
    /// `heartbeat_at_ms + lease_ms`.
    pub lease_ms: i64,
}

impl Lease {
    /// Whether the lease has run out at `now_ms`.
    pub fn expired_at(&self, now_ms: i64) -> bool {
        self.heartbeat_at_ms.saturating_add(self.lease_ms) < now_ms
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Store {
    /// The database's clock, in unix milliseconds: the one clock that every arena on the
    /// database shares, for leases and claims (an arena's own clock may be off).
    pub async fn db_now_ms(&self) -> Result<i64, StoreError> {
        let sql = match self.backend_name() {
            "postgres" => concat!("SELECT ", db_now_ms_sql!(postgres)),
            _ => concat!("SELECT ", db_now_ms_sql!(sqlite)),
        };
        with_pool!(self, pool => sqlx::query_scalar(sql).fetch_one(pool).await)
            .map_err(StoreError::db("reading the database's clock"))
    }

    /// Takes or renews the lease of `instance` at `now_ms` (the database's clock,
    /// [`Store::db_now_ms`]), holding for `lease` from then:
    /// registers the instance the first time (with `started_at_ms`), and again if its row
    /// was removed meanwhile.
    pub async fn renew_lease(
        &self,
        instance: &InstanceId,
        lease: Duration,
        started_at_ms: i64,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        with_writer!(self, pool => {
            sqlx::query(
                "INSERT INTO arena_instances (id, started_at_ms, heartbeat_at_ms, lease_ms) \
                 VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (id) DO UPDATE \
                 SET heartbeat_at_ms = excluded.heartbeat_at_ms, lease_ms = excluded.lease_ms",
            )
            .bind(instance.as_str())
            .bind(started_at_ms)
            .bind(now_ms)
            .bind(millis(lease))
            .execute(pool)
            .await
            .map(|_| ())
        })
        .map_err(StoreError::db("renewing the arena's lease"))?;
        Ok(())
    }

    /// Gives up the lease of `instance` (on a clean shutdown): any match it still has
    /// running becomes an orphan at once. True if it held one.
    pub async fn release_lease(&self, instance: &InstanceId) -> Result<bool, StoreError> {
        let done = with_writer!(self, pool => {
            sqlx::query("DELETE FROM arena_instances WHERE id = $1")
                .bind(instance.as_str())
                .execute(pool)
                .await
                .map(|done| done.rows_affected())
        })
        .map_err(StoreError::db("releasing the arena's lease"))?;
        Ok(done > 0)
    }

    /// The lease of `instance`, if it holds one.
    pub async fn lease(&self, instance: &InstanceId) -> Result<Option<Lease>, StoreError> {
        let row: Option<(String, i64, i64, i64)> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT id, started_at_ms, heartbeat_at_ms, lease_ms \
                 FROM arena_instances WHERE id = $1",
            )
            .bind(instance.as_str())
            .fetch_optional(pool)
            .await
        })
        .map_err(StoreError::db("reading an arena's lease"))?;
        Ok(
            row.map(|(id, started_at_ms, heartbeat_at_ms, lease_ms)| Lease {
                instance: InstanceId::new(id),
                started_at_ms,
                heartbeat_at_ms,
                lease_ms,
            }),
        )
    }

    /// Marks aborted, for `reason`, every running match whose owner's lease has run out at
    /// `now_ms` (the database's clock, [`Store::db_now_ms`]) (or that has no lease at all: a released lease, or a row from before leases
    /// were kept) and every running match without an owner. The matches of an instance
    /// whose lease holds are never touched. Returns how many were aborted.
    pub async fn abort_orphaned_matches(
        &self,
        reason: &str,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        with_writer!(self, pool => {
            sqlx::query(
                "UPDATE matches SET status = 'aborted', abort_reason = $1, finished_at_ms = $2 \
                 WHERE status = 'running' AND (owner_instance IS NULL OR NOT EXISTS ( \
                     SELECT 1 FROM arena_instances i \
                     WHERE i.id = matches.owner_instance \
                       AND i.heartbeat_at_ms + i.lease_ms >= $2))",
            )
            .bind(reason)
            .bind(now_ms)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        })
        .map_err(StoreError::db(
            "aborting the matches of arenas that are gone",
        ))
    }

    /// The oldest instance whose lease holds by the database's clock (`None` if none
    /// does): the lead arena among those on this database (ties by id).
    pub async fn oldest_live_instance(&self) -> Result<Option<InstanceId>, StoreError> {
        macro_rules! oldest_live {
            ($backend:ident) => {
                concat!(
                    "SELECT id FROM arena_instances WHERE heartbeat_at_ms + lease_ms >= ",
                    db_now_ms_sql!($backend),
                    " ORDER BY started_at_ms, id LIMIT 1"
                )
            };
        }
        let sql = match self.backend_name() {
            "postgres" => oldest_live!(postgres),
            _ => oldest_live!(sqlite),
        };
        let id: Option<String> = with_pool!(self, pool => {
            sqlx::query_scalar(sql).fetch_optional(pool).await
        })
        .map_err(StoreError::db("reading the live arenas"))?;
        Ok(id.map(InstanceId::new))
    }

    /// The owner of match `id` (`None` if it has none or is not stored).
    pub async fn match_owner(&self, id: &str) -> Result<Option<InstanceId>, StoreError> {
        let owner: Option<Option<String>> = with_pool!(self, pool => {
            sqlx::query_scalar("SELECT owner_instance FROM matches WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
        })
        .map_err(StoreError::db("reading a match's owner"))?;
        Ok(owner.flatten().map(InstanceId::new))
    }
}

impl Store {
    /// The page-token key of the arenas on this database (table `arena_keys`): made from
    /// the operating system's random source by the first arena that asks, read by the
    /// others.
    pub async fn page_token_key(&self) -> Result<[u8; 32], StoreError> {
        use rand::TryRng;
        let mut fresh = [0u8; 32];
        rand::rngs::SysRng
            .try_fill_bytes(&mut fresh)
            .expect("the operating system's random source works");
        let key: String = with_writer!(self, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "INSERT INTO arena_keys (name, key_hex) VALUES ('page_tokens', $1) \
                 ON CONFLICT (name) DO NOTHING",
            )
            .bind(hex::encode(fresh))
            .execute(&mut *tx)
            .await?;
            let key = sqlx::query_scalar("SELECT key_hex FROM arena_keys WHERE name = 'page_tokens'")
                .fetch_one(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok::<String, sqlx::Error>(key)
        })
        .map_err(StoreError::db("reading the page-token key"))?;
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(&key, &mut bytes).map_err(|_| StoreError::Corrupt {
            what: "the page-token key is not 64 hex digits".to_owned(),
        })?;
        Ok(bytes)
    }
}
