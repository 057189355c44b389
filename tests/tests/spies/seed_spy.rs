//! The seed spy: everything the first attack of issue 22 did. While the league runs it reads
//! the log of every finished match that the arena serves (GetMatchLog and StreamMatchLog,
//! no token), and from every seed it obtains it
//!
//! 1. assumes that the other seat orders of the same table share it (duplicate sets);
//! 2. runs the set-seed chain backwards to candidate league seeds, and from those forwards
//!    to every set seed of the league;
//! 3. also tries league seed 1 (the default of a league file without `seed` before
//!    issue 22).
//!
//! In each of its own matches it picks the candidate whose dice give the public opening
//! throw-off, and from it predicts every die it has not seen: the other seats' dice under
//! the cup and blind throws, and its own rerolls before it makes them. It also reads the
//! public record of every finished match (GetMatchRecord) and remembers the dice it shows
//! per set, as the memory spy does with its own streams: where no seed is found, a match
//! whose throw-off a record showed is predicted from that record.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use knobel_engine::{DiceKey, Game, MatchLog, PublicRecord};
use knobel_proto::v1 as pb;
use pb::arena_client::ArenaClient;
use tonic::transport::Channel;

use super::dice::{league_seeds_behind, set_seed, throw_faces};
use super::memory_spy::{Fingerprint, SetMemory, fingerprint};
use super::play::Intel;
use super::table::TableView;

/// The tables per game and repetitions the chain is run over: more than the test's leagues
/// have (at most 10 tables per game, one repetition).
const TABLES: u64 = 32;
const REPETITIONS: u64 = 4;

/// The league seed of every league file without `seed` before issue 22.
const DEFAULT_LEAGUE_SEED: u64 = 1;

/// How soon a log the arena refused is asked for again.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// What the seed spy found out, for the test to check.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    /// Per RPC, how often each status answered it while the league ran ("OK": served).
    pub answers: BTreeMap<&'static str, BTreeMap<String, u32>>,
    /// The same for answers that may have come after the league had ended.
    pub answers_at_the_end: BTreeMap<&'static str, BTreeMap<String, u32>>,
    /// Seeds obtained while the league was still running (it was running after the
    /// answer came).
    pub seeds_while_running: u32,
    /// Distinct seeds obtained.
    pub seeds: usize,
    /// The spy's matches whose throw-off it matched to a candidate seed, by where the
    /// seed came from.
    pub identified: BTreeMap<Source, usize>,
    /// The spy's matches (the league's, and pick-up matches once it has ended).
    pub matches: usize,
    /// Public records served.
    pub records: u32,
    /// Served public records that named a seed, or said that the full log was served,
    /// while the league was running.
    pub records_telling_too_much: u32,
    /// The spy's matches whose throw-off a public record had shown.
    pub recognised_from_records: usize,
    /// The league's info showed a commitment to its dice secret.
    pub commitment_published: bool,
    /// The league's info showed its dice secret while the league was running.
    pub secret_while_running: bool,
}

/// Where a candidate seed came from: the steps of the attack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// 1: a set seed read from a served log (the seat orders of a set share it).
    ReadFromLog,
    /// 2: a set seed of a league seed found by running the chain backwards.
    Chain,
    /// 3: a set seed of league seed 1.
    LeagueSeedOne,
}

/// The seed spy's knowledge, shared by its streams and its log reader.
#[derive(Default)]
pub struct SeedSpy {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The dice of public records, per set.
    records: SetMemory,
    /// The sets of the spy's matches.
    fingerprints: HashMap<String, Fingerprint>,
    /// Set seeds read from served logs.
    set_seeds: BTreeSet<u64>,
    /// Candidate league seeds, with how many distinct set seeds led back to each.
    league_seeds: HashMap<u64, usize>,
    /// The seed picked for each of the spy's matches.
    identified: HashMap<String, u64>,
    findings: Findings,
}

/// The matches whose log and record the spy has been served.
#[derive(Default)]
struct Served {
    logs: BTreeSet<String>,
    records: BTreeSet<String>,
}

/// What one pass over the finished matches was answered.
#[derive(Default)]
struct Batch {
    /// Per call: the RPC and its status ("OK" if served).
    answers: Vec<(&'static str, String)>,
    /// Seeds read from served logs.
    seeds: Vec<u64>,
    /// Served public records, by match id.
    records: Vec<(String, pb::MatchRecordResponse)>,
}

impl Batch {
    /// Asks for match `id`'s log (GetMatchLog and StreamMatchLog) and public record
    /// (GetMatchRecord), whichever has not been served yet.
    async fn ask(&mut self, client: &mut ArenaClient<Channel>, id: &str, served: &mut Served) {
        let request = pb::GetMatchLogRequest {
            match_id: id.to_owned(),
        };
        if !served.logs.contains(id) {
            let whole = client.get_match_log(request.clone()).await;
            let whole = self.answered("GetMatchLog", whole.map(|r| r.into_inner().log_json));
            let streamed = stream_log(client, request.clone()).await;
            let streamed = self.answered("StreamMatchLog", streamed);
            if let Some(json) = whole.or(streamed) {
                let log = MatchLog::from_json(&json).expect("a served log reads");
                self.seeds.push(log.seed);
                served.logs.insert(id.to_owned());
            }
        }
        if !served.records.contains(id) {
            let record = client.get_match_record(request).await;
            if let Some(record) = self.answered("GetMatchRecord", record.map(|r| r.into_inner())) {
                self.records.push((id.to_owned(), record));
                served.records.insert(id.to_owned());
            }
        }
    }

    /// Notes how `rpc` answered; the answer if it was served.
    fn answered<T>(&mut self, rpc: &'static str, answer: Result<T, tonic::Status>) -> Option<T> {
        let status = match &answer {
            Ok(_) => "OK".to_owned(),
            Err(status) => format!("{:?}", status.code()),
        };
        self.answers.push((rpc, status));
        answer.ok()
    }
}

impl SeedSpy {
    /// What it found out so far.
    pub fn findings(&self) -> Findings {
        self.state.lock().unwrap().findings.clone()
    }

    /// Reads every finished match's log and public record while league `league` runs;
    /// returns once it has ended.
    pub async fn read_served_logs(&self, url: &str, league: &str) {
        let channel = Channel::from_shared(url.to_owned())
            .expect("valid url")
            .connect()
            .await
            .expect("connect to the arena");
        let mut client = ArenaClient::new(channel);
        let mut asked: HashMap<String, Instant> = HashMap::new();
        let mut served = Served::default();
        while !self.league_ended(&mut client, league).await {
            let mut batch = Batch::default();
            for id in finished_matches(&mut client).await {
                let due = asked.get(&id).is_none_or(|at| at.elapsed() >= RETRY_AFTER);
                if due && !(served.logs.contains(&id) && served.records.contains(&id)) {
                    asked.insert(id.clone(), Instant::now());
                    batch.ask(&mut client, &id, &mut served).await;
                }
            }
            // Answers count as given while the league ran only if it still runs after them.
            let running = !self.league_ended(&mut client, league).await;
            self.take_in(batch, running);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Whether the league has ended; notes what its public info says of its dice secret.
    async fn league_ended(&self, client: &mut ArenaClient<Channel>, league: &str) -> bool {
        let info = league_info(client, league).await;
        let ended = has_ended(&info);
        let mut state = self.state.lock().unwrap();
        state.findings.commitment_published |= !info.dice_commitment.is_empty();
        state.findings.secret_while_running |= !ended && !info.dice_secret.is_empty();
        ended
    }

    /// Takes in what one pass over the finished matches was served.
    fn take_in(&self, batch: Batch, while_running: bool) {
        for seed in batch.seeds {
            self.learn_seed(seed, while_running);
        }
        for (id, record) in batch.records {
            self.learn_record(&id, record, while_running);
        }
        let mut state = self.state.lock().unwrap();
        let answers = if while_running {
            &mut state.findings.answers
        } else {
            &mut state.findings.answers_at_the_end
        };
        for (rpc, status) in batch.answers {
            *answers.entry(rpc).or_default().entry(status).or_default() += 1;
        }
    }

    /// Remembers the dice a public record shows, under its set; notes whether it told more
    /// than a record may while the league runs.
    fn learn_record(&self, id: &str, record: pb::MatchRecordResponse, while_running: bool) {
        let json: serde_json::Value =
            serde_json::from_str(&record.record_json).expect("a record is JSON");
        let too_much = json.get("seed").is_some() || record.full_log_served;
        let record: PublicRecord = serde_json::from_value(json).expect("a public record reads");
        let mut view = TableView::spectator(id.to_owned(), record.rules.game(), record.seats);
        for event in &record.events {
            view.apply(event);
        }
        let mut state = self.state.lock().unwrap();
        state.findings.records += 1;
        state.findings.records_telling_too_much += u32::from(too_much && while_running);
        state.records.file_table(&view);
    }

    /// Steps 1 and 2: a new set seed, and the league seeds it leads back to.
    fn learn_seed(&self, seed: u64, while_running: bool) {
        let mut state = self.state.lock().unwrap();
        state.findings.seeds_while_running += u32::from(while_running);
        if !state.set_seeds.insert(seed) {
            return;
        }
        state.findings.seeds = state.set_seeds.len();
        for league_seed in league_seeds_behind(seed, TABLES, REPETITIONS) {
            *state.league_seeds.entry(league_seed).or_default() += 1;
        }
    }

    /// Every seed the spy's match of `game` may have been played from: the set seeds read,
    /// every set seed of the best-supported candidate league seeds, and of league seed 1.
    fn candidate_seeds(state: &State, game: Game) -> Vec<(u64, Source)> {
        let best = state.league_seeds.values().copied().max().unwrap_or(0);
        let league_seeds: Vec<u64> = state
            .league_seeds
            .iter()
            .filter(|&(_, &support)| support == best)
            .map(|(&seed, _)| seed)
            .collect();
        let league_seeds = league_seeds
            .into_iter()
            .map(|seed| (seed, Source::Chain))
            .chain([(DEFAULT_LEAGUE_SEED, Source::LeagueSeedOne)]);
        let game = Game::ALL.iter().position(|&g| g == game).expect("a game") as u64;
        let read = state
            .set_seeds
            .iter()
            .map(|&seed| (seed, Source::ReadFromLog));
        let mut seeds: Vec<(u64, Source)> = read.collect();
        for (league_seed, source) in league_seeds {
            for table in 0..TABLES {
                for repetition in 0..REPETITIONS {
                    seeds.push((set_seed(league_seed, game, table, repetition), source));
                }
            }
        }
        seeds
    }
}

/// The seed among `candidates` whose dice give the throw-off's first attempt.
fn identify_seed(candidates: &[(u64, Source)], throw_off: &[[u8; 3]]) -> Option<(u64, Source)> {
    candidates.iter().copied().find(|&(seed, _)| {
        throw_off
            .iter()
            .enumerate()
            .all(|(seat, dice)| throw_faces(seed, seat as u8, 0, 1) == *dice)
    })
}

impl Intel for SeedSpy {
    fn at_throw_off(&self, table: &TableView) {
        let throw_off = table.throw_off().expect("the throw-off is in");
        let fingerprint = fingerprint(table).expect("the throw-off is in");
        let mut state = self.state.lock().unwrap();
        state.findings.matches += 1;
        state.findings.recognised_from_records += usize::from(state.records.knows(&fingerprint));
        state
            .fingerprints
            .insert(table.match_id.clone(), fingerprint);
        let candidates = SeedSpy::candidate_seeds(&state, table.game);
        if let Some((seed, source)) = identify_seed(&candidates, &throw_off) {
            state.identified.insert(table.match_id.clone(), seed);
            *state.findings.identified.entry(source).or_default() += 1;
        }
    }

    fn saw(&self, _table: &TableView, _key: DiceKey, _face: u8) {}

    fn predict(&self, table: &TableView, key: DiceKey) -> Option<u8> {
        let state = self.state.lock().unwrap();
        if let Some(seed) = state.identified.get(&table.match_id) {
            let faces = throw_faces(*seed, key.seat.0, key.round, key.throw);
            return Some(faces[usize::from(key.slot)]);
        }
        let fingerprint = state.fingerprints.get(&table.match_id)?;
        state.records.recall(fingerprint, &key)
    }
}

/// League `league`'s public info (GetStandings, no token).
pub async fn league_info(client: &mut ArenaClient<Channel>, league: &str) -> pb::LeagueInfo {
    let standings = client
        .get_standings(pb::GetStandingsRequest {
            league: league.to_owned(),
        })
        .await
        .expect("the league's standings")
        .into_inner();
    standings.league.expect("league info")
}

/// Whether a league has finished or been cancelled.
pub fn has_ended(info: &pb::LeagueInfo) -> bool {
    let status = info.status;
    status == pb::LeagueStatus::Finished as i32 || status == pb::LeagueStatus::Cancelled as i32
}

/// The ids of every finished match (ListMatches, every page).
async fn finished_matches(client: &mut ArenaClient<Channel>) -> Vec<String> {
    let filter = pb::ListMatchesRequest {
        status: pb::MatchStatus::Finished as i32,
        ..Default::default()
    };
    let matches = knobel_e2e::every_match(client, filter).await;
    matches.into_iter().map(|m| m.match_id).collect()
}

/// A match's log by StreamMatchLog: every chunk's data, joined.
async fn stream_log(
    client: &mut ArenaClient<Channel>,
    request: pb::GetMatchLogRequest,
) -> Result<String, tonic::Status> {
    let mut chunks = client.stream_match_log(request).await?.into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = chunks.message().await? {
        bytes.extend_from_slice(&chunk.data);
    }
    Ok(String::from_utf8(bytes).expect("a log is UTF-8"))
}
