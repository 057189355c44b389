//! A fresh database for one benchmark run: a new database on PostgreSQL (created on
//! `KNOBEL_BENCH_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`, and
//! dropped after the run), or a SQLite file in a temporary folder.

/// A fresh database for one run, dropped by [`Fresh::drop_it`].
pub enum Fresh {
    Postgres { admin: String, name: String },
    Sqlite { _dir: tempfile::TempDir },
}

impl Fresh {
    /// A fresh database of `backend` (postgres or sqlite) and its URL; `tag` goes into a
    /// PostgreSQL database's name.
    pub async fn create(backend: &str, tag: &str) -> (Fresh, String) {
        match backend {
            "postgres" => {
                let admin = std::env::var("KNOBEL_BENCH_POSTGRES_URL")
                    .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
                let name = format!("knobel_bench_{}_{tag}", std::process::id());
                let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
                    .await
                    .expect("connect to PostgreSQL (set KNOBEL_BENCH_POSTGRES_URL)");
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut conn)
                    .await
                    .expect("create the bench database");
                let (base, _) = admin.rsplit_once('/').expect("a database in the url");
                let url = format!("{base}/{name}");
                (Fresh::Postgres { admin, name }, url)
            }
            "sqlite" => {
                let dir = tempfile::tempdir().expect("a temp dir");
                let url = format!("sqlite://{}", dir.path().join("bench.db").display());
                (Fresh::Sqlite { _dir: dir }, url)
            }
            other => panic!("unknown backend {other:?}: postgres or sqlite"),
        }
    }

    /// Drops the PostgreSQL database (a SQLite folder goes when dropped).
    pub async fn drop_it(self) {
        if let Fresh::Postgres { admin, name } = self {
            let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
                .await
                .expect("connect to PostgreSQL");
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE {name} WITH (FORCE)"
            )))
            .execute(&mut conn)
            .await
            .expect("drop the bench database");
        }
    }
}
