//! `knobel league verify` and `knobel league export`: an ended league's archive (its dice
//! secret, league file and every log, docs/fair-play.md) fetched from an arena or read from a
//! file, and checked: the commitment, every seed, every log replayed by the engine.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use knobel_arena::league::archive::{LineVerifier, VerifyReport};
use knobel_proto::v1 as pb;
use tokio_stream::StreamExt;

use super::league::{ArenaArgs, arena_client};

/// What `knobel league verify` checks.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The league's name (its archive is fetched from the arena, once the league has ended).
    #[arg(required_unless_present = "archive", conflicts_with = "archive")]
    pub name: Option<String>,
    /// Verify an archive saved by `knobel league export` instead, offline.
    #[arg(long)]
    pub archive: Option<PathBuf>,
    #[command(flatten)]
    pub arena: ArenaArgs,
}

/// What `knobel league export` saves.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The league's name.
    pub name: String,
    /// The file to write the archive to (JSON lines).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub arena: ArenaArgs,
}

/// The archive of league `name`, chunk by chunk; a league that has not ended is refused by
/// the arena, and said so here.
async fn archive_chunks(
    arena: &ArenaArgs,
    name: &str,
    verb: &str,
) -> Result<tonic::Streaming<pb::LeagueArchiveChunk>> {
    let mut client = arena_client(arena).await?;
    match client
        .export_league(pb::ExportLeagueRequest {
            league: name.to_owned(),
        })
        .await
    {
        Ok(stream) => Ok(stream.into_inner()),
        Err(status) if status.code() == tonic::Code::FailedPrecondition => bail!(
            "cannot {verb} league {name:?} before its dice secret is revealed: {}",
            status.message()
        ),
        Err(status) => bail!("{}", status.message()),
    }
}

/// `knobel league verify`.
pub async fn verify(args: VerifyArgs) -> Result<()> {
    let mut verifier = LineVerifier::default();
    let source = match (&args.name, &args.archive) {
        (_, Some(path)) => {
            let file = std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            for line in std::io::BufReader::new(file).lines() {
                let line = line.with_context(|| format!("cannot read {}", path.display()))?;
                verifier.line(&line)?;
            }
            path.display().to_string()
        }
        (Some(name), None) => {
            let mut chunks = archive_chunks(&args.arena, name, "verify").await?;
            let mut pending: Vec<u8> = Vec::new();
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk.map_err(|s| anyhow::anyhow!("{}", s.message()))?;
                pending.extend_from_slice(&chunk.data);
                feed_lines(&mut pending, &mut verifier)?;
            }
            format!("league {name:?} at {}", args.arena.arena)
        }
        (None, None) => bail!("name a league, or an archive with --archive FILE"),
    };
    let report = verifier.finish()?;
    println!("{}", verified(&source, &report));
    Ok(())
}

/// Checks every complete line in `pending` and keeps the rest.
fn feed_lines(pending: &mut Vec<u8>, verifier: &mut LineVerifier) -> Result<()> {
    while let Some(end) = pending.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = pending.drain(..=end).collect();
        let text = std::str::from_utf8(&line[..end]).context("the archive is not UTF-8 text")?;
        verifier.line(text)?;
    }
    Ok(())
}

/// The line `knobel league verify` prints for a verified archive.
fn verified(source: &str, report: &VerifyReport) -> String {
    format!(
        "verified {source}: the revealed dice secret matches the commitment published at \
         creation; {} scheduled matches made again from the league file and the secret; {} \
         logs replayed by the engine with the seeds the secret gives ({} throws recomputed), \
         every result as stored",
        report.scheduled, report.replayed, report.throws
    )
}

/// `knobel league export`.
pub async fn export(args: ExportArgs) -> Result<()> {
    let mut chunks = archive_chunks(&args.arena, &args.name, "export").await?;
    let partial = args.out.with_extension("partial");
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(&partial)
            .with_context(|| format!("cannot create {}", partial.display()))?,
    );
    let mut bytes = 0u64;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|s| anyhow::anyhow!("{}", s.message()))?;
        bytes += chunk.data.len() as u64;
        file.write_all(&chunk.data)
            .with_context(|| format!("cannot write {}", partial.display()))?;
    }
    file.flush()
        .with_context(|| format!("cannot write {}", partial.display()))?;
    drop(file);
    std::fs::rename(&partial, &args.out)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "saved the archive of league {} to {} ({bytes} bytes); check it with `knobel league \
         verify --archive {}`",
        args.name,
        args.out.display(),
        args.out.display()
    );
    Ok(())
}

/// The league's dice as `knobel league status` shows them.
pub fn dice_line(league: &pb::LeagueInfo) -> String {
    let mut line = format!(
        "dice: {}",
        if league.dice.is_empty() {
            "duplicate"
        } else {
            &league.dice
        }
    );
    if league.public_dice {
        line.push_str(", PUBLIC DICE (its seed is known: not for a contest)");
    }
    if !league.dice_commitment.is_empty() {
        line.push_str(&format!("; commitment {}", league.dice_commitment));
    }
    if !league.dice_secret.is_empty() {
        line.push_str(&format!(
            "; secret {} (verify with `knobel league verify {}`)",
            league.dice_secret, league.name
        ));
    }
    line
}
